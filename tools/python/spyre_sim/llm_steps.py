"""What a simulated generation reports, step by step (spyre_sim.llm): the class of each kernel
(attention, MLP, norms, other) from its source line, a step's entry (device time by class, DRAM
bytes and bandwidth against the weight-streaming floor), the result of a generation, and one
trace of all its steps."""

from __future__ import annotations

import ast
import json
import os
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional

CLASSES = ("attention", "mlp", "norms", "other")


# --- kernel classes: a kernel's class is that of its source line's enclosing module code


@lru_cache(maxsize=None)
def _scopes(path: str) -> list[tuple[int, int, str]]:
    try:
        with open(path) as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError):
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            out.append((node.lineno, node.end_lineno or node.lineno, node.name))
    return sorted(out, key=lambda s: s[1] - s[0])  # innermost first


@lru_cache(maxsize=None)
def _line_text(path: str, line: int) -> str:
    try:
        with open(path) as f:
            for i, text in enumerate(f, 1):
                if i == line:
                    return text
    except OSError:
        pass
    return ""


def _resolve(source: str) -> tuple[str, int]:
    if not source or ":" not in source:
        return "", 0
    file, _, line = source.rpartition(":")
    if not line.isdigit():
        return "", 0
    if not os.path.isabs(file):
        for root in sys.path:
            cand = os.path.join(root, file)
            if root and os.path.exists(cand):
                file = cand
                break
    return file, int(line)


def kernel_class(kernel: dict) -> str:
    """attention, mlp, norms or other, from a compile-report kernel's source line (the innermost
    class or function around it: `...Attention`, `...MLP`, `...Norm`; then the file and the
    line's text) and, when those say nothing, its ATen ops."""
    aten = " ".join(kernel.get("aten") or [])
    path, line = _resolve(kernel.get("source") or "")
    names = [n for lo, hi, n in _scopes(path) if lo <= line <= hi] if path else []
    base = os.path.basename(path)
    text = _line_text(path, line).lower() if path else ""
    for n in names:  # innermost first
        low = n.lower()
        if "norm" in low:
            return "norms"
        if "mlp" in low or low in ("feedforward", "ffn"):
            return "mlp"
        if "attention" in low or "rotary" in low or low in ("apply_rotary_pos_emb", "rotate_half",
                                                           "repeat_kv"):
            return "attention"
    if base in ("cache_utils.py", "masking_utils.py", "sdpa_attention.py"):
        return "attention"
    if "ln_" in text or "norm" in text:
        return "norms"
    if ".attn(" in text or "attention" in text:
        return "attention"
    if ".mlp(" in text:
        return "mlp"
    # No source scope says: a kernel of a generic layer (GPT-2's Conv1D matmuls: the IR names
    # the innermost frame, not the module that called it) stays "other" unless its ops say.
    if "scaled_dot_product" in aten:
        return "attention"
    if kernel.get("kind") != "extern" and ("native_layer_norm" in aten or "var_mean" in aten):
        return "norms"
    return "other"


# --- results


@dataclass
class LlmResult:
    model: str
    arch: str
    batch: int
    prompt: int
    new: int
    context: int
    timing_only: bool
    ttft_us: float
    tpot_us: Optional[float]
    tokens_per_s: float
    decode_tokens_per_s: Optional[float]
    weight_bytes: int
    weight_floor_us: float
    peak_gbps: float
    steps: list = field(default_factory=list)
    tokens: Any = None  # batch x new token ids (functional)
    tokens_match: Optional[bool] = None
    logits_match: Optional[bool] = None
    max_abs_err: Optional[float] = None
    wall_s: float = 0.0  # this machine's time for the whole generation (capture, compile, runs)
    # {layers, from_layers: [a, b], sampled: {a: {ttft_us, tpot_us}, b: ...}} when the figures
    # are extrapolated from the model cut to a and b layers (simulate(extrapolate=...))
    extrapolated: Optional[dict] = None

    def summary(self) -> dict:
        d = {k: v for k, v in self.__dict__.items() if k not in ("steps", "tokens")}
        if self.tokens is not None:
            d["tokens"] = self.tokens.tolist()
        d["steps"] = self.steps
        return d

    def jsonl(self) -> str:
        """One JSON line per prefill or decode step (the shape serving benchmarks report)."""
        return "".join(json.dumps(s, sort_keys=True) + "\n" for s in self.steps)

    def text(self) -> str:
        lines = [f"{self.model} on {self.arch}: batch {self.batch}, prompt {self.prompt}, "
                 f"{self.new} new tokens, context {self.context}"
                 + (" (timing-only)" if self.timing_only else ""),
                 f"  TTFT {self.ttft_us:.1f} us"
                 + (f", TPOT {self.tpot_us:.1f} us" if self.tpot_us is not None else "")
                 + f", {self.tokens_per_s:.1f} tokens/s"
                 + (f" ({self.decode_tokens_per_s:.1f} tokens/s in decode)"
                    if self.decode_tokens_per_s else ""),
                 f"  weights {self.weight_bytes / 1e9:.3f} GB: streaming floor "
                 f"{self.weight_floor_us:.1f} us per step at {self.peak_gbps:.1f} GB/s"]
        for s in self.steps[:2] + ([self.steps[-1]] if len(self.steps) > 2 else []):
            cls = ", ".join(f"{c} {s['by_class_us'][c]:.1f}" for c in CLASSES)
            lines.append(f"  {s['phase']} step {s['step']}: {s['device_time_us']:.1f} us "
                         f"({cls} us), DRAM {s['dram_bytes'] / 1e6:.1f} MB at "
                         f"{s['achieved_gbps']:.1f} GB/s" + (" [reused]" if s["reused"] else ""))
        if self.extrapolated:
            x = self.extrapolated
            a, b = x["from_layers"]
            sa, sb = x["sampled"][str(a)], x["sampled"][str(b)]
            per = [f"TTFT {(sb['ttft_us'] - sa['ttft_us']) / (b - a):.1f} us"]
            if sb["tpot_us"] is not None:
                per.append(f"TPOT {(sb['tpot_us'] - sa['tpot_us']) / (b - a):.1f} us")
            lines.append(f"  ESTIMATE: extrapolated to {x['layers']} layers from simulations of "
                         f"{a} and {b} (per layer: {', '.join(per)}); its error against the "
                         "full simulation is measured in tools/bench/llm")
        lines.append(f"  wall time {self.wall_s:.1f} s (capture, compile and simulation)")
        if self.tokens_match is not None:
            lines.append(f"  tokens match eager: {self.tokens_match}; logits match: "
                         f"{self.logits_match} (max excess error {self.max_abs_err:.3g})")
        return "\n".join(lines) + "\n"


