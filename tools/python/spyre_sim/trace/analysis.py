"""The numbers of `spyre-sim trace report`: kernels, time split, bandwidth, critical path.

Definitions (also in tools/README.md, "trace report"):
- kernel window: a span on chip/kernels; else the first start to the last end of the unit spans
  (not the sequencer's) whose "kernel" arg names it; else the intervals between barrier ends.
- time split: per core and kernel window, every cycle is counted once, by priority
  compute (a PT/SFP busy) > memory (a DMA/ring transfer of that core busy) > sync (a wait span, or
  after the core's last span of the kernel: waiting at the barrier) > idle (nothing). Sums over
  the cores that have spans in the kernel, in core-cycles.
- critical path: see critical_path().
"""

import os

from . import names
from .model import COMPUTE, MEMORY, OTHER, SYNC, natural_key

SLACK = 2  # cycles: a wait that ends this close to a span's start gated it (issue latency)


def param(arch, key, default=None):
    """A parameter from flat ("dram.channels") or nested ({"dram": {"channels"}}) arch dicts."""
    if not isinstance(arch, dict):
        return default
    if key in arch:
        return arch[key]
    node = arch
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def find_arch(loaded, report, report_path):
    """The arch parameters: trace metadata, then the compile report, then an arch.yaml that
    `spyre-sim run --out DIR` writes next to its trace and report.json."""
    for cand in (loaded.meta.get("arch"), (report or {}).get("arch")):
        if isinstance(cand, dict) and cand:
            return cand, "trace metadata" if cand is loaded.meta.get("arch") else "compile report"
    for base in (loaded.path, report_path):
        if base:
            p = os.path.join(os.path.dirname(os.path.abspath(base)), "arch.yaml")
            if os.path.exists(p):
                import yaml

                with open(p) as f:
                    doc = yaml.safe_load(f)
                if isinstance(doc, dict):
                    return doc, p
    return {}, None


def report_kernels(report):
    """Compile-report kernels by name (a multi-graph report nests them under subgraphs)."""
    out = {}
    if not isinstance(report, dict):
        return out
    for sub in [report] + list(report.get("subgraphs") or []):
        for k in sub.get("kernels") or []:
            if isinstance(k, dict) and "name" in k:
                out[k["name"]] = k
    return out


def merged_length(intervals):
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def kernel_windows(loaded):
    kt = loaded.tracks.get(names.KERNELS)
    if kt is not None and kt.start:
        return [{"name": kt.label[i], "start": kt.start[i], "end": kt.ends[i],
                 "source": "kernel span", "args": kt.args[i] if kt.args else {}}
                for i in range(len(kt.start))]
    wins = {}
    for tr in loaded.tracks.values():
        if tr.name == "seq":  # sequencer stalls, drains, barrier waits: not the kernel's work
            continue
        for s, e, k in zip(tr.start, tr.ends, tr.kernel):
            if k:
                w = wins.setdefault(k, [s, e])
                w[0], w[1] = min(w[0], s), max(w[1], e)
    if wins:
        return sorted(({"name": k, "start": s, "end": e, "source": "kernel arg"}
                       for k, (s, e) in wins.items()), key=lambda w: (w["start"], w["name"]))
    bt = loaded.tracks.get(names.BARRIER)
    bounds = [0] + (bt.ends if bt else []) + [loaded.end]
    return [{"name": f"segment {i}", "start": a, "end": b, "source": "barriers"}
            for i, (a, b) in enumerate(zip(bounds, bounds[1:])) if b > a]


def is_summary(loaded):
    """A summary-detail trace (`--trace-detail summary`): kernels, barriers and counters, no
    instruction, DRAM-transaction or ring-transfer spans and no flows."""
    return loaded.meta.get("detail") == "summary"


