#pragma once
// Closed-form cost of instructions, the same formulas the simulator's units follow, and the
// prediction for a kernel: a timeline of its instruction streams on every core at once
// (report/timeline.cpp), in which DMA transfers share the DRAM bandwidth as a fluid. The one
// predictor of the compiler: fusion decisions, tiling searches and the report use it.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/isa/isa.h"

namespace spyre::compiler {

struct InstrCost {
  int64_t cycles = 0;      // busy cycles of the instruction's unit
  int64_t dram_bytes = 0;  // bytes moved on DRAM (whole 128 B words)
  int64_t requests = 0;    // DMA: its requests to the DRAM (a burst of a row each)
};

InstrCost instr_cost(const isa::Instr& in, const arch::ArchConfig& cfg);

// The cost model's constants that the chip's parameters do not give: each with its unit, its
// default and where that comes from. `--set compiler.cost.<name>=<value>`.
struct CostParams {
  // lpddr5: the sustained share of the peak bandwidth, fraction; default the V-curve's streaming
  // reads on "spyre", 146.1 of 204.8 GB/s (tools/bench/dram, a simulation of the DRAM model).
  // The runner (runner.h: Settings::compile_options) replaces it by the same measurement on
  // the configured chip unless compiler.cost.dram_efficiency is set.
  double dram_efficiency = 0.713;
  // lpddr5: one channel's sustained share of its peak, fraction: what a transfer whose words
  // crowd onto a few channels gets from each. Default the same V-curve point on "spyre", where
  // 32 cores keep all 16 channels busy, as the DRAM model streamed it when this was set (146.1
  // of 204.8 GB/s; it now streams 150.2 through its ports, and the even share of the runner's
  // 0.733 below is the larger: channel_bytes_per_cycle). Not replaced by the runner's
  // measurement: a chip with few cores measures its DMA engines there, not its channels
  // ("tiny": 83 of 204.8 GB/s, while one of its channels alone moves 5.8 GB/s of strided rows).
  double channel_efficiency = 0.713;
  // lpddr5: read/write turnaround, ns per byte of the smaller of the two streams; default IBM's
  // fit of Spyre's DRAM, T = (R + W) / 150 GB/s + 0.00574 ns x min(R, W)
  // (../shared/calibration/spyre_measured.json).
  double turnaround_ns_per_byte = 0.00574;
  // lpddr5: DMA rows of `run` contiguous bytes a stride apart (a tile of a matrix). They reach
  // only the channels their words land on, and each DRAM row they open on a channel serves v
  // of their words (v counted from the addresses: the channel interleave and the row window of
  // dram.address_map). A channel then moves strided_channel_rate x v / (v + strided_visit_words)
  // of its contiguous rate. Fitted (fraction, words) to a simulation of the DRAM model: 32
  // cores loading rows of 128 B to 4 KiB at strides of 1 KiB to 64 KiB, 3.3 to 149 GB/s
  // (tools/bench/costmodel/dram_runs.py --fit: every strided point within 7 %).
  double strided_channel_rate = 0.844;
  double strided_visit_words = 1.40;

  // What the model uses, from these and the chip's parameters: lpddr5 peak x efficiency, or the
  // fifo model's dram.bw_gbps; the turnaround (lpddr5 only); the latency of a DMA's first data
  // (lpddr5: ACT to CAS, read latency and front end; fifo: dram.latency_ns).
  double dram_bytes_per_cycle(const arch::ArchConfig& cfg) const;
  // One channel's rate (bytes/cycle): lpddr5 its peak x channel_efficiency, at least an even
  // share of dram_bytes_per_cycle; the fifo model has no channels (0).
  double channel_bytes_per_cycle(const arch::ArchConfig& cfg) const;
  // The DRAM's rate for `rows` rows of `run` bytes `stride` apart from DRAM address `addr`,
  // relative to a contiguous stream: the share of the channels they land on (union over the
  // rows) times the row-visit factor above. 1 when contiguous (stride == run, or one row) and
  // on the fifo model. `channels_only`: the row-visit factor alone (the matmul search counts
  // the channels of concurrent tiles itself).
  double run_efficiency(const arch::ArchConfig& cfg, int64_t run, int64_t stride, int64_t rows,
                        int64_t addr = 0, bool row_visits_only = false) const;
  // The pieces of run_efficiency. One DRAM word's (channel, DRAM row window).
  struct DramVisit {
    int64_t channel, window;
    bool operator<(const DramVisit& o) const {
      return channel != o.channel ? channel < o.channel : window < o.window;
    }
    bool operator==(const DramVisit& o) const { return channel == o.channel && window == o.window; }
  };
  // Appends the words of those rows (the first 64) to `out`, and marks the channels they land
  // on in `channels` (sized to dram.channels) when given; false (nothing appended) where the
  // rows are contiguous or the model is not lpddr5 with the default interleave.
  bool dram_visits(const arch::ArchConfig& cfg, int64_t run, int64_t stride, int64_t rows,
                   int64_t addr, std::vector<DramVisit>& out,
                   std::vector<char>* channels = nullptr) const;
  // v: words per distinct (channel, window) of `visits` (sorted in place); 0 when empty.
  static double words_per_visit(std::vector<DramVisit>& visits);
  // A channel's rate relative to streaming when each DRAM row it opens serves v words.
  double row_visit_factor(double v) const;
  double turnaround_cycles_per_byte(const arch::ArchConfig& cfg) const;
  int64_t dram_latency_cycles(const arch::ArchConfig& cfg) const;
};

struct KernelPrediction {
  int64_t cycles = 0;
  int64_t dram_bytes = 0;
  int64_t compute_cycles = 0;  // busiest PT/SFP queue
  int64_t dma_cycles = 0;      // busiest DMA queue
  int64_t dram_cycles = 0;     // chip DRAM bytes / bandwidth
  nlohmann::json to_json() const;
};

// per_core[c] = the kernel's instructions on core c.
KernelPrediction predict(const std::vector<std::vector<isa::Instr>>& per_core,
                         const arch::ArchConfig& cfg, const CostParams& cp = {});

}  // namespace spyre::compiler
