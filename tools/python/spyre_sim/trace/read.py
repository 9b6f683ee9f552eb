"""Reading spyre-sim traces into one event model (times in integer cycles).

    t = open_trace("trace.json")     # or "run.pftrace": chosen by magic, not by extension
    t.meta      # {"clock_ghz", "arch", "graph", "cores", "format", "version", "detail", ...}
    for e in t.events(): ...   # streamed: the file is read as it is iterated

    span:    {"ph": "span", "group", "track", "name", "start", "dur", "args"}
    counter: {"ph": "counter", "group", "name", "t", "value"}
    flow:    {"ph": "flow", "id", "src": {"group", "track", "t"}, "dst": {...}}

Instruction spans carry args "kernel", "core", "pc" (static index in that core's stream),
with hardware loops also "dyn" (dynamic index: position in the expanded stream, the index the
compile report's LX plan counts; instr_index() picks it) and, inside a loop, "iter" (the
innermost loop's iteration), "detail" and, when the instruction touches this core's LX, "lx": [[addr, bytes, "r"|"w"], ...] (sorted,
disjoint; the exact bytes read and written). Events come in file order, which is the order
the simulator finished them, not sorted by time. traces/README.md documents both formats.

- Chrome JSON (traces/src/chrome.cpp): line 1 is the metadata, then one event per line; ts/dur
  in microseconds to the picosecond, so round(ts * clock_ghz * 1000) is the exact cycle. Older
  files (no metadata line, the cycle in args "cycle"/"cycles") are read whole.
- Perfetto protobuf (traces/src/perfetto.cpp): decoded here with a small wire-format reader;
  exact cycles come from the "cycle"/"cycles" debug annotations.
"""

import json
import os
import struct

from . import names


def instr_index(args):
    """An instruction span's dynamic index: "dyn" where the stream has hardware loops, else
    "pc" (the same number there); None when the span carries neither."""
    return args.get("dyn", args.get("pc"))


class TraceError(Exception):
    """A trace file that cannot be read; the message names the file."""


def open_trace(path):
    if not os.path.exists(path):
        raise TraceError(f"{path}: no such file")
    with open(path, "rb") as f:
        head = f.read(1)
    if head == b"\x0a":  # Trace.packet (field 1, length-delimited): a Perfetto trace
        return _PerfettoTrace(path)
    return _ChromeTrace(path)


class Trace:
    """Common part: `path`, `meta`, `events()`."""

    def __init__(self, path, meta):
        self.path = path
        self.meta = meta

    def events(self):
        raise NotImplementedError


def _norm_meta(given, writer):
    meta = {"clock_ghz": given.get("clock_ghz"), "arch": given.get("arch") or {},
            "graph": given.get("graph"), "cores": given.get("cores"),
            "format": given.get("format") or writer, "version": given.get("version"),
            "counter_window_cycles": given.get("counter_window_cycles"),
            # "summary" or "full" (traces/README.md, "Detail"); files from before it are full
            "detail": given.get("detail") or "full"}
    return meta


# ---- Chrome JSON ----

