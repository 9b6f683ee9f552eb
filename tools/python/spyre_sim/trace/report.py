"""`spyre-sim trace report`: the report as a dict (--json) and as text tables."""

import json

from . import analysis
from .model import COMPUTE, MEMORY, SYNC


def load_compile_report(path):
    if not path:
        return None
    with open(path) as f:
        return json.load(f)


def build(loaded, compile_report=None, report_path=None):
    arch, arch_from = analysis.find_arch(loaded, compile_report, report_path)
    clock = float(loaded.meta.get("clock_ghz") or analysis.param(arch, "chip.clock_ghz", 1.0))
    predicted = analysis.report_kernels(compile_report)
    kernels = []
    for w in analysis.kernel_windows(loaded):
        cyc = w["end"] - w["start"]
        pred = None
        if w["name"] in predicted:
            pred = (predicted[w["name"]].get("predicted") or {}).get("cycles")
        elif w.get("args", {}).get("predicted_cycles") is not None:  # on the kernel span
            pred = w["args"]["predicted_cycles"]
        split, cores = analysis.time_split(loaded, w)
        core_cycles = sum(split.values())
        kernels.append({
            "name": w["name"], "start_cycle": w["start"], "end_cycle": w["end"], "cycles": cyc,
            "window_from": w["source"], "predicted_cycles": pred,
            "sim_over_predicted": cyc / pred if pred else None, "cores_used": cores,
            "split_core_cycles": split,
            "split_frac": {k: (v / core_cycles if core_cycles else 0.0) for k, v in split.items()},
            "critical_path": analysis.critical_path(loaded, w),
        })
    total = loaded.end
    bw = analysis.bandwidth(loaded, arch)
    dram = [r for r in bw if r["kind"] == "dram"]
    dram_bytes = sum(r["bytes"] or 0 for r in dram)
    return {
        "trace": loaded.path, "format": loaded.meta.get("format"), "clock_ghz": clock,
        "cores": loaded.meta.get("cores"), "total_cycles": total,
        "device_time_us": total / (clock * 1000.0),
        "kernel_cycles_sum": sum(k["cycles"] for k in kernels),
        "arch_from": arch_from, "kernels": kernels,
        "dram_total": {"bytes": dram_bytes,
                       "achieved_gbps": dram_bytes / max(total, 1) * clock,
                       "peak_gbps": sum(r["peak_gbps"] or 0 for r in dram) or None},
        "links": bw, "tracks": len(loaded.tracks),
        "spans": sum(len(t.start) for t in loaded.tracks.values()),
        "counters": len(loaded.counters), "flows": len(loaded.flows),
    }


def _pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def _num(x, fmt="{:,}"):
    return "-" if x is None else fmt.format(x)


def table(headers, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def kernel_rows(rep):
    rows = []
    for k in rep["kernels"]:
        f = k["split_frac"]
        rows.append([k["name"], _num(k["cycles"]), _num(k["predicted_cycles"]),
                     _num(k["sim_over_predicted"], "{:.2f}x"), k["cores_used"], _pct(f[COMPUTE]),
                     _pct(f[MEMORY]), _pct(f[SYNC]), _pct(f["idle"])])
    return ["kernel", "cycles", "predicted", "sim/pred", "cores", "compute", "memory", "sync",
            "idle"], rows


def link_rows(rep):
    rows = [[r["track"], _num(r["transfers"]), _num(r["bytes"]), _pct(r["busy_frac"]),
             _num(r["achieved_gbps"], "{:.2f}"), _num(r["peak_gbps"], "{:.2f}"),
             _pct(r["of_peak"])] for r in rep["links"]]
    return ["link", "transfers", "bytes", "busy", "GB/s", "peak GB/s", "of peak"], rows


def path_rows(rep):
    rows, chains = [], []
    for k in rep["kernels"]:
        cp = k["critical_path"]
        if not cp:
            continue
        c = cp["cycles_by_class"]
        rows.append([k["name"], cp["finisher"], _num(cp["finish_cycle"]), cp["path_spans"],
                     _num(c[COMPUTE]), _num(c[MEMORY]), _num(c[SYNC])])
        segs = cp["segments"]
        shown = [f"{s['track']} {s['name']}" + (f" x{s['spans']}" if s["spans"] > 1 else "")
                 for s in reversed(segs[-5:])]
        more = f" <- ... {len(segs) - 5} more" if len(segs) > 5 else ""
        chains.append(f"  {k['name']}: " + " <- ".join(shown) + more)
    hdr = ["kernel", "finishes last", "at cycle", "spans", "compute", "memory", "sync"]
    return hdr, rows, chains


def text(rep):
    out = [f"trace {rep['trace']}: {rep['total_cycles']:,} cycles = "
           f"{rep['device_time_us']:.2f} us at {rep['clock_ghz']} GHz, {rep['cores']} cores, "
           f"{rep['spans']:,} spans on {rep['tracks']} tracks, {rep['counters']} counters, "
           f"{rep['flows']} flows"]
    out += ["", "Kernels (time split in core-cycles of the cores the kernel uses; see README)",
            table(*kernel_rows(rep)),
            f"sum of kernel cycles {rep['kernel_cycles_sum']:,} of {rep['total_cycles']:,}"]
    d = rep["dram_total"]
    peaks = rep["arch_from"] or "nowhere: unknown"
    out += ["", f"Bandwidth over the whole run (peaks from {peaks})",
            table(*link_rows(rep)) if rep["links"] else "(no DRAM channel or ring link tracks)",
            f"DRAM total {d['bytes']:,} bytes, {d['achieved_gbps']:.2f} GB/s"
            + (f" of {d['peak_gbps']:.1f} GB/s peak" if d["peak_gbps"] else "")]
    out += ["", "Critical path per kernel (walked back from the span that finishes last)",
            table(*path_rows(rep)[:2]), "chains, latest first:"] + path_rows(rep)[2]
    return "\n".join(out) + "\n"
