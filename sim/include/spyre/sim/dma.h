#pragma once
// A core's DMA engine for one direction (dma.load: DRAM -> LX, dma.store: LX -> DRAM). It runs
// one instruction at a time (its queue is in order):
//   - dma_setup_cycles after the start, the first request is issued;
//   - the transfer is cut into requests: for rep, for row, the row's `bytes` split into pieces
//     of at most dma_burst_bytes (contiguous); each request costs the DRAM
//     ceil(piece / dram_word_bytes) * dram_word_bytes bytes;
//   - the engine issues a request every ceil(piece / rate) cycles, rate =
//     dma_read_bytes_per_cycle (load) or dma_write_bytes_per_cycle (store), with at most
//     dma_max_outstanding requests in flight (it waits for one to land before issuing more);
//   - the instruction completes when its last request lands (no requests: at setup end).
// The data itself is copied by the core when the instruction completes (functional mode).
#include <cstdint>
#include <functional>

#include "spyre/sim/dram.h"
#include "spyre/sim/env.h"

namespace spyre::sim {

class DmaEngine {
 public:
  DmaEngine(Env& env, DramModel& dram, int core, bool write);
  // Starts `in` (dma.load or dma.store) now; `done` runs when its last request has landed.
  void start(const isa::Instr& in, std::function<void()> done);

 private:
  void issue();
  void landed();
  bool remaining() const { return rep_ < reps_; }

  Env& env_;
  DramModel& dram_;
  int core_;
  bool write_;
  int64_t rate_;
  // Current instruction: iteration (rep, row, offset in row) over its pieces.
  int64_t bytes_ = 0, rows_ = 0, reps_ = 0;
  int64_t rep_ = 0, row_ = 0, off_ = 0;
  int64_t outstanding_ = 0;
  Cycle next_issue_ = 0;
  bool issue_pending_ = false;
  std::function<void()> done_;
};

}  // namespace spyre::sim