def counter_integral(ts, vs, lo, hi):
    """The integral over cycles [lo, hi) of a counter that holds each sample until the next
    (0 before the first; the simulator closes every counter with a 0 sample)."""
    import bisect

    total = 0.0
    i = max(bisect.bisect_right(ts, lo) - 1, 0)
    while i < len(ts) and ts[i] < hi:
        a = max(ts[i], lo)
        b = min(ts[i + 1] if i + 1 < len(ts) else hi, hi)
        if b > a:
            total += vs[i] * (b - a)
        i += 1
    return total


def unit_kind(track):
    """pt0 -> pt, sfp1 -> sfp, dma_in -> dma_in, ring -> ring."""
    return track.rstrip("0123456789")


def busy_counters(loaded):
    """{(core group, unit track): (ts, vs)} of the units' busy-fraction counters."""
    out = {}
    for (g, n), tv in loaded.counters.items():
        if names.is_core(g) and n.endswith(names.BUSY_SUFFIX):
            out[(g, n[: -len(names.BUSY_SUFFIX)])] = tv
    return out


def unit_busy(loaded, lo, hi):
    """From the busy counters: {unit kind: (busy unit-cycles in [lo, hi), units counted)} and
    the set of cores with any busy unit there."""
    kinds, cores = {}, set()
    for (g, tr), (ts, vs) in busy_counters(loaded).items():
        b = counter_integral(ts, vs, lo, hi)
        acc = kinds.setdefault(unit_kind(tr), [0.0, 0])
        acc[0] += b
        acc[1] += 1
        if b > 0:
            cores.add(g)
    return {k: tuple(v) for k, v in kinds.items()}, cores


def _clip(tr, lo, hi):
    """Indices of the spans of a track that overlap [lo, hi)."""
    import bisect

    i = bisect.bisect_right(tr.ends, lo)
    out = []
    while i < len(tr.start) and tr.start[i] < hi:
        out.append(i)
        i += 1
    return out


def time_split(loaded, win):
    lo, hi = win["start"], win["end"]
    tot = {COMPUTE: 0, MEMORY: 0, SYNC: 0, "idle": 0}
    cores_used = 0
    groups = sorted({g for g, _ in loaded.tracks if names.is_core(g)})
    for g in groups:
        by = {COMPUTE: [], MEMORY: [], SYNC: []}
        last = None
        for tr in loaded.core_tracks(g):
            for i in _clip(tr, lo, hi):
                s, e = max(tr.start[i], lo), min(tr.ends[i], hi)
                c = tr.cls[i]
                if c in by and e > s:
                    by[c].append((s, e))
                if c != OTHER:
                    last = e if last is None else max(last, e)
        if last is None:
            continue
        cores_used += 1
        if last < hi:
            by[SYNC].append((last, hi))  # done with its part: waiting for the others
        c = merged_length(by[COMPUTE])
        cm = merged_length(by[COMPUTE] + by[MEMORY])
        cms = merged_length(by[COMPUTE] + by[MEMORY] + by[SYNC])
        tot[COMPUTE] += c
        tot[MEMORY] += cm - c
        tot[SYNC] += cms - cm
        tot["idle"] += (hi - lo) - cms
    return tot, cores_used


def _peaks(loaded, arch):
    clock = float(loaded.meta.get("clock_ghz") or param(arch, "chip.clock_ghz", 1.0))
    width, rate = param(arch, "dram.channel_width_bits"), param(arch, "dram.data_rate_mtps")
    ch_peak = width / 8 * rate / 1000.0 if width and rate else None
    link = param(arch, "ring.link_bytes_per_cycle")
    return clock, ch_peak, (link * clock if link else None)


