#pragma once
// The trace sink the simulator reports to. Components hold a `TraceSink*` that is null when
// tracing is off, so an event costs one branch. Times are core-clock cycles.
#include <cstdint>
#include <string>
#include <string_view>

namespace spyre::traces {

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // Declares a track once before events use it: `group` is a process-level lane (e.g.
  // "core 3", "dram"), `track` a thread-level lane inside it ("pt0", "dma_in").
  virtual int track(std::string_view group, std::string_view track) = 0;
  // A span of work on a track: [start, start+dur) cycles.
  virtual void span(int track, std::string_view name, uint64_t start_cycle, uint64_t dur_cycles,
                    std::string_view kernel, std::string_view detail = {}) = 0;
  // A counter sample (e.g. bandwidth, occupancy) on a group.
  virtual void counter(std::string_view group, std::string_view name, uint64_t cycle,
                       double value) = 0;
  // Writes whatever is buffered and closes the output; the file is complete after this.
  virtual void finish() = 0;
};

}  // namespace spyre::traces
