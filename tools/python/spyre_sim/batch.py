"""Simulating many (IR, configuration) points at once: what `spyre-sim regress` and
`spyre-sim sweep` share.

A `Job` names a model by its IR files (one per captured graph, simulated once each in order and
summed, as a model file's run is), an architecture and `--set` overrides. `simulate(job)`
compiles and simulates it timing-only (the timing is that of a functional run) and returns a
flat, picklable result; `run_jobs` runs jobs in worker processes and yields results as they
finish. Nothing here imports torch: IR files in, cycles out.

Workers are fresh interpreters (the "spawn" start method): safe after `import torch` in the
parent (a sweep of model files captures them first), and the same on every platform.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import multiprocessing
import os
import time
from dataclasses import dataclass, field
from typing import Iterable, Iterator

UNITS = ("pt", "sfp", "dma_in", "dma_out", "ring")


@dataclass(frozen=True)
class Job:
    key: str                     # the caller's name for this point (unique within a batch)
    irs: tuple                   # IR JSON paths, one per graph, in call order
    arch: str = "spyre"
    sets: tuple = ()             # "key=value" overrides, chip and compiler.* keys alike
    meta: dict = field(default_factory=dict, compare=False, hash=False)  # passed through


def config_hash(arch_yaml: str, sets: Iterable[str]) -> str:
    """12 hex digits naming an effective configuration: the full chip parameter set plus the
    compiler options (the chip YAML does not hold those)."""
    compiler = sorted(s for s in sets if s.startswith("compiler."))
    text = arch_yaml + "\n" + "\n".join(compiler)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


_ir_cache: dict = {}


def _ir_text(path: str) -> str:
    """An IR file's text, kept per worker (a sweep compiles the same IR at many points)."""
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _ir_cache:
        with open(path, encoding="utf-8") as f:
            _ir_cache[key] = f.read()
    return _ir_cache[key]


def simulate(job: Job, *texts: str) -> dict:
    """Compiles and simulates `job` timing-only. `texts`: the IR files' contents when the
    files are not on this machine (Ray). Never raises for a bad point: the result then has
    `ok: False` and `error` (the message names the file, key or node)."""
    from ._core import core

    out = {"key": job.key, "ok": False, "meta": job.meta}
    try:
        t0 = time.perf_counter()
        irs = texts or [_ir_text(p) for p in job.irs]
        exes = [core.Executable.from_ir(t, job.arch, list(job.sets), p)
                for t, p in zip(irs, job.irs)]
        t1 = time.perf_counter()
        summaries = [json.loads(e.run([], "", True, "")["summary"]) for e in exes]
        t2 = time.perf_counter()
    except (core.SpyreError, OSError, ValueError) as e:
        out["error"] = str(e)
        return out
    s = json.loads(core.merge_summaries([json.dumps(x) for x in summaries]))
    names = [[f"{os.path.splitext(os.path.basename(p))[0]}/{k['name']}" if len(exes) > 1
              else k["name"], int(k["cycles"])] for p, x in zip(job.irs, summaries)
             for k in x["kernels"]]
    arch_yaml = exes[0].arch_yaml
    dram = s["dram"]
    out.update(
        ok=True, cycles=int(s["cycles"]), device_time_us=float(s["device_time_us"]),
        dram_read_bytes=int(dram["read_bytes"]), dram_write_bytes=int(dram["write_bytes"]),
        dram_bytes=int(dram["read_bytes"]) + int(dram["write_bytes"]),
        achieved_gbps=float(dram["achieved_gbps"]), peak_gbps=float(dram["peak_gbps"]),
        utilisation={u: float(s["utilisation"][u]) for u in UNITS}, kernels=names,
        graphs=[{"cycles": int(x["cycles"]), "device_time_us": float(x["device_time_us"]),
                 "dram_read_bytes": int(x["dram"]["read_bytes"]),
                 "dram_write_bytes": int(x["dram"]["write_bytes"]),
                 "dram_bytes": int(x["dram"]["read_bytes"]) + int(x["dram"]["write_bytes"]),
                 "achieved_gbps": float(x["dram"]["achieved_gbps"]),
                 "kernels": len(x["kernels"])} for x in summaries],
        compile_s=t1 - t0, sim_s=t2 - t1, arch_yaml=arch_yaml,
        config_hash=config_hash(arch_yaml, job.sets))
    return out


def default_workers() -> int:
    """The machine's cores available to this process."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def _failed(job: Job, error: str) -> dict:
    return {"key": job.key, "ok": False, "meta": job.meta, "error": error}


def run_jobs(jobs: list, workers: int | None = None, ray: str | None = None) -> Iterator[dict]:
    """Runs `jobs` in `workers` processes (default: the machine's cores), or as Ray tasks when
    `ray` is a cluster address or "local" (a local Ray instance of `workers` CPUs), yielding
    each result as it finishes: callers that need an order sort by key. A worker that dies
    fails its jobs, not the batch."""
    if not jobs:
        return
    if ray:
        yield from _run_ray(jobs, ray, workers)
        return
    workers = max(1, min(workers or default_workers(), len(jobs)))
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        futures = {pool.submit(simulate, j): j for j in jobs}
        for fut in concurrent.futures.as_completed(futures):
            job = futures[fut]
            try:
                yield fut.result()
            except concurrent.futures.process.BrokenProcessPool as e:
                yield _failed(job, f"the worker process died ({e})")


def _run_ray(jobs: list, address: str, workers: int | None) -> Iterator[dict]:
    """Ray tasks, one per job, one CPU each. IR texts travel through Ray's object store (each
    file once), so a cluster's nodes need spyre-sim installed but not the files."""
    import ray

    started = not ray.is_initialized()
    if started:
        kwargs = dict(include_dashboard=False, log_to_driver=False)
        if address == "local":
            kwargs["num_cpus"] = workers or default_workers()
        else:
            kwargs["address"] = address
        try:
            ray.init(**kwargs)
        except Exception as e:  # connection refused, bad address: bad input
            from .specfile import SpecError

            raise SpecError(f"--ray {address}: cannot start or reach Ray: {e}") from e
    try:
        paths = dict.fromkeys(p for j in jobs for p in j.irs)
        texts = {p: ray.put(_ir_text(p)) for p in paths}
        task = ray.remote(num_cpus=1)(simulate)
        pending = {task.remote(j, *(texts[p] for p in j.irs)): j for j in jobs}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                job = pending.pop(ref)
                try:
                    yield ray.get(ref)
                except Exception as e:  # the task's worker died
                    yield _failed(job, f"the Ray task failed ({type(e).__name__}: {e})")
    finally:
        if started:
            ray.shutdown()
