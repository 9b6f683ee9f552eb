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


class SortAndLdl(torch.nn.Module):
    """sort on the chip (select.h); the LDL^T factorisation (LAPACK's sytrf, Bunch-Kaufman
    pivoting) has no lowering anywhere: the host runs linalg_ldl_factor_ex."""

    def forward(self, a, b):
        v, i = torch.sort(a, dim=-1)
        ld, pivots, info = torch.linalg.ldl_factor_ex(b)
        return v * 2, i, ld * 3 + 1, pivots, info


def _inputs():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(8, 16, generator=g).to(torch.float16)
    b = torch.randn(8, 8, generator=g)
    return a, b + b.mT


def test_refused_without_the_option_which_the_error_names():
    with pytest.raises(Exception) as e:
        spyre_sim.run(SortAndLdl(), _inputs(), arch="tiny", timing_only=True)
    msg = str(e.value)
    assert "linalg_ldl_factor_ex" in msg and "compiler.host_fallback=on" in msg, msg


def test_host_calls_compute_eagers_values_and_cost_the_same_cycles_timing_only():
    r = spyre_sim.run(SortAndLdl(), _inputs(), arch="tiny", set=HOST, cache=False)
    assert r.summary["outputs_match"] is True, r.summary
    want = SortAndLdl()(*_inputs())
    assert torch.equal(r.outputs[1], want[1])  # the chip's sort indices
    torch.testing.assert_close(r.outputs[2], want[2], rtol=1e-5, atol=1e-5)  # the host's LD
    assert torch.equal(r.outputs[3], want[3]) and torch.equal(r.outputs[4], want[4])

    calls = [k["host_call"] for rep in r.reports for k in rep["kernels"] if "host_call" in k]
    assert [c["op"] for c in calls] == ["aten.linalg_ldl_factor_ex.default"]
    ldl = calls[0]
    assert ldl["in_bytes"] == 8 * 8 * 4  # b, fp32
    assert ldl["out_bytes"] == 8 * 8 * 4 + 8 * 4 + 4  # LD, the int32 pivots and info
    host = r.summary["host"]
    assert host["calls"] == 1
    assert host["in_bytes"] == sum(c["in_bytes"] for c in calls)
    assert host["out_bytes"] == sum(c["out_bytes"] for c in calls)
    assert 0 < host["busy_cycles"] < r.summary["cycles"]

    t = spyre_sim.run(SortAndLdl(), _inputs(), arch="tiny", set=HOST, timing_only=True,
                      cache=False)
    assert t.summary["cycles"] == r.summary["cycles"]
    assert t.summary["host"] == host

    # A slower host link costs the calls' bytes at the new rate: the host's busy cycles grow by
    # exactly that, and the run by at least it (the kernels after the call start at another
    # cycle, and their DRAM timing depends on when).
    slow = spyre_sim.run(SortAndLdl(), _inputs(), arch="tiny", timing_only=True, cache=False,
                         set=HOST + ["host.link_gbps=0.026"])  # 1/2000 of 52 GB/s
    extra_ns = (host["in_bytes"] + host["out_bytes"]) * (1 / 0.026 - 1 / 52)
    clock = r.summary["clock_ghz"]
    extra = slow.summary["host"]["busy_cycles"] - host["busy_cycles"]
    assert extra == pytest.approx(extra_ns * clock, abs=2)
    assert slow.summary["cycles"] - t.summary["cycles"] >= extra


