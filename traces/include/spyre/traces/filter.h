#pragma once
// --trace-filter: which events reach the writer, and the writer chosen by file extension.
//
// Syntax: fields `key=value` separated by ';', each key at most once, spaces ignored:
//   unit=LIST    units to keep: seq dma (= dma_in,dma_out) dma_in dma_out pt sfp ring dram
//                barrier kernels lx  (comma-separated)
//   core=LIST    cores to keep, e.g. 0-3,8 (applies to the "spyre.core_N" groups; chip-wide groups
//                such as dram and ring are kept unless `unit` drops them)
//   window=A:B   cycles [A, B); either side may be empty (A defaults to 0, B to the end)
// e.g. `unit=pt,dma;core=0-3;window=1000:50000`. A bad field throws spyre::Error naming it
// ("--trace-filter: field 'core': ...").
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spyre/traces/names.h"
#include "spyre/traces/sink.h"

namespace spyre::traces {

struct TraceFilter {
  std::set<std::string> units;             // empty: all
  std::vector<std::pair<int, int>> cores;  // inclusive ranges; empty: all
  uint64_t from = 0, to = UINT64_MAX;      // window [from, to)
  bool keeps_unit(const std::string& unit) const;
  bool keeps_core(int core) const;
};

TraceFilter parse_trace_filter(std::string_view spec);

// The unit a track or counter belongs to ("pt" for spyre.core_N / pt1, "dram" for spyre.dram /
// ch3, ...); group names in names.h.
std::string unit_of_track(std::string_view group, std::string_view track);
std::string unit_of_counter(std::string_view group, std::string_view name);

// Passes to `inner` only what the filter keeps; tracks reach `inner` when first used.
class FilteringSink : public TraceSink {
 public:
  FilteringSink(TraceSink& inner, TraceFilter f) : inner_(inner), f_(std::move(f)) {}
  int track(std::string_view group, std::string_view track) override;
  void span(int track, std::string_view name, uint64_t start_cycle, uint64_t dur_cycles,
            const SpanArgs& args) override;
  using TraceSink::span;
  void counter(std::string_view group, std::string_view name, uint64_t cycle,
               double value) override;
  void flow(uint64_t id, int src_track, uint64_t src_cycle, int dst_track,
            uint64_t dst_cycle) override;
  void finish() override { inner_.finish(); }

 private:
  struct T {
    std::string group, track;
    bool keep;
    int inner = -1;
  };
  int inner_track(T& t);
  TraceSink& inner_;
  TraceFilter f_;
  std::vector<T> tracks_;
};

// A writer for `path`: ".pftrace" / ".perfetto-trace" / ".pb" -> Perfetto protobuf, anything
// else Chrome JSON. With a non-empty filter spec the writer is wrapped in a FilteringSink.
class TraceOutput {
 public:
  TraceOutput(const std::string& path, const TraceMeta& meta, const std::string& filter = {});
  ~TraceOutput();
  TraceSink* sink() { return filter_ ? static_cast<TraceSink*>(filter_.get()) : writer_.get(); }
  void finish() { writer_->finish(); }

 private:
  std::unique_ptr<TraceSink> writer_;
  std::unique_ptr<FilteringSink> filter_;
};
bool is_perfetto_path(const std::string& path);

}  // namespace spyre::traces
