"""The .pftrace writer against Perfetto's field numbers: our files are decoded with the official
protobuf runtime using tests/python/data/perfetto_subset.proto (Perfetto's numbers for the
messages we write) and must hold no field the subset does not know; the events rebuilt from
that decoding must equal what spyre_sim.trace.read gives."""

import pathlib
import re

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.unknown_fields import UnknownFieldSet

from spyre_sim.trace.read import open_trace

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROTO = ROOT / "tests" / "python" / "data" / "perfetto_subset.proto"
IR = ROOT / "tests" / "data" / "ir"

_SCALARS = {name: getattr(descriptor_pb2.FieldDescriptorProto, "TYPE_" + name.upper())
            for name in ("uint64", "uint32", "int64", "double", "string", "bytes", "fixed64")}


def load_proto_classes():
    """A tiny reader for the flat proto2 subset (messages, one top-level enum, scalar and
    message fields): enough to build descriptors without protoc."""
    text = re.sub(r"//[^\n]*", "", PROTO.read_text())
    pkg = re.search(r"package\s+([\w.]+);", text).group(1)
    fd = descriptor_pb2.FileDescriptorProto(name="perfetto_subset.proto", package=pkg,
                                            syntax="proto2")
    for name, body in re.findall(r"enum\s+(\w+)\s*{([^}]*)}", text):
        e = fd.enum_type.add(name=name)
        for vname, num in re.findall(r"(\w+)\s*=\s*(\d+);", body):
            e.value.add(name=vname, number=int(num))
    enums = {e.name for e in fd.enum_type}
    for name, body in re.findall(r"message\s+(\w+)\s*{([^}]*)}", text):
        m = fd.message_type.add(name=name)
        field_re = r"(optional|repeated)\s+(\w+)\s+(\w+)\s*=\s*(\d+);"
        for label, typ, fname, num in re.findall(field_re, body):
            f = m.field.add(name=fname, number=int(num))
            f.label = (descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED if label == "repeated"
                       else descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
            if typ in _SCALARS:
                f.type = _SCALARS[typ]
            elif typ in enums:
                f.type = descriptor_pb2.FieldDescriptorProto.TYPE_ENUM
                f.type_name = f".{pkg}.{typ}"
            else:
                f.type = descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE
                f.type_name = f".{pkg}.{typ}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return lambda n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{pkg}.{n}"))


def assert_no_unknown_fields(msg, where="Trace"):
    unknown = UnknownFieldSet(msg)
    assert len(unknown) == 0, f"{where}: fields {[f.field_number for f in unknown]} unknown"
    for fdesc, value in msg.ListFields():
        if fdesc.message_type is None:
            continue
        items = value if fdesc.is_repeated else [value]
        for i, v in enumerate(items):
            assert_no_unknown_fields(v, f"{where}.{fdesc.name}[{i}]")


@pytest.fixture(scope="module", params=["full", "summary"])
def pftrace(tmp_path_factory, request):
    from conftest import run_cli
    d = tmp_path_factory.mktemp("pf")
    r = run_cli("run", IR / "matmul.json", "--trace", d / "t.pftrace", "--trace-detail",
                request.param, "--out", d / "o")
    assert r.returncode == 0, r.stderr
    return d / "t.pftrace"


