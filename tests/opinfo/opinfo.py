"""PyTorch's OpInfo database through the spyre_sim backend, against a stored expectation.

Every op of `torch.testing._internal.common_methods_invocations.op_db` runs its samples, compiled
with the spyre_sim backend (one Dynamo graph, no graph break, on the "spyre" configuration) in
each dtype the chip has that the op supports on CPU, and is compared with eager PyTorch in fp32
on the same inputs (`spyre_sim.api.compare`). Each (op, dtype) ends in one outcome:

  pass      every sample compiled, ran on the simulated chip and matched eager
  refused   a sample was refused with a message (the reason is recorded)
  wrong     a sample ran and its outputs did not match eager
  internal  a sample failed with an exception that is not a refusal (a bug in spyre-sim)

`tests/opinfo/expected.json` stores the reviewed outcome (and reason) per op and dtype; the test
(tests/python/test_opinfo.py) fails when any outcome differs from it.

    .venv/bin/python tests/opinfo/opinfo.py [-j 2] [--ops add,sort] [--samples N] [--dtypes N]
                                            [--check | --write]

--samples N / --dtypes N run each op's first N samples / chip dtypes (default: all of them);
--check compares the outcomes with the expectation; --write stores them as the new one (a run
of some --ops updates only those; review the diff). `make test-opinfo` is --check on all.

--host-fallback compiles with `compiler.host_fallback=on` (what torch-spyre does with an op it
cannot compile: the host runs it between device kernels, compiler/host_call.h). It runs the ops
the device-only expectation refuses (an op that passes on the device has no host call to make),
against their own expectation, tests/opinfo/expected_host_fallback.json, and prints how many ops
pass on the device and how many more pass with host calls."""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import pathlib
import re
import sys
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXPECTED = pathlib.Path(__file__).with_name("expected.json")
EXPECTED_HOST = pathlib.Path(__file__).with_name("expected_host_fallback.json")
HOST_FALLBACK = ["compiler.host_fallback=on"]
# The compiler options every sample is compiled with (main() sets them; workers inherit them).
_sets: list[str] = []
OUTCOMES = ("pass", "refused", "wrong", "internal")
# Ops whose values are not a function of their inputs (uninitialised memory, random numbers):
# only the outputs' shapes and dtypes are compared.
UNDEFINED_VALUES = {
    "empty", "empty_like", "empty_permuted", "empty_strided", "new_empty", "new_empty_strided",
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial", "normal",
    "rand_like", "randint", "randint_like", "randn", "randn_like", "uniform",
    "nn.functional.alpha_dropout", "nn.functional.dropout", "nn.functional.dropout2d",
    "nn.functional.dropout3d", "nn.functional.feature_alpha_dropout", "nn.functional.rrelu"}


def _torch():
    import torch

    return torch


def chip_dtypes(op):
    """The dtypes an op runs in: the 16-bit floats the chip computes in that the op supports on
    CPU; else fp32; else the chip's integer types; else none (fp64/complex-only ops)."""
    torch = _torch()
    supported = op.supported_dtypes("cpu")
    floats = [d for d in (torch.float16, torch.bfloat16) if d in supported]
    if floats:
        return floats
    for group in ([torch.float32], [torch.int32], [torch.int8], [torch.bool]):
        if all(d in supported for d in group):
            return group
    return []


