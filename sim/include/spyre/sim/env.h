#pragma once
// What every component of one run shares: the specs, the program, the scheduler, the mode and
// the trace sink. Also the byte-range helpers used for bounds checks and error locations.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "spyre/arch/arch.h"
#include "spyre/isa/isa.h"
#include "spyre/sim/scheduler.h"
#include "spyre/traces/names.h"
#include "spyre/traces/sink.h"

namespace spyre::sim {

class DataWorker;

// Window of the trace's rate counters (DRAM bandwidth, ring link utilisation), in cycles.
inline constexpr uint64_t kTraceWindowCycles = 1024;

class DeviceLayout;

struct Env {
  const arch::ArchConfig& cfg;
  const isa::Program& program;
  Scheduler& sched;
  bool functional = true;
  // Two views of one sink: `activity` is set whenever a trace is recorded and takes what every
  // trace has (kernels, barriers, windowed counters); `trace` is set only for a full-detail trace
  // and takes the per-event spans and flows. Each `if (env.trace)` guards the building of
  // per-event arguments, so a summary trace never pays for them.
  traces::TraceSink* trace = nullptr;
  traces::TraceSink* activity = nullptr;
  // The chip module's path: trace groups and stats name the modules under it (traces/names.h).
  std::string chip = traces::kChipModule;
  std::string module(const std::string& child) const { return chip + "." + child; }
  const std::function<void(uint16_t, uint8_t*, uint64_t)>* host_call = nullptr;  // SimOptions
  // Functional runs with a worker thread for the data effects (data_worker.h); null: they run
  // inline. Whoever reads data during the run calls settle_data() first.
  DataWorker* data = nullptr;
  void settle_data() const;
  // The device layout of tensors (device_layout.h); null or inactive: row-major.
  const DeviceLayout* layout = nullptr;
};

// Where an instruction lives, for error messages: "core 1 instruction #4 (pt.mm)".
struct InstrRef {
  int core = 0;
  size_t index = 0;
  const isa::Instr* instr = nullptr;
  std::string where() const;
};

// A byte range [lo, hi); empty when lo == hi.
struct ByteRange {
  int64_t lo = 0, hi = 0;
  bool empty() const { return hi <= lo; }
};

// A strided access: `dims` pairs (count, stride in bytes) around `base`, each point covering
// `elem_bytes`. Computed in 128-bit so huge operands cannot wrap. Empty if any count is 0.
struct Dim {
  int64_t count, stride_bytes;
};
ByteRange strided_range(int64_t base, const std::vector<Dim>& dims, int64_t elem_bytes);
// The same with strides in elements of `dt` (Dim::stride_bytes read as elements): the bytes
// from the one holding the lowest element to the one holding the highest, so an I4 operand
// (two elements per byte, spyre/isa/dtype.h) covers half the bytes of an I8 one.
ByteRange element_range(int64_t base, const std::vector<Dim>& dims_in_elements, isa::DType dt);

// Throws spyre::Error "<where>: <space> access [lo, hi) is outside <space> of N bytes".
void check_range(const ByteRange& r, int64_t limit, const char* space, const InstrRef& at);

// "m=8 n=64 k=32 ..." for trace details.
std::string operand_summary(const isa::Instr& in);

}  // namespace spyre::sim
