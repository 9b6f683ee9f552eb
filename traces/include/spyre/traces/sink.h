#pragma once
// The trace sink the simulator reports to. Components hold a `TraceSink*` that is null when
// tracing is off, so an event costs one branch (the arguments are built inside that branch).
// Times are core-clock cycles; writers convert to time with the clock in TraceMeta.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace spyre::traces {

inline constexpr int kTraceFormatVersion = 1;

// How much a trace records. Summary: kernels, barriers and windowed counters (unit busy
// fractions, DRAM bandwidth, ring link utilisation): its size grows with simulated time over the
// counter window, not with the instruction or DRAM-transaction count. Full: also one span per
// instruction, sequencer stall, DRAM transaction and ring transfer, and the token flows.
enum class TraceDetail { Summary, Full };
// "summary" / "full"; anything else throws spyre::Error naming `what` and the two choices.
TraceDetail parse_trace_detail(std::string_view text, std::string_view what = "--trace-detail");
const char* trace_detail_name(TraceDetail d);

// Written at the start of every trace file.
struct TraceMeta {
  double clock_ghz = 1.0;
  std::string arch_json = "{}";  // the effective arch config, every parameter (JSON object)
  std::string graph;             // program / graph name
  int cores = 0;                 // program cores
  int64_t counter_window_cycles = 1024;
  TraceDetail detail = TraceDetail::Full;
};

// One LX access of an instruction: `bytes` bytes from `addr`, read or written.
struct LxAccess {
  int64_t addr = 0, bytes = 0;
  bool write = false;
};

// A key with an integer, a double or a string value (extra span arguments).
struct Arg {
  std::string_view key;
  enum class Kind { Int, Double, Str } kind = Kind::Int;
  int64_t i = 0;
  double d = 0;
  std::string_view s;
  static Arg num(std::string_view k, int64_t v) { return {k, Kind::Int, v, 0, {}}; }
  static Arg real(std::string_view k, double v) { return {k, Kind::Double, 0, v, {}}; }
  static Arg str(std::string_view k, std::string_view v) { return {k, Kind::Str, 0, 0, v}; }
};

// Structured arguments of a span. core/pc < 0 and empty views are left out of the file.
struct SpanArgs {
  std::string_view kernel;
  int core = -1;
  int64_t pc = -1;  // index in that core's instruction stream
  std::string_view detail;
  const std::vector<LxAccess>* lx = nullptr;  // this core's LX accesses
  const std::vector<Arg>* extra = nullptr;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // Declares a track once before events use it: `group` is a process-level lane (e.g.
  // "spyre.core_3", "spyre.dram": names.h), `track` a thread-level lane inside it ("pt0",
  // "dma_in"). Returns an id.
  virtual int track(std::string_view group, std::string_view track) = 0;
  // A span of work on a track: [start, start+dur) cycles.
  virtual void span(int track, std::string_view name, uint64_t start_cycle, uint64_t dur_cycles,
                    const SpanArgs& args) = 0;
  // A counter sample (e.g. bandwidth, occupancy) on a group; holds until the next sample.
  virtual void counter(std::string_view group, std::string_view name, uint64_t cycle,
                       double value) = 0;
  // An arrow from a producer (a span on src_track that contains src_cycle) to a consumer.
  // Ids are unique within a trace.
  virtual void flow(uint64_t id, int src_track, uint64_t src_cycle, int dst_track,
                    uint64_t dst_cycle) = 0;
  // Writes whatever is buffered and closes the output; the file is complete after this.
  virtual void finish() = 0;

  // Convenience for spans with a kernel and a detail only.
  void span(int track, std::string_view name, uint64_t start_cycle, uint64_t dur_cycles,
            std::string_view kernel, std::string_view detail = {}) {
    SpanArgs a;
    a.kernel = kernel;
    a.detail = detail;
    span(track, name, start_cycle, dur_cycles, a);
  }
};

// Sums amounts into fixed windows of cycles and emits one counter sample per window (the
// window's average rate times `scale`), plus a 0 after an idle gap. add() at cycle `now` puts
// its amount into the windows it covers, then flushes the windows before now's; intervals may
// lie in the past (an instruction reported when it ends) or the future (a DRAM transaction
// scheduled ahead). An amount for a window already flushed (it would need an earlier amount
// reported later) counts in the first unflushed one, so samples stay in time order.
class WindowCounter {
 public:
  WindowCounter(std::string group, std::string name, uint64_t window, double scale)
      : group_(std::move(group)), name_(std::move(name)), window_(window), scale_(scale) {}
  // `amount` spread evenly over [start, start + dur) (dur 0: all at start).
  void add(TraceSink& sink, uint64_t now, uint64_t start, uint64_t dur, double amount);
  void flush_all(TraceSink& sink);

 private:
  void flush_before(TraceSink& sink, uint64_t window_index);
  std::string group_, name_;
  uint64_t window_;
  double scale_;
  std::vector<std::pair<uint64_t, double>> pending_;  // (window index, amount), sorted
  uint64_t next_ = 0;  // first window not yet flushed; a late amount is counted there
  int64_t last_emitted_ = -2;
  bool last_nonzero_ = false;
};

}  // namespace spyre::traces
