#pragma once
// Chrome trace-event JSON writer (opens in Perfetto and chrome://tracing). Events are
// streamed to a temporary file as they come, one event per line, and the file is renamed into
// place on finish(), so memory stays flat and a reader never sees half a trace. The first line
// holds the metadata (TraceMeta). Timestamps are microseconds at the configured clock, printed
// to the picosecond, so round(ts * clock_ghz * 1000) gives back the exact cycle.
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "spyre/traces/atomic_file.h"
#include "spyre/traces/sink.h"

namespace spyre::traces {

class ChromeTraceWriter : public TraceSink {
 public:
  ChromeTraceWriter(std::string path, const TraceMeta& meta);
  ChromeTraceWriter(std::string path, double clock_ghz);
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
  void event_prefix();
  void ts(const char* key, uint64_t cycle);
  int pid_of(std::string_view group);
  std::string path_;
  AtomicFile file_;
  double clock_ghz_;
  FILE* f_ = nullptr;
  bool first_ = true;
  std::map<std::string, int, std::less<>> pids_;
  std::map<std::pair<int, std::string>, int> tracks_;  // (pid, name) -> track id
  std::vector<std::pair<int, int>> track_ids_;         // track id -> (pid, tid)
  std::vector<int> tids_per_pid_;
};

// "%.17g" JSON number (finite) or null; and a JSON string with escapes.
void write_json_number(FILE* f, double v);
void write_json_string(FILE* f, std::string_view s);

}  // namespace spyre::traces
