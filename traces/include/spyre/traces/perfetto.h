#pragma once
// Perfetto protobuf trace writer (`.pftrace`): Trace { repeated TracePacket packet = 1 } with
// TrackDescriptor and TrackEvent packets, encoded directly (varints, length-delimited fields;
// field numbers from perfetto/protos/perfetto/trace/{trace_packet,track_event/*}.proto, listed
// in traces/README.md). Streamed packet by packet to a temporary file renamed on finish().
//
// One trusted sequence (id 1) with incremental state: event names, annotation names and kernel
// names are interned (InternedData) the first time they are used. Groups are top-level tracks,
// tracks are their children, counters are counter tracks under their group.
// Time: Perfetto timestamps are integer ns, which cannot hold every cycle at clocks above 1
// GHz, so every event also carries its exact cycle ("cycle", and "cycles" for a span's
// duration) as debug annotations; readers use those, the UI uses the ns timestamps.
// Spans that overlap on one track (DRAM transactions, kernels) go to extra lanes: child tracks
// named "<track> #2", ... (the reader folds them back into <track>).
// Flows: a pair of instants named "flow" (flow_ids on the producer track, terminating_flow_ids
// on the consumer track), written next to each other.
// The metadata is the first event: an instant "spyre_sim.meta" whose annotation "meta" is the
// JSON of TraceMeta.
#include <array>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "spyre/traces/atomic_file.h"
#include "spyre/traces/sink.h"

namespace spyre::traces {

class PerfettoTraceWriter : public TraceSink {
 public:
  PerfettoTraceWriter(std::string path, const TraceMeta& meta);
  int track(std::string_view group, std::string_view track) override;
  void span(int track, std::string_view name, uint64_t start_cycle, uint64_t dur_cycles,
            const SpanArgs& args) override;
  using TraceSink::span;
  void counter(std::string_view group, std::string_view name, uint64_t cycle,
               double value) override;
  void flow(uint64_t id, int src_track, uint64_t src_cycle, int dst_track,
            uint64_t dst_cycle) override;
  void finish() override;
  const std::string& path() const { return path_; }

 private:
  struct Track {
    uint64_t parent;
    std::string name;
    std::vector<uint64_t> lane_uuid;  // lane 0 is the track itself
    std::vector<uint64_t> lane_end;
  };
  uint64_t group_uuid(std::string_view group);
  uint64_t new_uuid() { return next_uuid_++; }
  void descriptor(uint64_t uuid, uint64_t parent, std::string_view name, bool counter);
  using Table = std::map<std::string, uint64_t, std::less<>>;  // lookups without a copy
  uint64_t intern(Table& table, int interned_field, std::string_view s);
  uint64_t ns(uint64_t cycle) const;
  // Builds ev_ (TrackEvent body) helpers.
  void ann_uint(std::string_view name, uint64_t v);
  void ann_int(std::string_view name, int64_t v);
  void ann_double(std::string_view name, double v);
  void ann_str(std::string_view name, std::string_view v, bool interned);
  void emit_event(uint64_t ts_ns);  // packet with ev_ (and pending interned data)
  void write_packet(const std::string& body);

  std::string path_;
  AtomicFile file_;
  double clock_ghz_;
  FILE* f_ = nullptr;
  uint64_t next_uuid_ = 1;
  uint64_t root_uuid_ = 0;
  bool first_packet_ = true;
  std::map<std::string, uint64_t, std::less<>> groups_;
  // (group, name) -> counter track uuid; looked up with string_views, so a sample allocates
  // nothing
  struct PairLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      const std::string_view af = a.first, bf = b.first;
      return af != bf ? af < bf : std::string_view(a.second) < std::string_view(b.second);
    }
  };
  std::map<std::pair<std::string, std::string>, uint64_t, PairLess> counter_tracks_;
  // counter()'s track by the address of the caller's strings (the windowed counters pass
  // their own members, sample after sample), confirmed against the map's key: a hit costs
  // two short compares where the map costs a walk of string compares.
  struct CounterHint {
    const char* group = nullptr;
    const char* name = nullptr;
    const std::pair<const std::pair<std::string, std::string>, uint64_t>* entry = nullptr;
  };
  std::array<CounterHint, 256> counter_hints_{};
  std::map<std::pair<std::string, std::string>, int> track_ids_;
  std::vector<Track> tracks_;
  Table names_, ann_names_, strings_;
  std::string ev_, interned_, pkt_, scratch_, scratch2_;
};

}  // namespace spyre::traces
