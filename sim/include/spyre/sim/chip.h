#pragma once
// The chip's logic for one run, built from the ArchConfig: cfg.cores cores (those beyond the
// program's num_cores stay idle), the data and reduce rings and the chip-wide barrier. Device
// memory is reached through ports: each DMA engine's MemPort (under the kernel its TLM-2.0
// initiator, chip_module.h) and, in functional runs, the device memory's bytes (DMI); every
// LX through the LxPort of the unit that touches it (lx_tlm.h).
// Barrier: opens barrier_latency_cycles after the last of the program's cores arrives.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/sim/core.h"
#include "spyre/sim/dram.h"
#include "spyre/sim/env.h"
#include "spyre/sim/ring.h"
#include "spyre/sim/simulate.h"

namespace spyre::sim {

// Who reaches an LX: a core's own units (PT and SFP), its DMA engines, or a ring.
enum class LxUser { Units, DmaIn, DmaOut, RingData, RingReduce };

struct ChipPorts {
  // The MemPort of core c's dma_in (write false) or dma_out engine.
  std::function<MemPort&(int c, bool write)> dram;
  // The port through which `user` reaches core c's LX: core c's own units and engines, or a
  // ring (delivering to or reading from core c).
  std::function<LxPort&(int c, LxUser user)> lx;
  // Core c's port to the data ring (reduce false) or the reduce ring: its network interface.
  std::function<RingPort&(int c, bool reduce)> ring;
};

class Chip {
 public:
  Chip(Env& env, ChipPorts ports);
  void start();
  bool all_halted() const;
  Cycle end_cycle() const;  // the cycle the last core halted

  int num_cores() const { return static_cast<int>(cores_.size()); }
  Core& core(int i) { return *cores_[static_cast<size_t>(i)]; }
  Ring& ring() { return ring_; }                // the data ring
  Ring& reduce_ring() { return reduce_ring_; }  // the reduce ring (ring.red)
  const ChipPorts& ports() const { return ports_; }
  // The data ring's (or with `reduce` the reduce ring's) port to core c's LX.
  LxPort& ring_lx(bool reduce, int c) {
    return ports_.lx(c, reduce ? LxUser::RingReduce : LxUser::RingData);
  }
  // The device memory's bytes for functional copies (set before start(); null when timing only).
  uint8_t* dram_data() { return dram_data_; }
  void set_dram_data(uint8_t* p) { dram_data_ = p; }

  // A token signal from core `from` to token `tok` of core `to` (arrives after the ring hops).
  // `src`: the producer span for a trace flow (tracing only).
  void signal(int from, int to, int64_t tok, FlowSrc src = {});
  void arrive_barrier(int core);
  // A host.call (isa.def) of `kernel` starting now: hands it to the run's host (functional),
  // counts it and returns its duration in cycles (arch/unit_timing.h host_call_cycles).
  Cycle host_call(const isa::Instr& in, const InstrRef& at);
  void note_kernel(uint16_t kernel, Cycle start, Cycle end);

  // "deadlock at cycle C" / "watchdog ..." followed by what each unfinished core waits on.
  std::string stuck_report() const;
  std::vector<KernelStats> kernel_stats() const;
  // Layout in sim/README.md; `dram`: the stats of the device memory behind the interconnect.
  nlohmann::json stats(Cycle cycles, nlohmann::json dram) const;
  uint64_t next_flow_id() { return ++flow_ids_; }  // trace flow ids, 1, 2, ... in event order
  void finish_trace();  // flushes the rings' windowed trace counters at the end of a run

 private:
  Env& env_;
  ChipPorts ports_;
  uint8_t* dram_data_ = nullptr;
  Ring ring_, reduce_ring_;
  std::vector<std::unique_ptr<Core>> cores_;
  int active_cores_;
  int arrived_ = 0;
  Cycle first_arrival_ = 0;
  uint64_t barriers_ = 0;
  int barrier_track_ = -1;
  int host_track_ = -1;
  struct HostStats {
    uint64_t calls = 0, in_bytes = 0, out_bytes = 0, busy_cycles = 0;
  } host_;
  uint64_t flow_ids_ = 0;
  struct Span {
    bool seen = false;
    Cycle start = 0, end = 0;
  };
  std::vector<Span> kernels_;
};

}  // namespace spyre::sim