def op_key(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _ops():
    from torch.testing._internal.common_methods_invocations import op_db

    return {op_key(op): op for op in op_db}


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _is_refusal(exc) -> bool:
    """Our own, named refusals: the compiler's SpyreError, the capture's CaptureError, and
    Dynamo's own "cannot trace this as one graph" (data-dependent shapes, unsupported Python)."""
    from spyre_capture.errors import CaptureError
    from spyre_sim._core import core
    import torch._dynamo.exc as dexc

    refusals = (core.SpyreError, CaptureError, dexc.Unsupported, dexc.UserError)
    return isinstance(exc, refusals)


def _unwrap(exc):
    import torch._dynamo.exc as dexc

    while isinstance(exc, dexc.BackendCompilerFailed) and getattr(exc, "inner_exception", None):
        exc = exc.inner_exception
    return exc


_SOURCE = re.compile(r",? at [^,()]+:\d+")


def _reason(exc) -> str:
    """One line for the expectation file: the exception's first line, without the source line
    it names (this harness's own line number)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return _SOURCE.sub("", f"{type(exc).__name__}: {text}")[:300]


def _check_sample(op, sample, dtype):
    """(outcome, detail) of one sample."""
    torch = _torch()
    import torch.utils._pytree as pytree
    from spyre_sim import api, backend, session

    args = (sample.input, *sample.args)
    leaves, spec = pytree.tree_flatten((args, sample.kwargs))
    where = [i for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]
    tensors = [leaves[i] for i in where]

    def fn(*ts):
        vals = list(leaves)
        for i, t in zip(where, ts):
            vals[i] = t
        a, kw = pytree.tree_unflatten(vals, spec)
        return op.op(*a, **kw)

    try:
        with torch.no_grad():
            expected = fn(*api._upcast(tuple(tensors)))
    except Exception as e:  # the sample is invalid in fp32 eager: nothing to compare against
        return "pass", f"eager fp32 rejects the sample ({_reason(e)}); not compared"
    sess = session.Session(sets=_sets)
    reached = []  # whether Dynamo handed a graph to the backend

    def spyre(gm, example_inputs):
        reached.append(True)
        return backend.spyre_sim_backend(gm, example_inputs)

    torch._dynamo.reset()
    try:
        with session.active(sess), torch.no_grad(), _seed_wrapper_unwrapped(op):
            compiled = torch.compile(fn, backend=spyre, dynamic=False, fullgraph=True)
            actual = compiled(*[t.clone() for t in tensors])
    except Exception as e:  # noqa: BLE001 - every failure is classified below
        inner = _unwrap(e)
        if _is_refusal(inner):
            return "refused", _reason(inner)
        if not reached:  # torch's own tracer failed before spyre-sim saw a graph
            return "refused", "torch.compile cannot trace it: " + _reason(e)
        return "internal", _reason(inner) + "\n" + "".join(
            traceback.format_exception(type(inner), inner, inner.__traceback__)[-6:])
    finally:
        torch._dynamo.reset()
    if op.name in UNDEFINED_VALUES or _draws_dropout(op, sample):  # eager, the sample's dtype
        def meta(o):
            return [(tuple(t.shape), t.dtype) for t in pytree.tree_leaves(o)
                    if isinstance(t, torch.Tensor)]
        with torch.no_grad():
            want = meta(fn(*tensors))
        if meta(actual) != want:
            return "wrong", f"outputs {meta(actual)}, eager gives {want}"
        return "pass", "shapes and dtypes compared (the values are undefined or random)"
    ok, err, tol = api.compare(_as_compared(op, actual, tensors, sample),
                               _as_compared(op, expected, api._upcast(tuple(tensors)), sample))
    if not ok:
        detail = f"max error {err:.4g} over tolerance {tol:.4g} ({len(sess.runs)} run(s))"
        if _as_inductor(op, fn, tensors, actual, sample):
            # The chip computed what Inductor's own CPU code computes from the same graph
            # (the mean of an empty tensor is 0 there, NaN in eager): the IR's meaning, kept.
            return "pass", f"as Inductor's CPU code; eager differs ({detail})"
        return "wrong", detail
    return "pass", f"{len(sess.runs)} simulated graph(s)"


def _draws_dropout(op, sample) -> bool:
    """Whether an attention sample applies dropout (its values are then random)."""
    if op.name == "nn.functional.scaled_dot_product_attention":
        return sample.kwargs.get("dropout_p", 0.0) > 0
    if op.name == "nn.functional.multi_head_attention_forward":
        import inspect

        import torch.nn.functional as F

        bound = inspect.signature(F.multi_head_attention_forward).bind(
            sample.input, *sample.args, **sample.kwargs)
        bound.apply_defaults()
        return bool(bound.arguments["training"]) and bound.arguments["dropout_p"] > 0
    return False


@contextlib.contextmanager
def _seed_wrapper_unwrapped(op):
    """While compiling: the OpInfo's `wrapper_set_seed(f, ...)` calls `f(...)` directly.

    Some ops' OpInfo entries (scaled_dot_product_attention, multi_head_attention_forward, the
    dropouts and random ops) call the op through torch.testing's `wrapper_set_seed`, which seeds
    the RNG around the call; Dynamo does not trace into torch.testing, so without this every
    such op would be refused for the harness's sake. The eager reference still runs seeded; the
    random ops' values are not compared (UNDEFINED_VALUES)."""
    scope = getattr(op.op, "__globals__", {})
    original = scope.get("wrapper_set_seed")
    if original is None:
        yield
        return
    scope["wrapper_set_seed"] = _call_unseeded
    try:
        yield
    finally:
        scope["wrapper_set_seed"] = original


