#include "spyre/traces/perfetto.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "protowire.h"
#include "spyre/error.h"

namespace spyre::traces {

namespace {
// Field numbers (perfetto/protos/perfetto/trace/...).
enum : int {
  kTracePacket = 1,  // Trace.packet
  kPktTimestamp = 8,
  kPktSeqId = 10,  // trusted_packet_sequence_id
  kPktTrackEvent = 11,
  kPktInterned = 12,
  kPktSeqFlags = 13,
  kPktTrackDescriptor = 60,
  kTdUuid = 1,
  kTdName = 2,
  kTdParent = 5,
  kTdCounter = 8,
  kTeAnnotation = 4,
  kTeType = 9,
  kTeNameIid = 10,
  kTeTrackUuid = 11,
  kTeDoubleCounter = 44,
  kTeFlowIds = 47,
  kTeTerminatingFlowIds = 48,
  kIdEventNames = 2,
  kIdAnnNames = 3,
  kIdAnnStrings = 29,
  kDaNameIid = 1,
  kDaUint = 3,
  kDaInt = 4,
  kDaDouble = 5,
  kDaString = 6,
  kDaStringIid = 17,
};
enum : uint64_t { kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4 };
enum : uint64_t { kSeqCleared = 1, kSeqNeedsState = 2 };
constexpr uint64_t kSeq = 1;

std::string meta_json(const TraceMeta& m) {
  std::string s = "{\"format\":\"perfetto\",\"version\":" + std::to_string(kTraceFormatVersion) +
                  ",\"clock_ghz\":";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", m.clock_ghz);
  s += buf;
  s += ",\"graph\":\"";
  for (char c : m.graph) {
    if (c == '"' || c == '\\') s += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    s += c;
  }
  s += "\",\"cores\":" + std::to_string(m.cores) +
       ",\"counter_window_cycles\":" + std::to_string(m.counter_window_cycles) + ",\"detail\":\"" +
       trace_detail_name(m.detail) +
       "\",\"arch\":" + (m.arch_json.empty() ? std::string("{}") : m.arch_json) + "}";
  return s;
}
}  // namespace

PerfettoTraceWriter::PerfettoTraceWriter(std::string path, const TraceMeta& meta)
    : path_(std::move(path)), file_(path_, "wb"), clock_ghz_(meta.clock_ghz) {
  f_ = file_.get();
  root_uuid_ = new_uuid();
  descriptor(root_uuid_, 0, "spyre-sim", false);
  ev_.clear();
  pb::u64(ev_, kTeType, kInstant);
  pb::u64(ev_, kTeTrackUuid, root_uuid_);
  pb::u64(ev_, kTeNameIid, intern(names_, kIdEventNames, "spyre_sim.meta"));
  ann_str("meta", meta_json(meta), false);
  emit_event(0);
}

uint64_t PerfettoTraceWriter::ns(uint64_t cycle) const {
  return static_cast<uint64_t>(std::llround(static_cast<double>(cycle) / clock_ghz_));
}

void PerfettoTraceWriter::write_packet(const std::string& body) {
  scratch2_.clear();
  pb::bytes(scratch2_, kTracePacket, body);
  std::fwrite(scratch2_.data(), 1, scratch2_.size(), f_);
}

void PerfettoTraceWriter::descriptor(uint64_t uuid, uint64_t parent, std::string_view name,
                                     bool counter) {
  scratch_.clear();
  pb::u64(scratch_, kTdUuid, uuid);
  if (parent) pb::u64(scratch_, kTdParent, parent);
  pb::bytes(scratch_, kTdName, name);
  if (counter) pb::bytes(scratch_, kTdCounter, {});
  pkt_.clear();
  pb::u64(pkt_, kPktSeqId, kSeq);
  if (first_packet_) {
    pb::u64(pkt_, kPktSeqFlags, kSeqCleared);
    first_packet_ = false;
  }
  pb::bytes(pkt_, kPktTrackDescriptor, scratch_);
  write_packet(pkt_);
}

uint64_t PerfettoTraceWriter::intern(Table& table, int interned_field, std::string_view s) {
  auto it = table.find(s);
  if (it != table.end()) return it->second;
  const uint64_t iid = table.size() + 1;
  table.emplace(std::string(s), iid);
  scratch_.clear();
  pb::u64(scratch_, 1, iid);
  pb::bytes(scratch_, 2, s);  // EventName.name, DebugAnnotationName.name, InternedString.str
  pb::bytes(interned_, interned_field, scratch_);
  return iid;
}

void PerfettoTraceWriter::ann_uint(std::string_view name, uint64_t v) {
  const uint64_t n = intern(ann_names_, kIdAnnNames, name);
  scratch_.clear();  // intern() used scratch_
  pb::u64(scratch_, kDaNameIid, n);
  pb::u64(scratch_, kDaUint, v);
  pb::bytes(ev_, kTeAnnotation, scratch_);
}

void PerfettoTraceWriter::ann_int(std::string_view name, int64_t v) {
  const uint64_t n = intern(ann_names_, kIdAnnNames, name);
  scratch_.clear();
  pb::u64(scratch_, kDaNameIid, n);
  pb::i64(scratch_, kDaInt, v);
  pb::bytes(ev_, kTeAnnotation, scratch_);
}

void PerfettoTraceWriter::ann_double(std::string_view name, double v) {
  const uint64_t n = intern(ann_names_, kIdAnnNames, name);
  scratch_.clear();
  pb::u64(scratch_, kDaNameIid, n);
  pb::f64(scratch_, kDaDouble, v);
  pb::bytes(ev_, kTeAnnotation, scratch_);
}

void PerfettoTraceWriter::ann_str(std::string_view name, std::string_view v, bool interned) {
  const uint64_t n = intern(ann_names_, kIdAnnNames, name);
  const uint64_t sv = interned ? intern(strings_, kIdAnnStrings, v) : 0;
  scratch_.clear();
  pb::u64(scratch_, kDaNameIid, n);
  if (interned)
    pb::u64(scratch_, kDaStringIid, sv);
  else
    pb::bytes(scratch_, kDaString, v);
  pb::bytes(ev_, kTeAnnotation, scratch_);
}

void PerfettoTraceWriter::emit_event(uint64_t ts_ns) {
  pkt_.clear();
  pb::u64(pkt_, kPktTimestamp, ts_ns);
  pb::u64(pkt_, kPktSeqId, kSeq);
  pb::u64(pkt_, kPktSeqFlags, kSeqNeedsState);
  if (!interned_.empty()) {
    pb::bytes(pkt_, kPktInterned, interned_);
    interned_.clear();
  }
  pb::bytes(pkt_, kPktTrackEvent, ev_);
  write_packet(pkt_);
  ev_.clear();
}

uint64_t PerfettoTraceWriter::group_uuid(std::string_view group) {
  auto it = groups_.find(group);
  if (it != groups_.end()) return it->second;
  const uint64_t u = new_uuid();
  groups_.emplace(std::string(group), u);
  descriptor(u, 0, group, false);
  return u;
}

int PerfettoTraceWriter::track(std::string_view group, std::string_view track) {
  auto key = std::make_pair(std::string(group), std::string(track));
  auto it = track_ids_.find(key);
  if (it != track_ids_.end()) return it->second;
  const uint64_t parent = group_uuid(group);
  const uint64_t u = new_uuid();
  descriptor(u, parent, track, false);
  tracks_.push_back(Track{parent, std::string(track), {u}, {0}});
  const int id = static_cast<int>(tracks_.size()) - 1;
  track_ids_.emplace(std::move(key), id);
  return id;
}

void PerfettoTraceWriter::span(int track, std::string_view name, uint64_t start, uint64_t dur,
                               const SpanArgs& a) {
  Track& t = tracks_.at(static_cast<size_t>(track));
  size_t lane = 0;
  while (lane < t.lane_end.size() && t.lane_end[lane] > start) ++lane;
  if (lane == t.lane_end.size()) {
    const uint64_t u = new_uuid();
    descriptor(u, t.parent, t.name + " #" + std::to_string(lane + 1), false);
    t.lane_uuid.push_back(u);
    t.lane_end.push_back(0);
  }
  t.lane_end[lane] = start + dur;
  const uint64_t uuid = t.lane_uuid[lane];
  ev_.clear();
  pb::u64(ev_, kTeType, kSliceBegin);
  pb::u64(ev_, kTeTrackUuid, uuid);
  const uint64_t name_iid = intern(names_, kIdEventNames, name);
  pb::u64(ev_, kTeNameIid, name_iid);
  ann_uint("cycle", start);
  ann_uint("cycles", dur);
  if (!a.kernel.empty()) ann_str("kernel", a.kernel, true);
  if (a.core >= 0) ann_int("core", a.core);
  if (a.pc >= 0) ann_int("pc", a.pc);
  if (!a.detail.empty()) ann_str("detail", a.detail, false);
  if (a.lx) {
    // "r 4096+512 w 0+2048": addr+bytes per access; the reader turns it back into a list.
    std::string s;
    for (const LxAccess& x : *a.lx) {
      if (!s.empty()) s += ' ';
      s += x.write ? "w " : "r ";
      s += std::to_string(x.addr) + "+" + std::to_string(x.bytes);
    }
    ann_str("lx", s, false);
  }
  if (a.extra)
    for (const Arg& x : *a.extra) switch (x.kind) {
        case Arg::Kind::Int: ann_int(x.key, x.i); break;
        case Arg::Kind::Double: ann_double(x.key, x.d); break;
        case Arg::Kind::Str: ann_str(x.key, x.s, false); break;
      }
  emit_event(ns(start));
  pb::u64(ev_, kTeType, kSliceEnd);
  pb::u64(ev_, kTeTrackUuid, uuid);
  emit_event(ns(start + dur));
}

void PerfettoTraceWriter::counter(std::string_view group, std::string_view name, uint64_t cycle,
                                  double value) {
  const auto at =
      reinterpret_cast<uintptr_t>(group.data()) ^ (reinterpret_cast<uintptr_t>(name.data()) >> 3);
  CounterHint& hint = counter_hints_[(at ^ (at >> 9)) & (counter_hints_.size() - 1)];
  const std::pair<const std::pair<std::string, std::string>, uint64_t>* entry = nullptr;
  if (hint.entry && hint.group == group.data() && hint.name == name.data() &&
      hint.entry->first.first == group && hint.entry->first.second == name) {
    entry = hint.entry;
  } else {
    auto it = counter_tracks_.find(std::make_pair(group, name));
    if (it == counter_tracks_.end()) {
      const uint64_t parent = group_uuid(group);
      const uint64_t u = new_uuid();
      descriptor(u, parent, name, true);
      it = counter_tracks_.emplace(std::make_pair(std::string(group), std::string(name)), u).first;
    }
    entry = &*it;
    hint = CounterHint{group.data(), name.data(), entry};
  }
  ev_.clear();
  pb::u64(ev_, kTeType, kCounter);
  pb::u64(ev_, kTeTrackUuid, entry->second);
  pb::f64(ev_, kTeDoubleCounter, value);
  ann_uint("cycle", cycle);
  emit_event(ns(cycle));
}

void PerfettoTraceWriter::flow(uint64_t id, int src_track, uint64_t src_cycle, int dst_track,
                               uint64_t dst_cycle) {
  for (int end = 0; end < 2; ++end) {
    const Track& t = tracks_.at(static_cast<size_t>(end ? dst_track : src_track));
    const uint64_t c = end ? dst_cycle : src_cycle;
    ev_.clear();
    pb::u64(ev_, kTeType, kInstant);
    pb::u64(ev_, kTeTrackUuid, t.lane_uuid[0]);
    pb::u64(ev_, kTeNameIid, intern(names_, kIdEventNames, "flow"));
    ann_uint("cycle", c);
    pb::fixed64(ev_, end ? kTeTerminatingFlowIds : kTeFlowIds, id);
    emit_event(ns(c));
  }
}

void PerfettoTraceWriter::finish() {
  if (!f_) return;
  f_ = nullptr;
  file_.commit();
}

}  // namespace spyre::traces