def bandwidth_from_counters(loaded, arch):
    """bandwidth() of a summary trace: DRAM bytes from each channel's GB/s counter (GB/s is
    bytes per ns: bytes = integral over cycles / clock_ghz), ring links' busy cycles from their
    utilisation counters (their bytes are not recorded)."""
    clock, ch_peak, link_peak = _peaks(loaded, arch)
    run = max(loaded.end, 1)
    rows = []
    for (g, n), (ts, vs) in sorted(loaded.counters.items(),
                                   key=lambda kv: (kv[0][0], natural_key(kv[0][1]))):
        whole = max(run, ts[-1]) + 1  # a counter's last window may close after the last kernel
        if names.is_dram(g) and n.endswith(" GB/s"):
            nbytes = round(counter_integral(ts, vs, 0, whole) / clock)
            busy, kind, peak, track = None, "dram", ch_peak, n[: -len(" GB/s")]
        elif names.is_ring(g) and n.endswith(" util"):
            nbytes, kind, peak, track = None, "ring", link_peak, n[: -len(" util")]
            busy = round(counter_integral(ts, vs, 0, whole))
        else:
            continue
        gbps = nbytes / run * clock if nbytes is not None else None
        rows.append({"kind": kind, "track": f"{g}/{track}", "transfers": None, "bytes": nbytes,
                     "bytes_from": "counter" if nbytes is not None else "unknown",
                     "busy_cycles": busy, "busy_frac": busy / run if busy is not None else None,
                     "achieved_gbps": gbps, "peak_gbps": peak,
                     "of_peak": gbps / peak if gbps is not None and peak else None})
    return rows


def bandwidth(loaded, arch):
    """Per DRAM channel and ring link: bytes, busy cycles, achieved and peak GB/s over the run."""
    if is_summary(loaded):
        return bandwidth_from_counters(loaded, arch)
    clock, ch_peak, link_peak = _peaks(loaded, arch)
    run = max(loaded.end, 1)
    word = param(arch, "dram.word_bytes")
    rows = []
    for tr in loaded.ordered_tracks():
        if names.is_dram(tr.group) and tr.name.startswith("ch"):
            kind, peak, unit = "dram", ch_peak, word
        elif names.is_ring(tr.group) or tr.name.startswith("link"):
            kind, peak, unit = "ring", link_peak, None
        else:
            continue
        idx = [i for i in range(len(tr.start)) if tr.cls[i] == MEMORY]
        known = [tr.nbytes[i] for i in idx if tr.nbytes[i] is not None]
        if len(known) == len(idx):
            nbytes, how = sum(known), "bytes arg"
        elif unit:
            nbytes = sum(tr.nbytes[i] if tr.nbytes[i] is not None else unit for i in idx)
            how = "word per span"
        else:
            nbytes, how = None, "unknown"
        busy = merged_length([(tr.start[i], tr.ends[i]) for i in idx])
        gbps = nbytes / run * clock if nbytes is not None else None
        rows.append({"kind": kind, "track": tr.key, "transfers": len(idx), "bytes": nbytes,
                     "bytes_from": how, "busy_cycles": busy, "busy_frac": busy / run,
                     "achieved_gbps": gbps, "peak_gbps": peak,
                     "of_peak": gbps / peak if gbps is not None and peak else None})
    return rows


def critical_path(loaded, win, max_steps=200000):
    """Walks back from the span that finishes the kernel last.

    From span S (start s) on track T, the step back goes to what S waited for, the candidate
    that ended last among: T's previous work span if it ended within SLACK of s (the unit was
    busy), and the producers of the flow events (token signals) that end at S. A wait span just
    before S joins the path as the chain's record. Traces without flows: if T's previous span is
    a wait that ended within SLACK of s, the producer is the latest-ending work span of the same
    core on another track that ended by the wait's end; else if T's previous span ended within
    SLACK, it; else (S waited to be issued) the latest-ending work span of the core before s.
    Stops at the kernel start.
    """
    lo, hi = win["start"], win["end"]
    cands = []
    for tr in loaded.tracks.values():
        if not names.is_core(tr.group):
            continue
        for i in _clip(tr, lo, hi):
            if tr.cls[i] in (COMPUTE, MEMORY):
                cands.append((tr.ends[i], tr.key, tr, i))
    if not cands:
        return None
    _, _, tr, i = max(cands, key=lambda c: (c[0], c[1]))
    flows_to = _flows_by_dst(loaded)
    steps = []
    seen = set()
    while len(steps) < max_steps and (tr.key, i) not in seen:
        seen.add((tr.key, i))
        steps.append((tr, i))
        s = tr.start[i]
        if s <= lo + SLACK:
            break
        p = tr.last_ending_before(s + SLACK)
        if p == i:
            p = tr.last_ending_before(s) if i > 0 else None
        adjacent = p is not None and tr.ends[p] >= s - SLACK
        srcs = flows_to.get((tr.group, tr.name, s))
        if srcs:
            options = [_span_at(loaded, src) for src in srcs]
            if adjacent and tr.cls[p] != SYNC:
                options.append((tr, p))
            options = [o for o in options if o is not None]
            nxt = max(options, key=lambda o: o[0].ends[o[1]]) if options else None
            if adjacent and tr.cls[p] == SYNC:
                steps.append((tr, p))
        elif adjacent and tr.cls[p] == SYNC:
            steps.append((tr, p))
            nxt = _producer(loaded, tr, tr.ends[p])
        elif adjacent:
            nxt = (tr, p)
        else:
            nxt = _producer(loaded, tr, s, same_track_ok=True)
        if nxt is None or nxt[0].ends[nxt[1]] <= lo:
            break
        tr, i = nxt
    return _summarise_path(steps, win)