def rebuild_events(trace_msg):
    """Events from the protobuf-decoded trace, following Perfetto's rules (interning per
    sequence, slices as BEGIN/END pairs per track uuid, flows by id)."""
    names, ann_names, strings, tracks = {}, {}, {}, {}
    open_slices, spans, counters, flows, open_flows = {}, [], [], [], {}
    clock = None
    for i, p in enumerate(trace_msg.packet):
        assert p.trusted_packet_sequence_id == 1
        if i == 0:
            assert p.sequence_flags & 1, "first packet must clear the incremental state"
        if p.HasField("interned_data"):
            for x in p.interned_data.event_names:
                names[x.iid] = x.name
            for x in p.interned_data.debug_annotation_names:
                ann_names[x.iid] = x.name
            for x in p.interned_data.debug_annotation_string_values:
                strings[x.iid] = x.str.decode()
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            assert td.uuid not in tracks, "track uuid declared twice"
            assert td.parent_uuid == 0 or td.parent_uuid in tracks, "parent declared first"
            parent = tracks.get(td.parent_uuid, (None, None))[1]
            tracks[td.uuid] = (parent, re.sub(r" #\d+$", "", td.name)
                               if not td.HasField("counter") else td.name)
        if not p.HasField("track_event"):
            continue
        te = p.track_event
        assert te.track_uuid in tracks, "event on an undeclared track"
        anns = {}
        for a in te.debug_annotations:
            key = ann_names[a.name_iid]
            for field in ("uint_value", "int_value", "double_value", "string_value"):
                if a.HasField(field):
                    anns[key] = getattr(a, field)
            if a.HasField("string_value_iid"):
                anns[key] = strings[a.string_value_iid]
        if names.get(te.name_iid) == "spyre_sim.meta":
            import json
            clock = json.loads(anns["meta"])["clock_ghz"]
            continue
        group, track = tracks[te.track_uuid]
        if te.type == 1:
            assert te.track_uuid not in open_slices, "slices on one track must not overlap"
            assert p.timestamp == round(anns["cycle"] / clock), "ns timestamp from the cycle"
            open_slices[te.track_uuid] = (p.timestamp, anns["cycle"] + anns["cycles"])
            args = {k: v for k, v in anns.items() if k not in ("cycle", "cycles")}
            spans.append((group, track, names[te.name_iid], anns["cycle"], anns["cycles"],
                          tuple(sorted((k, str(v)) for k, v in args.items()))))
        elif te.type == 2:
            ts, end_cycle = open_slices.pop(te.track_uuid)
            assert p.timestamp >= ts and p.timestamp == round(end_cycle / clock)
        elif te.type == 4:
            counters.append((group, track, anns["cycle"], te.double_counter_value))
        elif te.type == 3:
            for fid in te.flow_ids:
                open_flows[fid] = (group, track, anns["cycle"])
            for fid in te.terminating_flow_ids:
                flows.append((fid, open_flows.pop(fid), (group, track, anns["cycle"])))
    assert not open_slices, "every slice begin has its end"
    return spans, counters, flows


def test_pftrace_decodes_with_perfettos_field_numbers(pftrace):
    cls = load_proto_classes()
    trace = cls("Trace")()
    trace.ParseFromString(pftrace.read_bytes())
    assert len(trace.packet) > 100
    assert_no_unknown_fields(trace)
    spans, counters, flows = rebuild_events(trace)

    ours = list(open_trace(str(pftrace)).events())
    def args_key(a):
        a = dict(a)
        if "lx" in a:  # the reader turns the compact string back into a list
            a["lx"] = " ".join(f"{rw} {addr}+{n}" for addr, n, rw in a["lx"])
        return tuple(sorted((k, str(v)) for k, v in a.items()))
    assert sorted(spans) == sorted(
        (e["group"], e["track"], e["name"], e["start"], e["dur"], args_key(e["args"]))
        for e in ours if e["ph"] == "span")
    assert sorted(counters) == sorted((e["group"], e["name"], e["t"], e["value"])
                                      for e in ours if e["ph"] == "counter")
    assert sorted(flows) == sorted(
        (e["id"], (e["src"]["group"], e["src"]["track"], e["src"]["t"]),
         (e["dst"]["group"], e["dst"]["track"], e["dst"]["t"])) for e in ours if e["ph"] == "flow")
    assert counters and spans
    summary = open_trace(str(pftrace)).meta["detail"] == "summary"
    assert bool(flows) != summary  # a summary trace has no flows, a full one has them
