#pragma once
// Chrome trace-event JSON writer (opens in Perfetto and chrome://tracing). Events are
// streamed to a temporary file as they come and the file is renamed into place on finish(),
// so memory stays flat and a reader never sees half a trace. Timestamps are microseconds at
// the configured clock; each event also carries its cycle in args.
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include "spyre/traces/sink.h"

namespace spyre::traces {

class ChromeTraceWriter : public TraceSink {
 public:
  ChromeTraceWriter(std::string path, double clock_ghz);
  ~ChromeTraceWriter() override;
  int track(std::string_view group, std::string_view track) override;
  void span(int track, std::string_view name, uint64_t start_cycle, uint64_t dur_cycles,
            std::string_view kernel, std::string_view detail) override;
  void counter(std::string_view group, std::string_view name, uint64_t cycle,
               double value) override;
  void finish() override;
  const std::string& path() const { return path_; }

 private:
  void event_prefix();
  int pid_of(std::string_view group);
  std::string path_, tmp_;
  double clock_ghz_;
  FILE* f_ = nullptr;
  bool first_ = true;
  std::map<std::string, int> pids_;
  std::map<std::pair<int, std::string>, int> tracks_;  // (pid, name) -> track id
  std::map<int, std::pair<int, int>> track_ids_;       // track id -> (pid, tid)
};

}  // namespace spyre::traces