def _flows_by_dst(loaded):
    """Flow sources by their consumer (group, track, start), built once per trace."""
    if getattr(loaded, "_flows_to", None) is None:
        idx = {}
        for f in loaded.flows:
            d, src = f.get("dst") or {}, f.get("src") or {}
            idx.setdefault((d.get("group"), d.get("track"), d.get("t")), []).append(src)
        loaded._flows_to = idx
    return loaded._flows_to


def _span_at(loaded, ref):
    """The span a flow end points at: the one starting at ref["t"] on its track."""
    import bisect

    tr = loaded.tracks.get((ref.get("group"), ref.get("track")))
    if tr is None or ref.get("t") is None:
        return None
    j = bisect.bisect_right(tr.start, int(ref["t"])) - 1
    inside = j >= 0 and tr.start[j] <= ref["t"] < max(tr.ends[j], tr.start[j] + 1)
    return (tr, j) if inside else None


def _producer(loaded, tr, t, same_track_ok=False):
    best = None
    for other in loaded.core_tracks(tr.group):
        if other is tr and not same_track_ok:
            continue
        j = other.last_ending_before(t + SLACK)
        while j is not None and other.cls[j] not in (COMPUTE, MEMORY):
            j = j - 1 if j > 0 else None
        if j is not None and (best is None or other.ends[j] > best[0].ends[best[1]]):
            best = (other, j)
    return best


def _summarise_path(steps, win):
    """Path time, win start to finish, counted once: the parts of the path's compute and memory
    spans not overlapped by later path spans; the rest of the time is sync (token waits, issue,
    start-up: the path was waiting, not working)."""
    lo = win["start"]
    by_cls = {COMPUTE: 0, MEMORY: 0, SYNC: 0}
    frontier = None
    for tr, i in steps:  # latest first
        if tr.cls[i] not in (COMPUTE, MEMORY):
            continue
        end = tr.ends[i] if frontier is None else min(tr.ends[i], frontier)
        beg = max(tr.start[i], lo)
        if end > beg:
            by_cls[tr.cls[i]] += end - beg
        frontier = beg if frontier is None else min(frontier, beg)
    steps = list(reversed(steps))
    last_tr, last_i = steps[-1]
    finish = last_tr.ends[last_i]
    by_cls[SYNC] = (finish - lo) - by_cls[COMPUTE] - by_cls[MEMORY]
    segs = []
    for tr, i in steps:
        c = tr.cls[i]
        if segs and segs[-1]["track"] == tr.key and segs[-1]["class"] == c:
            seg = segs[-1]
            seg["spans"] += 1
            seg["end"] = tr.ends[i]
        else:
            segs.append({"track": tr.key, "class": c, "name": tr.label[i], "spans": 1,
                         "start": tr.start[i], "end": tr.ends[i]})
    return {"finisher": last_tr.key, "finish_cycle": finish, "path_spans": len(steps),
            "cycles_by_class": by_cls, "segments": segs}
