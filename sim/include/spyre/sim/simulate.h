#pragma once
// Running a program on the chip model. The SystemC kernel owns time; the model's logic
// lives in plain C++ classes under sim/. One process may simulate many programs one after
// another (SystemC 2.3 cannot re-elaborate, so the kernel shell is elaborated once and
// reused; each run's cycles are counted from its own start).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/isa/isa.h"
#include "spyre/traces/sink.h"

namespace spyre::sim {

// A host fallback's work in a functional run (host.call, compiler/host_call.h): given the
// call's kernel id and the device memory (program.dram_bytes), it reads the call's inputs there
// and writes its outputs, when the call starts (every earlier write has landed: the core's
// queues are empty and the compiler put a barrier before it). Throws spyre::Error on failure.
using HostCallFn = std::function<void(uint16_t kernel, uint8_t* dram, uint64_t dram_bytes)>;

struct SimOptions {
  bool functional = true;              // false: timing only, no arithmetic or data movement
  traces::TraceSink* trace = nullptr;  // null: tracing off
  // What reaches `trace` (traces/sink.h): Summary skips the per-instruction, per-transaction and
  // per-transfer spans and the flows, and so the cost of building their arguments.
  traces::TraceDetail trace_detail = traces::TraceDetail::Full;
  uint64_t max_cycles = 0;  // watchdog; 0 = no limit
  // Functional runs of programs with host.call need it (a spyre::Error names the call
  // otherwise); timing-only runs never call it.
  HostCallFn host_call;
  // Functional runs: the data effects (copies, arithmetic) run on a second host thread, in the
  // order the instructions completed, while the timing model goes on (data_worker.h). Cycles,
  // traces and every result bit are the same either way. Auto: when this process may run on
  // two or more CPUs (its affinity mask), else inline; On fails if the thread cannot start.
  enum class DataThread { Auto, Off, On };
  DataThread data_thread = DataThread::Auto;
};

struct KernelStats {
  std::string name;
  uint64_t start_cycle = 0;  // first instruction of this kernel starts, on any core
  uint64_t end_cycle = 0;    // last one ends
  uint64_t cycles() const { return end_cycle - start_cycle; }
};

struct SimResult {
  uint64_t cycles = 0;               // from start until the last core halts
  std::vector<KernelStats> kernels;  // in program kernel-id order
  uint64_t dram_read_bytes = 0;
  uint64_t dram_write_bytes = 0;
  // Summed over cores: busy cycles per unit class ("pt", "sfp", "dma_in", "dma_out", "ring").
  // Utilisation of a class = busy / (cycles * units of that class on the chip).
  nlohmann::json stats;  // hierarchical stats with units (see sim/README.md)
  // What the run cost the simulator (not the chip): scheduler callbacks run and activations of
  // the SystemC process that runs them. Neither grows with idle time: nothing ticks.
  uint64_t sim_events = 0, sim_activations = 0;
  double utilisation(const std::string& unit_class) const;  // 0..1, from stats
};

// Device memory image: the program's DRAM, `program.dram_bytes` long. The caller writes
// inputs at their tensors' addresses before and reads outputs after the run. Data segments of
// the program are copied in by simulate().
using DeviceMemory = std::vector<uint8_t>;

// Throws spyre::Error for: a config that does not fit the program (cores), an LX or DRAM
// access out of range (naming core, instruction index, mnemonic and address), a deadlock
// (naming what each core waits on), or the watchdog.
SimResult simulate(const isa::Program& program, const arch::ArchConfig& cfg, DeviceMemory& dram,
                   const SimOptions& opts = {});

}  // namespace spyre::sim