def test_the_cli_runs_a_host_fallback_and_prints_its_line(cli, tmp_path):
    model = tmp_path / "ldl.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.linalg.ldl_factor_ex(x).LD * 2\n"
        "model = M()\n"
        "example_inputs = (torch.randn(8, 8),)\n")
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
    """linalg.pinv takes its tolerance as a keyword tensor (one of more than JACOBI_MAX_N
    columns stays whole, decomp_spectral.py); ldl_solve of empty operands; prims.normal is a
    prims overload."""
    def pinv(a, tol):
        return torch.linalg.pinv(a, atol=tol, rtol=None) * 2

    a = torch.randn(20, 17, generator=torch.Generator().manual_seed(1))
    tol = torch.tensor(0.05)
    r = spyre_sim.run(pinv, (a, tol), arch="tiny", set=HOST, cache=False)
    assert r.summary["outputs_match"] is True, r.summary
    assert torch.equal(r.outputs, pinv(a, tol))
    calls = [k["host_call"] for rep in r.reports for k in rep["kernels"] if "host_call" in k]
    assert [(c["op"], c["kwargs"]) for c in calls] == [
        ("aten.linalg_pinv.atol_rtol_tensor", {"atol": {"input": 1}})]

    # Empty operands reach the host (ldl_solve runs nowhere else); the determinant of a
    # 0 x 0 matrix, eager's 1 from an empty operand, the chip computes (decomp_lu.py).
    empty = (torch.zeros(0, 0), torch.zeros(0, dtype=torch.int32), torch.zeros(0, 2))
    r = spyre_sim.run(torch.linalg.ldl_solve, empty, arch="tiny", set=HOST, cache=False)
    assert r.outputs.shape == (0, 2) and r.summary["host"]["calls"] == 1
    with pytest.raises(Exception, match="ldl_solve.default.*host_fallback=on runs it"):
        spyre_sim.run(torch.linalg.ldl_solve, empty, arch="tiny", cache=False)
    r = spyre_sim.run(torch.linalg.det, (torch.zeros(0, 0),), arch="tiny", cache=False)
    assert r.outputs.item() == 1.0

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


class ValueSizedResults(torch.nn.Module):
    """nonzero and unique: result sizes the input's values decide (Inductor's unbacked u0, u1),
    around a kernel on the chip."""

    def forward(self, x):
        y = x * 2
        vals, counts = torch.unique(y, return_counts=True)
        return torch.nonzero(y > 1), vals, counts


# Dynamo breaks the graph at an op whose result size depends on values (the op then runs
# eagerly between two compiled graphs) unless told to capture it (or under fullgraph=True).
capture_value_sized = torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True)


@capture_value_sized
def test_sizes_that_depend_on_values_are_found_by_the_host():
    x = torch.tensor([[0.0, 1, 2, 2], [3, 0, 5, 1]], dtype=torch.float16)
    want = ValueSizedResults()(x)
    r = spyre_sim.run(ValueSizedResults(), (x,), arch="tiny", set=HOST, cache=False)
    assert len(r.reports) == 1  # one graph: nothing ran outside it
    assert r.summary["outputs_match"] is True, r.summary
    assert [list(o.shape) for o in r.outputs] == [[6, 2], [5], [5]]
    for got, exp in zip(r.outputs, want):
        assert torch.equal(got, exp), (got, exp)
    calls = {k["host_call"]["op"]: k["host_call"] for rep in r.reports for k in rep["kernels"]
             if "host_call" in k}
    nz = calls["aten.nonzero.default"]["outputs"][0]
    # Planned for the bound (every element nonzero), column-major as torch's nonzero lays it.
    assert nz["size"] == [8, 2] and nz["stride"] == [1, 8]
    assert nz["symbolic"]["size"][1] == 2 and nz["symbolic"]["stride"][0] == 1
    assert calls["aten.nonzero.default"]["out_bytes"] == 8 * 2 * 8

    # Timing-only computes nothing: the same cycles, and outputs of the bound's size.
    t = spyre_sim.run(ValueSizedResults(), (x,), arch="tiny", set=HOST, timing_only=True,
                      cache=False)
    assert t.summary["cycles"] == r.summary["cycles"]
    assert [list(o.shape) for o in t.outputs] == [[8, 2], [8], [8]]