def _call_unseeded(f, *args, **kwargs):
    return f(*args, **kwargs)


def _as_inductor(op, fn, tensors, actual, sample) -> bool:
    """Whether `actual` matches Inductor's own CPU result for the sample."""
    torch = _torch()
    from spyre_sim import api

    torch._dynamo.reset()
    try:
        with torch.no_grad():
            ref = torch.compile(fn, backend="inductor", dynamic=False)(*[t.clone() for t in tensors])
    except Exception:  # noqa: BLE001 - no Inductor result to compare with
        return False
    finally:
        torch._dynamo.reset()
    return api.compare(_as_compared(op, actual, tensors, sample),
                       _as_compared(op, ref, tensors, sample))[0]


# Ops whose outputs are defined only up to the signs of singular or eigenvectors (and, with
# full_matrices, a basis of the null space): compared as their OpInfo samples' own
# output_process_fn_grad gives them (|U|, |V|, U V^H, the singular and eigenvalues), which is how
# PyTorch's tests compare them.
DEFINED_UP_TO_A_BASIS = ("svd", "linalg.svd", "linalg.eigh", "svd_lowrank", "pca_lowrank")


def _as_compared(op, out, inputs, sample):
    """What is compared: the outputs, except that where ties make indices ambiguous (sort,
    argsort, topk; mode, whose CPU kernel returns any occurrence of the value: std::sort is not
    stable past 16 elements) the indices are replaced by the input values they select."""
    torch = _torch()
    if op.name in DEFINED_UP_TO_A_BASIS:
        return sample.output_process_fn_grad(out)
    if op.name == "mode" and inputs and inputs[0].dim() > 0 and isinstance(out, (tuple, list)):
        dim = sample.kwargs.get("dim", sample.args[0] if sample.args else -1)
        keepdim = sample.kwargs.get("keepdim", sample.args[1] if len(sample.args) > 1 else False)
        index = out[1] if keepdim else out[1].unsqueeze(dim)
        return out[0].float(), torch.gather(inputs[0].float(), dim, index)
    if op.name in ("sort", "argsort", "topk") and inputs and inputs[0].dim() > 0:
        x = inputs[0].float()
        pos = 1 if op.name == "topk" else 0  # topk(input, k, dim), sort(input, dim)
        dim = sample.kwargs.get("dim", sample.args[pos] if len(sample.args) > pos else -1)
        if op.name == "argsort":
            return torch.gather(x, dim, out)
        if isinstance(out, (tuple, list)) and len(out) == 2:
            return out[0].float(), torch.gather(x, dim, out[1])
    return out


