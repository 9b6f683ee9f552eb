"""PyTorch's OpInfo database (every op of `op_db`) through the spyre_sim backend, against the
stored expectation tests/opinfo/expected.json (tests/opinfo/opinfo.py says how it is made).

The suite runs each op's first sample in its first chip dtype (about 700 compilations, two
worker processes); `make test-opinfo` runs every stored sample in every dtype."""

import importlib.util
import json

import pytest

from conftest import ROOT

spec = importlib.util.spec_from_file_location("opinfo", ROOT / "tests" / "opinfo" / "opinfo.py")
opinfo = importlib.util.module_from_spec(spec)
spec.loader.exec_module(opinfo)


@pytest.fixture(scope="module")
def expected():
    path = opinfo.EXPECTED
    if not path.exists():
        pytest.fail(f"{path} is missing: run tests/opinfo/opinfo.py -j 2 --write")
    return opinfo.load_expected(path)


def test_the_expectation_has_no_wrong_result_and_no_internal_error(expected):
    assert set(expected["ops"]) == set(opinfo._ops()), "op_db and the expectation differ"
    bad = [f"{k} [{d}]: {r['outcome']}: {r['reason'].splitlines()[0]}"
           for k, res in expected["ops"].items() for d, r in res.items()
           if r["outcome"] in ("wrong", "internal")]
    assert not bad, "\n".join(bad)
    # Every refusal names the op (the node's ATen op or Dynamo's reason for not tracing it).
    for key, res in expected["ops"].items():
        for dtype, r in res.items():
            if r["outcome"] == "refused":
                assert r["reason"], f"{key} [{dtype}] refused without a reason"


def test_every_op_first_sample_gives_the_stored_outcome(expected, capsys):
    keys = sorted(expected["ops"])
    results = opinfo.run(keys, samples=1, jobs=2, dtypes=1)
    c = opinfo.counts(results)
    with capsys.disabled():
        print(f"\nOpInfo, first sample of {len(results)} ops: "
              + ", ".join(f"{n} {o}" for o, n in c["ops"].items()))
    diffs = opinfo.differences(results, expected)
    assert not diffs, (f"{len(diffs)} outcome(s) differ from tests/opinfo/expected.json "
                       "(rerun tests/opinfo/opinfo.py --ops ... --write and review):\n"
                       + "\n".join(diffs[:60]))
    assert c["ops"]["wrong"] == 0 and c["ops"]["internal"] == 0


def test_the_ops_the_device_refuses_give_their_stored_outcome_with_host_fallback(expected,
                                                                                 capsys):
    """With compiler.host_fallback=on: the device's refusals, first sample, against
    tests/opinfo/expected_host_fallback.json (`opinfo.py --host-fallback`)."""
    path = opinfo.EXPECTED_HOST
    if not path.exists():
        pytest.fail(f"{path} is missing: run tests/opinfo/opinfo.py -j 2 --host-fallback --write")
    host = opinfo.load_expected(path)
    keys = opinfo.refused_on_device()
    assert sorted(host["ops"]) == keys, "the host-fallback expectation covers other ops"
    results = opinfo.run(keys, samples=1, jobs=2, dtypes=1, host_fallback=True)
    c = opinfo.counts(results)
    with capsys.disabled():
        print(f"\nOpInfo with host fallback, first sample of the {len(keys)} ops the device "
              "refuses: " + ", ".join(f"{n} {o}" for o, n in c["ops"].items()))
    diffs = opinfo.differences(results, host)
    assert not diffs, (f"{len(diffs)} outcome(s) differ from {path.name} (rerun "
                       "tests/opinfo/opinfo.py --host-fallback --ops ... --write and review):\n"
                       + "\n".join(diffs[:60]))
    assert c["ops"]["wrong"] == 0 and c["ops"]["internal"] == 0


def test_a_changed_outcome_is_reported(expected):
    """The comparison fails on a flipped outcome and on another refusal reason."""
    key = "add"
    res = json.loads(json.dumps(expected["ops"][key]))
    dtype = next(iter(res))
    res[dtype]["samples"][0] = "refused: SpyreError: made up"
    assert opinfo.differences({key: res}, expected)
    refused = next(k for k, r in expected["ops"].items()
                   if next(iter(r.values()))["outcome"] == "refused"
                   and next(iter(r.values()))["samples"])
    res = json.loads(json.dumps(expected["ops"][refused]))
    first = next(iter(res))
    res[first]["samples"][0] = "refused: SpyreError: another reason"
    assert opinfo.differences({refused: res}, expected)
    assert not opinfo.differences({refused: expected["ops"][refused]}, expected)


def test_dtype_refusals_are_told_apart_from_other_refusals():
    """The coverage figure's denominator leaves out the ops refused for a dtype the chip lacks;
    an op with any other refusal stays in it."""
    def res(*reasons):
        return {f"d{i}": {"outcome": "refused" if r else "pass", "reason": r, "samples": []}
                for i, r in enumerate(reasons)}

    results = {
        "fft": res("sample 0: CaptureError: a complex64 tensor in the graph: the chip has no "
                   "complex dtype (FFTs and complex arithmetic do not run on it)"),
        "double": res("sample 0: SpyreError: <graph_0>: buffer buf0: field 'dtype': dtype "
                      "'float64': the chip has no such type (it has float16, ...)", ""),
        "cuda_only": res("no CPU kernel in any dtype (a CUDA-only op): no eager result to "
                         "compare with"),
        "mixed": res("sample 0: CaptureError: a complex64 tensor in the graph: the chip has no "
                     "complex dtype", "sample 1: SpyreError: unsupported op"),
        "linalg": res("sample 0: SpyreError: node op0 (aten.linalg_qr.default): unsupported op"),
        "add": res(""),
    }
    assert opinfo.dtype_refused(results) == ["cuda_only", "double", "fft"]


def test_a_crashing_worker_is_an_internal_error(monkeypatch):
    """A worker that dies (a segfault in the simulator, say) is recorded against its op."""
    monkeypatch.setenv("SPYRE_OPINFO_CRASH", "abs")
    results = opinfo.run(["abs", "neg"], samples=1, jobs=1, dtypes=1)
    assert results["abs"]["?"]["outcome"] == "internal"
    assert "status" in results["abs"]["?"]["reason"]
    assert next(iter(results["neg"].values()))["outcome"] == "pass"
