"""Host fallback (`--set compiler.host_fallback=on`, compiler/host_call.h): an op that neither
Inductor nor spyre-sim lowers runs on the host as one `host.call`, its inputs and outputs
crossing the host link. Against eager PyTorch on "tiny": functional results, identical cycles
timing-only, the host stats and summary line, the CLI, and the refusal without the option."""

import json

import pytest
import torch

import spyre_sim
from spyre_sim import host_fallback

HOST = ["compiler.host_fallback=on"]


class SortAndInverse(torch.nn.Module):
    """sort on the chip (select.h); linalg.inv has no lowering anywhere: the host runs
    linalg_inv_ex and its _linalg_check_errors."""

    def forward(self, a, b):
        v, i = torch.sort(a, dim=-1)
        return v * 2, i, torch.linalg.inv(b) * 3 + 1


def _inputs():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(8, 16, generator=g).to(torch.float16)
    b = torch.randn(8, 8, generator=g) + 8 * torch.diag(torch.ones(8))
    return a, b


def test_refused_without_the_option_which_the_error_names():
    with pytest.raises(Exception) as e:
        spyre_sim.run(SortAndInverse(), _inputs(), arch="tiny", timing_only=True)
    msg = str(e.value)
    assert "linalg_inv_ex" in msg and "compiler.host_fallback=on" in msg, msg


def test_host_calls_compute_eagers_values_and_cost_the_same_cycles_timing_only():
    r = spyre_sim.run(SortAndInverse(), _inputs(), arch="tiny", set=HOST, cache=False)
    assert r.summary["outputs_match"] is True, r.summary
    want = SortAndInverse()(*_inputs())
    assert torch.equal(r.outputs[1], want[1])  # the chip's sort indices
    torch.testing.assert_close(r.outputs[2], want[2], rtol=1e-5, atol=1e-5)  # the host's inverse

    calls = [k["host_call"] for rep in r.reports for k in rep["kernels"] if "host_call" in k]
    assert [c["op"] for c in calls] == ["aten.linalg_inv_ex.default",
                                        "aten._linalg_check_errors.default"]
    inv = calls[0]
    assert inv["in_bytes"] == 8 * 8 * 4  # b, fp32
    assert inv["out_bytes"] == 8 * 8 * 4 + 4  # the inverse and its int32 info
    host = r.summary["host"]
    assert host["calls"] == 2
    assert host["in_bytes"] == sum(c["in_bytes"] for c in calls)
    assert host["out_bytes"] == sum(c["out_bytes"] for c in calls)
    assert 0 < host["busy_cycles"] < r.summary["cycles"]

    t = spyre_sim.run(SortAndInverse(), _inputs(), arch="tiny", set=HOST, timing_only=True,
                      cache=False)
    assert t.summary["cycles"] == r.summary["cycles"]
    assert t.summary["host"] == host

    # A slower host link costs the calls' bytes at the new rate and nothing else.
    slow = spyre_sim.run(SortAndInverse(), _inputs(), arch="tiny", timing_only=True, cache=False,
                         set=HOST + ["host.link_gbps=0.026"])  # 1/2000 of 52 GB/s
    extra_ns = (host["in_bytes"] + host["out_bytes"]) * (1 / 0.026 - 1 / 52)
    clock = r.summary["clock_ghz"]
    assert slow.summary["cycles"] - t.summary["cycles"] == pytest.approx(extra_ns * clock, abs=8)