def run_op(key: str, samples: int | None = None, dtypes: int | None = None) -> dict:
    """{dtype: {"outcome", "reason", "samples"}} for one op: the worst sample's outcome and
    reason, and each sample's own ("pass", or "<outcome>: <reason>")."""
    import torch

    op = _ops()[key]
    result = {}
    kinds = chip_dtypes(op)[:dtypes]
    if not kinds:
        names = ", ".join(sorted(_dtype_name(d) for d in op.supported_dtypes("cpu")))
        reason = (f"only dtypes the chip does not have ({names})" if names else
                  "no CPU kernel in any dtype (a CUDA-only op): no eager result to compare with")
        return {"none": {"outcome": "refused", "samples": [], "reason": reason}}
    for dtype in kinds:
        outcome, reason, each = "pass", "", []
        torch.manual_seed(0)  # the same samples whichever ops ran before in this worker
        try:
            gen = op.sample_inputs("cpu", dtype, requires_grad=False)
            for i, sample in enumerate(gen):
                if samples is not None and i >= samples:
                    break
                got, detail = _check_sample(op, sample, dtype)
                each.append("pass" if got == "pass" else f"{got}: {detail.splitlines()[0]}")
                if OUTCOMES.index(got) > OUTCOMES.index(outcome):
                    outcome, reason = got, f"sample {i}: {detail}"
        except Exception as e:  # noqa: BLE001 - the sample generator itself failed
            outcome, reason = "internal", f"sample generation: {_reason(e)}"
        result[_dtype_name(dtype)] = {"outcome": outcome, "reason": reason, "samples": each}
    return result


# A worker process pays about 6 s of imports and Dynamo and Inductor warm-up before its first
# op, then about 0.1-0.5 s an op: each job gets a few large chunks (a crashed or hung chunk is
# retried op by op), their ops dealt out in turn so that the costly families (linalg.*, fft.*,
# nn.functional.*) spread over them.
CHUNKS_PER_JOB = 3
CHUNK_MAX = 128  # ops in one worker process at most
TIMEOUT_PER_OP_S = 60  # a chunk's wall time, per op, before its ops are retried one by one
SINGLE_TIMEOUT_S = 180  # one op's, when retried alone


