"""A trace loaded once into per-track span lists, shared by `report` and `view`.

Every span gets a class, the basis of the time split (README "trace report"):
  compute  non-wait spans on PT and SFP tracks (pt0, pt1, sfp0, sfp1, ...)
  memory   non-wait spans on DMA tracks (dma_in, dma_out), ring transfers, DRAM channels
  sync     spans named "wait ...", "stall ...", "drain ...", "barrier ..." on any track (the
           sequencer's stalls and drains too), and spans on barrier tracks
  other    everything else (sequencer issue, kernel spans, unknown tracks)
"""

import bisect
import re
from dataclasses import dataclass, field

from . import names
from .read import open_trace

COMPUTE, MEMORY, SYNC, OTHER = "compute", "memory", "sync", "other"
CLASSES = (COMPUTE, MEMORY, SYNC, OTHER)


def span_class(group, track, name):
    low = name.lower()
    if low.startswith(("wait", "stall", "drain", "barrier")) or track == "barrier":
        return SYNC
    if track.startswith(("pt", "sfp")):
        return COMPUTE
    if track.startswith(("dma", "link")) or track == "ring" or names.is_dram(group) \
            or names.is_ring(group):
        return MEMORY
    return OTHER


@dataclass
class Track:
    group: str
    name: str
    start: list = field(default_factory=list)
    dur: list = field(default_factory=list)
    label: list = field(default_factory=list)  # span name
    kernel: list = field(default_factory=list)  # "kernel" arg or ""
    cls: list = field(default_factory=list)
    nbytes: list = field(default_factory=list)  # "bytes" arg or None
    args: list = None  # all args, kept on chip/kernels only (predicted cycles, fusion group)
    ends: list = None  # filled by finish(): end times, for bisect

    @property
    def key(self):
        return f"{self.group}/{self.name}"

    def finish(self):
        order = sorted(range(len(self.start)), key=lambda i: (self.start[i], self.dur[i]))
        for attr in ("start", "dur", "label", "kernel", "cls", "nbytes", "args"):
            v = getattr(self, attr)
            if v is None:
                continue
            setattr(self, attr, [v[i] for i in order])
        self.ends = [s + d for s, d in zip(self.start, self.dur)]

    def last_ending_before(self, t, cls=None):
        """Index of the span with the latest end <= t (optionally of a class), or None."""
        # Spans on one track do not overlap, so ends are sorted with starts.
        i = bisect.bisect_right(self.ends, t) - 1
        while i >= 0 and cls is not None and self.cls[i] != cls:
            i -= 1
        return i if i >= 0 else None


_DETAIL_BYTES = re.compile(r"(?:^|[\s,=])(\d+) ?B\b")


def _bytes_of(args):
    """Bytes a transfer span moved: its "bytes" arg, or "<n> B" in its detail (ring xfers)."""
    b = args.get("bytes")
    if isinstance(b, (int, float)):
        return int(b)
    m = _DETAIL_BYTES.search(str(args.get("detail", "")))
    return int(m.group(1)) if m else None


def natural_key(s):
    return [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", s)]


TRACK_ORDER = {"kernels": 0, "barrier": 1, "seq": 0, "dma_in": 1, "pt0": 2, "pt1": 3, "sfp0": 4,
               "sfp1": 5, "dma_out": 6, "ring": 7}


def group_sort_key(group):
    rank = (0 if names.is_chip(group) else 1 if names.is_core(group) else
            3 if names.is_ring(group) else 4 if names.is_dram(group) else 2)
    return (rank, natural_key(group))


def track_sort_key(track):
    return (TRACK_ORDER.get(track, 50), natural_key(track))


@dataclass
class Loaded:
    path: str
    meta: dict
    tracks: dict  # (group, track) -> Track
    counters: dict  # (group, name) -> ([t], [value])
    flows: list
    end: int  # last cycle of the run (latest span end)

    def ordered_tracks(self):
        return sorted(self.tracks.values(),
                      key=lambda t: (group_sort_key(t.group), track_sort_key(t.name)))

    def core_tracks(self, group):
        return [t for (g, _), t in self.tracks.items() if g == group]


def windowed(loaded, lo, hi):
    """The part of a loaded trace inside cycles [lo, hi): spans that overlap it (whole), counter
    samples in it (plus the one in force at lo), flows with an end in it; `end` becomes hi."""
    import bisect as _b
    tracks = {}
    for key, tr in loaded.tracks.items():
        i = _b.bisect_right(tr.ends, lo)  # first span ending after lo
        j = _b.bisect_left(tr.start, hi)  # spans starting before hi
        keep = [k for k in range(i, j) if tr.ends[k] > lo]
        if not keep:
            continue
        w = Track(tr.group, tr.name)
        for attr in ("start", "dur", "label", "kernel", "cls", "nbytes", "args"):
            v = getattr(tr, attr)
            setattr(w, attr, None if v is None else [v[k] for k in keep])
        w.ends = [tr.ends[k] for k in keep]
        tracks[key] = w
    counters = {}
    for key, (ts, vs) in loaded.counters.items():
        i = max(_b.bisect_right(ts, lo) - 1, 0)
        j = _b.bisect_left(ts, hi)
        if i < j:
            counters[key] = (ts[i:j], vs[i:j])
    flows = [f for f in loaded.flows
             if lo <= f["src"]["t"] < hi or lo <= f["dst"]["t"] < hi]
    return Loaded(loaded.path, loaded.meta, tracks, counters, flows, hi)


def load(path):
    trace = open_trace(path)
    tracks, counters, flows = {}, {}, []
    end = cend = 0
    for e in trace.events():
        ph = e.get("ph")
        if ph == "span":
            key = (e["group"], e["track"])
            tr = tracks.get(key)
            if tr is None:
                tr = tracks[key] = Track(*key)
            args = e.get("args") or {}
            tr.start.append(int(e["start"]))
            tr.dur.append(int(e["dur"]))
            tr.label.append(e["name"])
            tr.kernel.append(str(args.get("kernel") or ""))
            tr.cls.append(span_class(e["group"], e["track"], e["name"]))
            tr.nbytes.append(_bytes_of(args))
            if key == names.KERNELS:
                if tr.args is None:
                    tr.args = []
                tr.args.append(args)
            end = max(end, int(e["start"]) + int(e["dur"]))
        elif ph == "counter":
            ts, vs = counters.setdefault((e["group"], e["name"]), ([], []))
            ts.append(int(e["t"]))
            vs.append(float(e["value"]))
            cend = max(cend, int(e["t"]))  # counter windows may close after the last span
        elif ph == "flow":
            flows.append(e)
    for tr in tracks.values():
        tr.finish()
    for ts, vs in counters.values():
        order = sorted(range(len(ts)), key=ts.__getitem__)
        ts[:] = [ts[i] for i in order]
        vs[:] = [vs[i] for i in order]
    meta = dict(trace.meta)
    return Loaded(path, meta, tracks, counters, flows, end or cend)