def _step_entry(phase: str, step: int, run: dict, classes: dict[str, str], tokens: int,
                position: int, floor_us: float) -> dict:
    clock = run["clock_ghz"] * 1e3  # cycles per us
    by = {c: 0.0 for c in CLASSES}
    # Kernels may overlap (one that starts without a barrier): each stretch of time is shared
    # equally by the kernels running in it, so the classes add up to the time some kernel ran.
    edges = sorted({t for k in run["kernels"] for t in (k["start_cycle"], k["end_cycle"])})
    for lo, hi in zip(edges, edges[1:]):
        active = [k for k in run["kernels"] if k["start_cycle"] <= lo and k["end_cycle"] >= hi]
        for k in active:
            by[classes.get(k["name"], "other")] += (hi - lo) / clock / len(active)
    dram = run["dram"]
    return {"phase": phase, "step": step, "tokens": tokens, "position": position,
            "device_time_us": run["device_time_us"], "cycles": run["cycles"],
            "kernels": len(run["kernels"]),
            "by_class_us": {c: round(v, 3) for c, v in by.items()},
            # barriers and kernel starts: the device time no kernel span covers
            "between_kernels_us": round(max(0.0, run["device_time_us"] - sum(by.values())), 3),
            "dram_bytes": dram["read_bytes"] + dram["write_bytes"],
            "dram_read_bytes": dram["read_bytes"], "dram_write_bytes": dram["write_bytes"],
            "achieved_gbps": dram["achieved_gbps"], "weight_floor_us": floor_us,
            "reused": bool(run.get("reused", False)), "extrapolated": False}


def merge_step_traces(paths: list[str], steps: list[dict], out: str) -> None:
    """One Chrome JSON trace of a generation: each step's trace shifted to start where the
    previous step ended, and a `generation` track with one span per step (prefill, decode N)
    over the kernel spans."""
    from . import files

    events, meta, seen, offset = [], None, set(), 0.0
    for i, (path, step) in enumerate(zip(paths, steps)):
        with open(path) as f:
            d = json.load(f)
        meta = meta or {k: v for k, v in d.items() if k != "traceEvents"}
        for e in d["traceEvents"]:
            if e["ph"] == "M":
                key = (e["name"], e.get("pid"), e.get("tid"))
                if key not in seen:
                    seen.add(key)
                    events.append(e)
                continue
            e = dict(e)
            if "ts" in e:
                e["ts"] = e["ts"] + offset
            if "id" in e:  # flow ids: unique per step
                e["id"] = f"{i}.{e['id']}"
            events.append(e)
        offset += step["device_time_us"]
    pid = 1 + max((e.get("pid", 0) for e in events), default=0)
    events += [{"ph": "M", "name": "process_name", "pid": pid, "args": {"name": "generation"}},
               {"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": -1}},
               {"ph": "M", "name": "thread_name", "pid": pid, "tid": 0, "args": {"name": "steps"}}]
    start = 0.0
    for step in steps:
        name = "prefill" if step["phase"] == "prefill" else f"decode {step['step']}"
        events.append({"ph": "X", "pid": pid, "tid": 0, "ts": start,
                       "dur": step["device_time_us"], "name": name, "cat": "llm",
                       "args": {k: step[k] for k in ("tokens", "position", "dram_bytes",
                                                     "achieved_gbps", "by_class_us")}})
        start += step["device_time_us"]
    meta = dict(meta or {}, metadata=dict((meta or {}).get("metadata", {}), graph="generation"))
    files.write_atomic(out, json.dumps(dict(meta, traceEvents=events)))


def _result(steps: list[dict], **fields) -> LlmResult:
    """The result of a generation from its steps: TTFT is the prefill's device time, TPOT the
    mean of the decode steps'."""
    batch, new = fields["batch"], fields["new"]
    ttft = steps[0]["device_time_us"]
    decode = [s["device_time_us"] for s in steps[1:]]
    tpot = sum(decode) / len(decode) if decode else None
    total = ttft + sum(decode)
    return LlmResult(ttft_us=ttft, tpot_us=tpot, tokens_per_s=batch * new / (total * 1e-6),
                     decode_tokens_per_s=batch / (tpot * 1e-6) if tpot else None, steps=steps,
                     **fields)