@capture_value_sized
def test_a_value_dependent_size_refuses_clearly_where_it_cannot_run():
    x = torch.tensor([[0.0, 1, 2], [3, 0, 5]], dtype=torch.float16)
    with pytest.raises(Exception, match=r"aten.nonzero.default.*size u0, which depends on the "
                                        r"values of a tensor.*host_fallback=on runs the op"):
        spyre_sim.run(torch.nonzero, (x,), arch="tiny", timing_only=True, cache=False)

    def first_row_plus_one(t):  # a chip kernel reading nonzero's result
        return torch.nonzero(t)[0] + 1

    with pytest.raises(Exception, match=r"aten.add.Tensor.*buffer buf1 has the size u0.*every "
                                        r"size known at compile time"):
        spyre_sim.run(first_row_plus_one, (x,), arch="tiny", set=HOST, timing_only=True,
                      cache=False)

    def bins(t):  # no upper bound: nothing to plan a buffer for
        return torch.bincount(t)

    with pytest.raises(Exception, match="has no upper bound"):
        spyre_sim.run(bins, (torch.tensor([1, 2, 5], dtype=torch.int32),), arch="tiny", set=HOST,
                      timing_only=True, cache=False)


def test_the_host_lays_out_a_value_sized_result_within_its_bound():
    dram = memoryview(bytearray(256))
    x = {"dtype": "f32", "size": [2, 2], "stride": [2, 1], "offset": 0, "dram_addr": 0}
    out = {"dtype": "i64", "size": [4, 2], "stride": [1, 4], "offset": 0, "dram_addr": 64,
           "index": [], "symbolic": {"size": ["u0", 2], "stride": [1, "u0"], "offset": 0,
                                     "bounds": {"u0": [0, 4]}}}
    call = {"op": "aten.nonzero.default", "inputs": [x], "args": [{"input": 0}], "outputs": [out]}
    torch.frombuffer(dram, dtype=torch.float32, count=4).copy_(torch.tensor([0.0, 7, 8, 0]))
    symbols = {}
    host_fallback.execute(call, dram, symbols)
    assert symbols == {"u0": 2}
    # [[0, 1], [1, 0]] column-major at the real size: rows 0 1, then columns 1 0.
    assert torch.frombuffer(dram, dtype=torch.int64, count=4, offset=64).tolist() == [0, 1, 1, 0]
    # A later call reading that result sees it at its real size.
    add = {"op": "aten.add.Tensor", "inputs": [dict(out), dict(out)],
           "args": [{"input": 0}, {"input": 1}],
           "outputs": [{**out, "dram_addr": 128, "symbolic": out["symbolic"]}]}
    host_fallback.execute(add, dram, symbols)
    assert torch.frombuffer(dram, dtype=torch.int64, count=4, offset=128).tolist() == [0, 2, 2, 0]

    narrow = {**out, "symbolic": {**out["symbolic"], "bounds": {"u0": [0, 1]}}}
    with pytest.raises(host_fallback.HostCallError, match=r"size u0 = 2 is outside \[0, 1\]"):
        host_fallback.execute({**call, "outputs": [narrow]}, dram, {})
    with pytest.raises(host_fallback.HostCallError, match="the size u7 is not known"):
        host_fallback.execute({**add, "inputs": [{**out, "symbolic": {**out["symbolic"],
                                                                       "size": ["u7", 2]}}] * 2},
                              dram, {})
    with pytest.raises(host_fallback.HostCallError, match="size expression"):
        host_fallback.execute({**add, "inputs": [{**out, "symbolic": {**out["symbolic"],
                                                                       "size": ["__import__", 2]}}] * 2},
                              dram, symbols)


def test_a_model_dynamo_runs_eagerly_is_reported_with_dynamos_reason():
    """nonzero without capture_dynamic_output_shape_ops: Dynamo breaks the graph there and the
    model runs eagerly; the run says so instead of only that nothing was simulated."""
    x = torch.tensor([[1.0, 0.0], [0.0, 3.0]], dtype=torch.float16)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=False):
        with pytest.raises(Exception, match="nothing was simulated .*Dynamo broke the graph and "
                                            "ran the model eagerly .*Dynamic shape operator"):
            spyre_sim.run(torch.nonzero, (x,), arch="tiny", cache=False, set=HOST)
