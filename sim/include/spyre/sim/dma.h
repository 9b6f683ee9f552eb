#pragma once
// A core's DMA engine for one direction (dma.load: DRAM -> LX, dma.store: LX -> DRAM). It runs
// one instruction at a time (its queue is in order):
//   - dma_setup_cycles after the start, the first request is issued;
//   - the transfer is cut into requests: for outer, for rep, for row, the row's `bytes` split
//     into pieces of at most dma_burst_bytes (contiguous); each request costs the DRAM
//     ceil(piece / dram_word_bytes) * dram_word_bytes bytes (128 B granularity);
//   - the engine issues a request every ceil(piece / rate) cycles, rate =
//     dma_read_bytes_per_cycle (load) or dma_write_bytes_per_cycle (store), with at most
//     dma_max_outstanding requests and dma_max_outstanding_bytes in flight (it waits for one to
//     land before issuing more; a piece larger than the byte budget goes alone: see
//     arch::dma_in_flight in unit_timing.h);
//   - LX banks (lx.h): a load piece writes LX over [land - ceil(piece/rate), land) and is in
//     LX at the booking's end F >= land; a store piece reads LX over [issue, issue +
//     ceil(piece/rate)); a conflict stall delays its DRAM request and the next issue by
//     F - (issue + ceil(piece/rate));
//   - multicast (dma.load mcast = core mask): once a piece is in this core's LX (at F) it goes
//     to the mask's cores as one data-ring multicast (ring.h) and each target books its LX
//     write over [arrival - D, arrival);
//   - the instruction completes when its last piece is in every LX (no requests: at setup
//     end).
// The data itself is copied by the core when the instruction completes (functional mode).
// Under dram.tensor_layout = stick (device_layout.h) a dma.load or dma.store is cut into sticks
// at its DRAM addresses, each placed where the device layout puts it, and walked in device
// address order: a request is a run of sticks contiguous there, up to dma_burst_bytes, whose
// LX side is the sticks' own places (rows of a 2-D LX region where they are evenly spaced). A
// tile of consecutive rows thus moves one run per stick column; gathers and scatters keep the
// program's addresses.
// dma.gather: as a dma.load of n rows of `bytes` (lx stride lx_stride), row i's DRAM address
// dram + k_i * dram_stride, k_i read from the LX index vector when the instruction starts (the
// read itself takes no time; an index outside [0, limit) -- possible only when no data is
// simulated -- maps to row 0). dma.scatter: as a dma.store of n rows, row i to the DRAM
// address dram + k_i * dram_stride (the same index rule).
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "spyre/sim/dram.h"
#include "spyre/sim/env.h"
#include "spyre/sim/lx.h"
#include "spyre/sim/ring.h"

namespace spyre::sim {

// The n indices of a dma.gather or dma.scatter from `lx` (this core's LX data), widened to int64.
std::vector<int64_t> index_vector(const uint8_t* lx, const isa::Instr& in);

class DmaEngine {
 public:
  // `lx`: this engine's port to its core's LX; `ring` carries multicasts, and `ring_lx(c)` is
  // the data ring's port to core c's LX (where a multicast lands).
  DmaEngine(Env& env, MemPort& dram, int core, bool write, RingPort& ring, LxPort& lx,
            std::function<LxPort&(int)> ring_lx);
  // Starts `in` (dma.load or dma.store) now; `done` runs when its last request has landed.
  void start(const isa::Instr& in, Callback done);

 private:
  void issue();
  int64_t next_piece() const;           // bytes of the next request
  bool may_issue(int64_t piece) const;  // within the request and byte limits
  // run: an index into runs_ (its LX regions), or -1 for the piece at lx_addr.
  void submit(int64_t piece, int64_t lx_addr, int64_t dram_addr, int64_t run);
  void landed(int64_t piece, int64_t lx_addr, int64_t run);
  LxRegions lx_of(int64_t piece, int64_t lx_addr, int64_t run) const;
  void build_runs();  // runs_ of the current instruction in the device layout
  // Where descriptor row (outer o, rep, row) starts: its LX and DRAM addresses.
  std::pair<int64_t, int64_t> row_start(int64_t o, int64_t rep, int64_t row) const;
  void delivered(Cycle at);
  void maybe_done();
  bool remaining() const { return runs_.empty() ? outer_i_ < outer_ : run_i_ < runs_.size(); }

  Env& env_;
  MemPort& dram_;
  int core_;
  bool write_;
  int64_t rate_;
  RingPort& ring_;
  LxPort& lx_;
  std::function<LxPort&(int)> ring_lx_;
  // Current instruction: iteration (outer, rep, row, offset in row) over its pieces.
  int64_t bytes_ = 0, rows_ = 0, reps_ = 0, outer_ = 0;
  int64_t lx0_ = 0, lx_stride_ = 0, lx_rep_ = 0, lx_outer_ = 0;
  int64_t dram0_ = 0, dram_stride_ = 0, dram_rep_ = 0, dram_outer_ = 0;
  int64_t outer_i_ = 0, rep_ = 0, row_ = 0, off_ = 0;
  int64_t outstanding_ = 0;       // requests at the DRAM (the dma_max_outstanding limit)
  int64_t in_flight_bytes_ = 0;   // their bytes (the dma_max_outstanding_bytes limit)
  int64_t in_transit_ = 0;        // pieces landed but not yet in every LX (LX stall, multicast)
  std::vector<int> targets_;      // multicast targets
  std::vector<int64_t> indexed_;  // dma.gather/scatter: each row's DRAM address
  struct Run {                    // one request in the device layout
    int64_t dram, bytes;
    LxRegions lx;
  };
  std::vector<Run> runs_;  // empty: the pieces of the program's addresses
  size_t run_i_ = 0;
  Cycle next_issue_ = 0, last_in_lx_ = 0;
  bool issue_pending_ = false, finishing_ = false;
  Callback done_;
};

}  // namespace spyre::sim
