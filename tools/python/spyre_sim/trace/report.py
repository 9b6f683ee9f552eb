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
    summary = analysis.is_summary(loaded)
    kernels = []
    for w in analysis.kernel_windows(loaded):
        cyc = w["end"] - w["start"]
        pred = None
        if w["name"] in predicted:
            pred = (predicted[w["name"]].get("predicted") or {}).get("cycles")
        elif w.get("args", {}).get("predicted_cycles") is not None:  # on the kernel span
            pred = w["args"]["predicted_cycles"]
        row = {"name": w["name"], "start_cycle": w["start"], "end_cycle": w["end"],
               "cycles": cyc, "window_from": w["source"], "predicted_cycles": pred,
               "sim_over_predicted": cyc / pred if pred else None}
        if summary:  # no unit spans: the busy counters give each unit kind's busy fraction
            busy, cores = analysis.unit_busy(loaded, w["start"], w["end"])
            row.update(cores_used=len(cores), split_core_cycles=None, split_frac=None,
                       critical_path=None,
                       busy_frac={k: (b / (n * cyc) if n and cyc else 0.0)
                                  for k, (b, n) in sorted(busy.items())})
        else:
            split, cores = analysis.time_split(loaded, w)
            core_cycles = sum(split.values())
            row.update(cores_used=cores, split_core_cycles=split,
                       split_frac={k: (v / core_cycles if core_cycles else 0.0)
                                   for k, v in split.items()},
                       critical_path=analysis.critical_path(loaded, w))
        kernels.append(row)
    total = loaded.end
    bw = analysis.bandwidth(loaded, arch)
    dram = [r for r in bw if r["kind"] == "dram"]
    dram_bytes = sum(r["bytes"] or 0 for r in dram)
    return {
        "trace": loaded.path, "format": loaded.meta.get("format"),
        "detail": "summary" if summary else "full", "clock_ghz": clock,
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


SUMMARY_UNITS = ("dma_in", "dma_out", "pt", "sfp", "ring")


def kernel_rows(rep):
    rows = []
    if rep.get("detail") == "summary":  # busy fraction of each unit kind over the kernel
        for k in rep["kernels"]:
            b = k["busy_frac"]
            rows.append([k["name"], _num(k["cycles"]), _num(k["predicted_cycles"]),
                         _num(k["sim_over_predicted"], "{:.2f}x"), k["cores_used"]]
                        + [_pct(b.get(u)) for u in SUMMARY_UNITS])
        return (["kernel", "cycles", "predicted", "sim/pred", "cores"]
                + [f"{u} busy" for u in SUMMARY_UNITS], rows)
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


SUMMARY_NOTE = ("Summary trace: no per-instruction spans, so no time split or critical path; "
                "rerun with --trace-detail full for them")


def text(rep):
    out = [f"trace {rep['trace']}: {rep['total_cycles']:,} cycles = "
           f"{rep['device_time_us']:.2f} us at {rep['clock_ghz']} GHz, {rep['cores']} cores, "
           f"{rep['spans']:,} spans on {rep['tracks']} tracks, {rep['counters']} counters, "
           f"{rep['flows']} flows"]
    kernels_title = ("Kernels (busy fraction of each unit kind over the kernel, from the "
                     "summary trace's counters)" if rep.get("detail") == "summary" else
                     "Kernels (time split in core-cycles of the cores the kernel uses; see README)")
    out += ["", kernels_title,
            table(*kernel_rows(rep)),
            f"sum of kernel cycles {rep['kernel_cycles_sum']:,} of {rep['total_cycles']:,}"]
    d = rep["dram_total"]
    peaks = rep["arch_from"] or "nowhere: unknown"
    out += ["", f"Bandwidth over the whole run (peaks from {peaks})",
            table(*link_rows(rep)) if rep["links"] else "(no DRAM channel or ring link tracks)",
            f"DRAM total {d['bytes']:,} bytes, {d['achieved_gbps']:.2f} GB/s"
            + (f" of {d['peak_gbps']:.1f} GB/s peak" if d["peak_gbps"] else "")]
    if rep.get("detail") == "summary":
        out += ["", SUMMARY_NOTE]
    else:
        out += ["", "Critical path per kernel (walked back from the span that finishes last)",
                table(*path_rows(rep)[:2]), "chains, latest first:"] + path_rows(rep)[2]
    return "\n".join(out) + "\n"