class _ChromeTrace(Trace):
    def __init__(self, path):
        self._whole = None
        given = self._read_meta_line(path)
        if given is None:  # not the line format: read the whole document
            try:
                with open(path, "rb") as f:
                    doc = json.load(f)
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
                raise TraceError(f"{path}: not a readable trace (Chrome trace-event JSON or "
                                 f"Perfetto protobuf expected): {e}")
            raw = doc.get("traceEvents") if isinstance(doc, dict) else doc
            if not isinstance(raw, list):
                raise TraceError(f"{path}: no traceEvents array (Chrome trace-event JSON "
                                 "expected)")
            self._whole = raw
            given = doc.get("metadata", {}) if isinstance(doc, dict) else {}
        meta = _norm_meta(given, "chrome-json")
        if not meta["clock_ghz"]:
            meta["clock_ghz"] = _infer_clock(self._whole or [])
        super().__init__(path, meta)
        if meta["cores"] is None:
            groups = set()
            for e in self._raw():
                if e.get("ph") == "M" and e.get("name") == "process_name":
                    name = str((e.get("args") or {}).get("name"))
                    if names.is_core(name):
                        groups.add(name)
            meta["cores"] = len(groups)

    @staticmethod
    def _read_meta_line(path):
        try:
            with open(path, "rb") as f:
                line = f.readline(1 << 26).decode("utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if not (line.startswith("{") and line.endswith(",")):
            return None
        try:
            doc = json.loads(line[:-1] + "}")
        except json.JSONDecodeError:
            return None
        return doc.get("metadata") if isinstance(doc.get("metadata"), dict) else None

    def _raw(self):
        if self._whole is not None:
            yield from self._whole
            return
        with open(self.path, "rb") as f:
            f.readline()  # metadata
            for line in f:
                line = line.strip()
                if not line.startswith(b"{"):
                    continue  # "traceEvents":[ and the closing ]}
                if line.endswith(b","):
                    line = line[:-1]
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    raise TraceError(f"{self.path}: malformed event line: {e}")

    def _cycles(self, us):
        return int(round(float(us) * float(self.meta["clock_ghz"]) * 1000.0))

    def events(self):
        groups, tracks, open_flows = {}, {}, {}
        for e in self._raw():
            ph = e.get("ph")
            pid = e.get("pid")
            if ph == "M":
                name = (e.get("args") or {}).get("name")
                if e.get("name") == "process_name":
                    groups[pid] = str(name)
                elif e.get("name") == "thread_name":
                    tracks[(pid, e.get("tid"))] = str(name)
            elif ph == "X":
                args = dict(e.get("args") or {})
                start, dur = args.pop("cycle", None), args.pop("cycles", None)
                if start is None:
                    start = self._cycles(e.get("ts", 0))
                if dur is None:
                    dur = self._cycles(e.get("dur", 0))
                if args.get("kernel") == "":
                    del args["kernel"]
                yield {"ph": "span", "group": groups.get(pid, str(pid)),
                       "track": tracks.get((pid, e.get("tid")), str(e.get("tid"))),
                       "name": str(e.get("name", "")), "start": int(start), "dur": int(dur),
                       "args": args}
            elif ph == "C":
                args = e.get("args") or {}
                value = args.get("value", next(iter(args.values()), 0) if args else 0)
                yield {"ph": "counter", "group": groups.get(pid, str(pid)),
                       "name": str(e.get("name", "")), "t": self._cycles(e.get("ts", 0)),
                       "value": float(value)}
            elif ph in ("s", "f"):
                end = {"group": groups.get(pid, str(pid)),
                       "track": tracks.get((pid, e.get("tid")), str(e.get("tid"))),
                       "t": self._cycles(e.get("ts", 0))}
                if ph == "s":
                    open_flows[e.get("id")] = end
                elif e.get("id") in open_flows:
                    yield {"ph": "flow", "id": int(e.get("id")),
                           "src": open_flows.pop(e.get("id")), "dst": end}


def _infer_clock(raw):
    # Old files kept exact cycles in args next to ts in microseconds: cycles / (ts * 1000).
    best = (0, 0.0)
    for e in raw:
        if e.get("ph") == "X":
            c = (e.get("args") or {}).get("cycle")
            ts = e.get("ts")
            if c and ts and c > best[0]:
                best = (c, ts)
    return round(best[0] / (best[1] * 1000.0), 3) if best[0] else 1.0


# ---- Perfetto protobuf ----

def _varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7


def _fields(buf):
    """(field number, wire type, value) of a message: ints for varint/fixed, bytes for LEN."""
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 1:
            v = buf[i:i + 8]
            i += 8
        elif wire == 2:
            ln, i = _varint(buf, i)
            v = buf[i:i + ln]
            i += ln
        elif wire == 5:
            v = buf[i:i + 4]
            i += 4
        else:
            raise ValueError(f"wire type {wire}")
        yield field, wire, v


def _packets(path):
    with open(path, "rb") as f:
        while True:
            head = f.read(1)
            if not head:
                return
            if head != b"\x0a":
                raise TraceError(f"{path}: not a Perfetto trace (packet tag {head!r})")
            shift = ln = 0
            while True:
                b = f.read(1)
                if not b:
                    raise TraceError(f"{path}: truncated packet")
                ln |= (b[0] & 0x7F) << shift
                shift += 7
                if b[0] < 0x80:
                    break
            body = f.read(ln)
            if len(body) != ln:
                raise TraceError(f"{path}: truncated packet")
            yield body


def _lx_list(s):
    toks = s.split()
    out = []
    for rw, ab in zip(toks[0::2], toks[1::2]):
        a, b = ab.split("+")
        out.append([int(a), int(b), rw])
    return out


class _PerfettoTrace(Trace):
    def __init__(self, path):
        meta = None
        try:
            for ev in self._decoded(path, limit_packets=64):
                if ev[0] == "event" and ev[2] == "spyre_sim.meta":
                    meta = json.loads(ev[4].get("meta", "{}"))
                    break
        except (ValueError, IndexError) as e:
            raise TraceError(f"{path}: malformed Perfetto trace: {e}")
        if meta is None:
            raise TraceError(f"{path}: no spyre_sim.meta event (not a spyre-sim Perfetto trace)")
        super().__init__(path, _norm_meta(meta, "perfetto"))

    @staticmethod
    def _decoded(path, limit_packets=None):
        """Yields ("track", uuid, parent, name, is_counter) and ("event", type, name,
        track_uuid, annotations, counter_value, flow_ids, terminating_flow_ids)."""
        names, ann_names, strings = {}, {}, {}
        for count, pkt in enumerate(_packets(path)):
            if limit_packets is not None and count >= limit_packets:
                return
            te = None
            for f, w, v in _fields(pkt):
                if f == 12:  # interned_data
                    for f2, _, v2 in _fields(v):
                        iid, text = 0, b""
                        for f3, _, v3 in _fields(v2):
                            if f3 == 1:
                                iid = v3
                            elif f3 == 2:
                                text = v3
                        table = {2: names, 3: ann_names, 29: strings}.get(f2)
                        if table is not None:
                            table[iid] = text.decode("utf-8")
                elif f == 60:  # track_descriptor
                    uuid = parent = 0
                    name, counter = "", False
                    for f2, _, v2 in _fields(v):
                        if f2 == 1:
                            uuid = v2
                        elif f2 == 5:
                            parent = v2
                        elif f2 == 2:
                            name = v2.decode("utf-8")
                        elif f2 == 8:
                            counter = True
                    yield ("track", uuid, parent, name, counter)
                elif f == 11:
                    te = v
            if te is None:
                continue
            typ, name, track, value = 0, "", 0, None
            anns, flows, terms = {}, [], []
            for f, w, v in _fields(te):
                if f == 9:
                    typ = v
                elif f == 10:
                    name = names.get(v, "")
                elif f == 23:
                    name = v.decode("utf-8")
                elif f == 11:
                    track = v
                elif f == 44:
                    value = struct.unpack("<d", v)[0]
                elif f == 47:
                    flows.append(struct.unpack("<Q", v)[0])
                elif f == 48:
                    terms.append(struct.unpack("<Q", v)[0])
                elif f == 4:
                    key, val = None, None
                    for f2, w2, v2 in _fields(v):
                        if f2 == 1:
                            key = ann_names.get(v2)
                        elif f2 == 10:
                            key = v2.decode("utf-8")
                        elif f2 == 3:
                            val = v2
                        elif f2 == 4:
                            val = v2 - (1 << 64) if v2 >= 1 << 63 else v2
                        elif f2 == 5:
                            val = struct.unpack("<d", v2)[0]
                        elif f2 == 6:
                            val = v2.decode("utf-8")
                        elif f2 == 17:
                            val = strings.get(v2)
                    if key is not None:
                        anns[key] = val
            yield ("event", typ, name, track, anns, value, flows, terms)

    def events(self):
        tracks = {}  # uuid -> (group, track name) or ("group", name) for top-level tracks
        open_flows = {}
        try:
            for ev in self._decoded(self.path):
                if ev[0] == "track":
                    _, uuid, parent, name, counter = ev
                    if parent == 0:
                        tracks[uuid] = (None, name)
                    else:
                        group = tracks.get(parent, (None, "?"))[1]
                        base = name
                        if not counter and " #" in name and name.rsplit(" #", 1)[1].isdigit():
                            base = name.rsplit(" #", 1)[0]  # an overflow lane of `base`
                        tracks[uuid] = (group, base)
                    continue
                _, typ, name, track, anns, value, flows, terms = ev
                group, tname = tracks.get(track, (None, "?"))
                if typ == 1:  # slice begin
                    args = {k: v for k, v in anns.items() if k not in ("cycle", "cycles")}
                    if "lx" in args:
                        args["lx"] = _lx_list(args["lx"])
                    yield {"ph": "span", "group": group, "track": tname, "name": name,
                           "start": int(anns.get("cycle", 0)), "dur": int(anns.get("cycles", 0)),
                           "args": args}
                elif typ == 4:
                    yield {"ph": "counter", "group": group, "name": tname,
                           "t": int(anns.get("cycle", 0)), "value": float(value or 0.0)}
                elif typ == 3 and (flows or terms):
                    end = {"group": group, "track": tname, "t": int(anns.get("cycle", 0))}
                    for fid in flows:
                        open_flows[fid] = end
                    for fid in terms:
                        if fid in open_flows:
                            yield {"ph": "flow", "id": fid, "src": open_flows.pop(fid),
                                   "dst": end}
        except (ValueError, IndexError, struct.error) as e:
            raise TraceError(f"{self.path}: malformed Perfetto trace: {e}")