def test_the_cli_runs_a_host_fallback_and_prints_its_line(cli, tmp_path):
    model = tmp_path / "mode.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.mode(x, 0).values * 2\n"
        "model = M()\n"
        "example_inputs = (torch.randn(8, 8).to(torch.float16),)\n")
    r = cli("run", model, "--arch", "tiny", "--set", HOST[0], "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "outputs match     yes" in r.stdout, r.stdout
    assert "host fallbacks    1 calls" in r.stdout, r.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["host"]["calls"] == 1


def test_a_call_the_host_cannot_run_names_its_op():
    dram = memoryview(bytearray(64))
    with pytest.raises(host_fallback.HostCallError, match="aten.no_such_op.default"):
        host_fallback.execute({"op": "aten.no_such_op.default", "inputs": [], "args": []}, dram)
    t = {"dtype": "f32", "size": [4], "stride": [1], "dram_addr": 0}
    with pytest.raises(host_fallback.HostCallError, match="aten.cholesky.default on the host"):
        host_fallback.execute({"op": "aten.cholesky.default", "inputs": [t], "args": [{"input": 0}],
                               "outputs": [t]}, dram)


def test_tensor_keyword_arguments_empty_operands_and_prims_reach_the_host():
    """segment_reduce takes its lengths as a keyword tensor; linalg.det of a 0 x 0 matrix has a
    result from an empty operand (eager's 1); prims.normal is a prims overload."""
    def segments(d, lengths):
        return torch.segment_reduce(d, "sum", lengths=lengths, axis=0, unsafe=False) * 2

    d = torch.randn(6, 3, generator=torch.Generator().manual_seed(1)).to(torch.float16)
    lengths = torch.tensor([2, 0, 4], dtype=torch.int32)
    r = spyre_sim.run(segments, (d, lengths), arch="tiny", set=HOST, cache=False)
    assert r.summary["outputs_match"] is True, r.summary
    assert torch.equal(r.outputs, segments(d, lengths))

    r = spyre_sim.run(torch.linalg.det, (torch.zeros(0, 0),), arch="tiny", set=HOST, cache=False)
    assert r.outputs.item() == 1.0
    with pytest.raises(Exception, match="_linalg_det.default.*host_fallback=on runs it"):
        spyre_sim.run(torch.linalg.det, (torch.zeros(0, 0),), arch="tiny", cache=False)

    dram = memoryview(bytearray(64))
    out = {"dtype": "f32", "size": [4], "stride": [1], "dram_addr": 0}
    host_fallback.execute({"op": "prims.fill.default", "inputs": [out], "args": [{"input": 0}, 3.0],
                           "outputs": [out]}, dram)
    assert torch.frombuffer(dram, dtype=torch.float32, count=4).tolist() == [3.0] * 4
    with pytest.raises(host_fallback.HostCallError, match="no such overload"):
        host_fallback.execute({"op": "no_such_namespace.nms.default", "inputs": [], "args": []},
                              dram)
    with pytest.raises(host_fallback.HostCallError, match="expected an overload NAMESPACE"):
        host_fallback.execute({"op": "aten.sort", "inputs": [], "args": []}, dram)


def test_dtype_list_and_infinite_arguments_take_the_schemas_types():
    """A dtype (ScalarType, which torch's type printer calls int), an optional list and an
    infinite float come back as what the schema expects."""
    dram = memoryview(bytearray(64))
    x = {"dtype": "f32", "size": [2, 2], "stride": [2, 1], "dram_addr": 0}
    out = {"dtype": "f32", "size": [2], "stride": [1], "dram_addr": 32}
    torch.frombuffer(dram, dtype=torch.float32, count=4).copy_(torch.tensor([1.0, 2, 3, 4]))
    host_fallback.execute({"op": "aten.sum.dim_IntList", "inputs": [x],
                           "args": [{"input": 0}, [1], False],
                           "kwargs": {"dtype": "torch.float32"}, "outputs": [out]}, dram)
    assert torch.frombuffer(dram, dtype=torch.float32, count=2, offset=32).tolist() == [3.0, 7.0]
    host_fallback.execute({"op": "aten.clamp.default", "inputs": [x],
                           "args": [{"input": 0}, "-inf", 2.5], "outputs": [x]}, dram)
    assert torch.frombuffer(dram, dtype=torch.float32, count=4).tolist() == [1.0, 2.0, 2.5, 2.5]