def _run_chunk(keys, samples, dtypes, timeout, sets=()):
    """Run `keys` in a fresh worker process: {key: result}. A worker that crashes or runs out
    of time is retried op by op, so the op that did it is recorded as an internal error."""
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [sys.executable, __file__, "--worker", out.name, "--ops", ",".join(keys)]
        if samples is not None:
            cmd += ["--samples", str(samples)]
        if dtypes is not None:
            cmd += ["--dtypes", str(dtypes)]
        if sets:
            cmd += ["--host-fallback"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            failure = None if proc.returncode == 0 else (
                f"worker exited with status {proc.returncode}: "
                + (proc.stderr.strip().splitlines() or [""])[-1][:200])
        except subprocess.TimeoutExpired:
            failure = f"no result within {timeout} s"
        if failure is None:
            with open(out.name) as f:
                return json.load(f)
    if len(keys) == 1:
        return {keys[0]: {"?": {"outcome": "internal", "reason": failure, "samples": []}}}
    results = {}
    for key in keys:
        results.update(_run_chunk([key], samples, dtypes, min(timeout, SINGLE_TIMEOUT_S), sets))
    return results


def chunks_of(keys, jobs):
    """`keys` dealt into CHUNKS_PER_JOB chunks a job (more where a chunk would pass CHUNK_MAX)."""
    n = max(1, min(len(keys), max(jobs * CHUNKS_PER_JOB, -(-len(keys) // CHUNK_MAX))))
    return [keys[i::n] for i in range(n) if keys[i::n]]


def run(keys, samples=None, jobs=1, progress=None, timeout=None, dtypes=None,
        host_fallback=False):
    """{key: run_op(key)} over `keys`, in worker processes, `jobs` at a time; `samples` and
    `dtypes`: each op's first so many of them (None: all); `host_fallback`: compiled with
    compiler.host_fallback=on; `timeout`: a chunk's wall time (default TIMEOUT_PER_OP_S an
    op)."""
    sets = HOST_FALLBACK if host_fallback else []
    chunks = chunks_of(list(keys), jobs)
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        for part in pool.map(lambda c: _run_chunk(
                c, samples, dtypes, timeout or TIMEOUT_PER_OP_S * len(c), sets), chunks):
            results.update(part)
            if progress:
                for key in part:
                    progress(key, part[key])
    return results


def counts(results) -> dict:
    """Outcome counts over ops (an op's outcome: its worst dtype) and over (op, dtype) pairs."""
    per_op = {o: 0 for o in OUTCOMES}
    per_pair = {o: 0 for o in OUTCOMES}
    for res in results.values():
        worst = max((r["outcome"] for r in res.values()), key=OUTCOMES.index)
        per_op[worst] += 1
        for r in res.values():
            per_pair[r["outcome"]] += 1
    return {"ops": per_op, "op_dtypes": per_pair}


# Refusals because a tensor of the sample has a dtype the chip lacks (fp64, complex, uint8,
# int16, fp8, ...), which spyre-sim refuses by name: the capture's complex refusal, the IR
# loader's dtype refusal, ops that support no chip dtype; and ops with no CPU kernel at all.
_DTYPE_REFUSAL = re.compile(r"the chip has no complex dtype|the chip has no such type|"
                            r"only dtypes the chip does not have|field 'dtype': expected one of|"
                            r"no CPU kernel in any dtype")


def dtype_refused(results) -> list[str]:
    """The ops refused only because of a dtype the chip lacks (every failing dtype's reason)."""
    return sorted(k for k, res in results.items()
                  if any(r["outcome"] != "pass" for r in res.values())
                  and all(_DTYPE_REFUSAL.search(r["reason"]) for r in res.values()
                          if r["outcome"] != "pass"))


def load_expected(path=EXPECTED) -> dict:
    with open(path) as f:
        return json.load(f)


def refused_on_device() -> list[str]:
    """The ops the device-only expectation does not pass (some dtype refused)."""
    return sorted(k for k, res in load_expected()["ops"].items()
                  if any(r["outcome"] != "pass" for r in res.values()))


def _verdict(code: str) -> str:
    """What must stay the same of one sample's record: its outcome, and a refusal's reason."""
    outcome = code.split(":", 1)[0]
    return code if outcome == "refused" else outcome


def differences(results, expected) -> list[str]:
    """Each sample whose outcome (or refusal reason) differs from the expectation; a run of
    fewer samples is compared on the samples it ran."""
    diffs = []
    for key, res in sorted(results.items()):
        want = expected.get("ops", {}).get(key)
        if want is None:
            diffs.append(f"{key}: not in the expectation")
            continue
        if not set(res) <= set(want):  # a run of fewer dtypes is compared on those
            diffs.append(f"{key}: dtypes {sorted(res)}, expected {sorted(want)}")
            continue
        for dtype, r in sorted(res.items()):
            w = want[dtype]
            if not r["samples"] and r["outcome"] != w["outcome"]:
                diffs.append(f"{key} [{dtype}]: expected {w['outcome']}, got {r['outcome']}: "
                             f"{r['reason'].splitlines()[0] if r['reason'] else ''}")
            for i, (got, exp) in enumerate(zip(r["samples"], w["samples"])):
                if _verdict(got) != _verdict(exp):
                    diffs.append(f"{key} [{dtype}] sample {i}: expected {exp!r}, got {got!r}")
            if len(r["samples"]) > len(w["samples"]):
                diffs.append(f"{key} [{dtype}]: {len(r['samples'])} samples, the expectation "
                             f"has {len(w['samples'])}")
    return diffs


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", help="comma-separated op names (default: all of op_db)")
    p.add_argument("--samples", type=int, help="each op's first N samples (default: all)")
    p.add_argument("--dtypes", type=int, help="each op's first N chip dtypes (default: all)")
    p.add_argument("-j", "--jobs", type=int, default=1)
    p.add_argument("--write", action="store_true", help="store the outcomes as the expectation")
    p.add_argument("--check", action="store_true",
                   help="fail (exit 1) when an outcome differs from the expectation")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--host-fallback", action="store_true",
                   help="compile with compiler.host_fallback=on: the ops the device refuses, "
                        "against expected_host_fallback.json")
    p.add_argument("--worker", help=argparse.SUPPRESS)  # run --ops here, write results there
    a = p.parse_args(argv)
    global _sets
    _sets = HOST_FALLBACK if a.host_fallback else []
    expected_path = EXPECTED_HOST if a.host_fallback else EXPECTED
    os.environ.setdefault("SC_COPYRIGHT_MESSAGE", "DISABLE")
    # Every sample compiles: the outcomes do not depend on what the user's compile cache holds,
    # and nothing is written to it (as in tests/python/conftest.py).
    os.environ["SPYRE_SIM_CACHE"] = "off"
    if a.worker:
        results = {}
        for key in a.ops.split(","):
            if os.environ.get("SPYRE_OPINFO_CRASH") == key:  # the harness's own test
                os.abort()
            try:
                results[key] = run_op(key, a.samples, a.dtypes)
            except Exception as e:  # noqa: BLE001 - the op's own harness code failed
                results[key] = {"?": {"outcome": "internal", "reason": _reason(e), "samples": []}}
        with open(a.worker, "w") as f:
            json.dump(results, f)
        return 0
    all_keys = sorted(_ops())
    keys = refused_on_device() if a.host_fallback else all_keys
    if a.ops:
        keys = [k.strip() for k in a.ops.split(",") if k.strip()]
        unknown = [k for k in keys if k not in all_keys]
        if unknown:
            print(f"opinfo: unknown op(s) {', '.join(unknown)} (names as op_db spells them, "
                  "with .variant)", file=sys.stderr)
            return 2

    def progress(key, res):
        line = ", ".join(f"{d} {r['outcome']}" for d, r in res.items())
        print(f"{key}: {line}", file=sys.stderr, flush=True)

    results = run(keys, a.samples, a.jobs, progress, dtypes=a.dtypes,
                  host_fallback=a.host_fallback)
    c = counts(results)
    if a.json:
        print(json.dumps({"results": results, "counts": c}, indent=1, sort_keys=True))
    print(f"{len(results)} ops: " + ", ".join(f"{n} {o}" for o, n in c["ops"].items()))
    print(f"{sum(c['op_dtypes'].values())} (op, dtype) pairs: "
          + ", ".join(f"{n} {o}" for o, n in c["op_dtypes"].items()))
    if a.write:
        doc = {"command": "python tests/opinfo/opinfo.py -j 2 --write"
                          + (" --host-fallback" if a.host_fallback else "")
                          + (f" --samples {a.samples}" if a.samples else ""),
               "samples": a.samples, "counts": c, "ops": results}
        if a.ops and expected_path.exists():  # a partial run updates only its ops
            old = load_expected(expected_path)
            old["ops"].update(results)
            old["counts"] = counts(old["ops"])
            doc = old
        if a.host_fallback:  # only the ops the device refuses: drop those it now runs
            device_refused = set(refused_on_device())
            doc["ops"] = {k: v for k, v in doc["ops"].items() if k in device_refused}
            doc["counts"] = counts(doc["ops"])
        tmp = expected_path.with_suffix(".json.tmp")
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, expected_path)
        print(f"wrote {expected_path.relative_to(ROOT)}")
    if not a.ops:
        total = len(all_keys)
        device = results if not a.host_fallback else load_expected()["ops"]
        on_device = counts(device)["ops"]["pass"]
        passed = on_device + (c["ops"]["pass"] if a.host_fallback else 0)
        if a.host_fallback:
            print(f"with host fallback: {on_device} ops pass on the device (the stored "
                  f"expectation) + {c['ops']['pass']} with host calls = {passed} / {total} "
                  f"({100.0 * passed / total:.1f} %)")
        lacking = len(dtype_refused(results))
        print(f"{lacking} ops are refused for a dtype the chip lacks (fp64, complex, uint8, "
              f"...) or have no CPU kernel; of the other {total - lacking}, {passed} pass "
              f"({100.0 * passed / (total - lacking):.1f} %)")
    status = 1 if c["ops"]["wrong"] + c["ops"]["internal"] else 0
    if a.check:
        diffs = differences(results, load_expected(expected_path))
        for d in diffs:
            print(f"differs: {d}")
        print(f"{len(diffs)} outcome(s) differ from {expected_path.relative_to(ROOT)}")
        status = status or (1 if diffs else 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
