#pragma once
// Work division: how a kernel's iteration space is cut across cores (and corelets).
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/cost.h"

namespace spyre::compiler {

// [lo, hi) ranges; `parts` balanced pieces whose boundaries are multiples of `align` (except
// the end). Empty pieces are dropped, so fewer than `parts` may come back.
std::vector<std::pair<int64_t, int64_t>> split_range(int64_t n, int64_t parts, int64_t align = 1);

struct MatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t a_bytes = 2, b_bytes = 2, out_bytes = 2;  // element sizes
  // DRAM layout: rows of an A block are contiguous with each other (row stride == K); B is
  // stored [n, k] (a linear layer's weight); B's rows are contiguous ([k,n]: stride N; [n,k]:
  // stride K). Decides how large the DMA requests are.
  bool a_contiguous = true, b_transposed = false, b_contiguous = true;
  // Row strides in DRAM, bytes (0: the contiguous layout's). With the DRAM interleave
  // (consecutive `dram.word_bytes` words on consecutive channels) they decide how many channels
  // the rows of the tiles that the cores load at the same time spread over.
  int64_t a_row_bytes = 0, b_row_bytes = 0, out_row_bytes = 0;
  int64_t epilogue_ops = 0;  // SFP ops per output element after the matmul (cvt, bias, fused)
};

// A forced split (`--set compiler.matmul_split=b,m,n,k`): parts per dimension; all 0 = the
// cost model chooses. Each part is clamped to what its dimension allows.
// Forced tiles (`compiler.matmul_tiles=tm,tn,tk`, each clamped to its block) and a forced
// lead group (`compiler.matmul_lead=L`, B panels only): 0 = the cost model chooses. They narrow
// the search to those candidates; a forced tile shape that does not fit LX is an error.
struct MatmulSplit {
  std::array<int64_t, 4> parts{0, 0, 0, 0};  // b, m, n, k
  std::array<int64_t, 3> tiles{0, 0, 0};     // tm, tn, tk
  int64_t lead = 0;
  // Under compiler.schedule=ibm: a core's output block as one tile wherever its accumulator
  // and operand slots fit LX, its K streamed in steps (the division and the K step depth are
  // still searched); a block that does not fit is tiled as this compiler's own schedule tiles
  // it. The own
  // schedule also cuts blocks that fit into smaller tiles, so that one tile's store overlaps
  // the next tile's matmuls.
  bool one_tile = false;
  // Unforced: only the splits that give every core whole rows of A and of the output (no N or
  // K split; several batches only whole), for the LX plan (lx_residency.h plan_lx_jointly).
  bool whole_rows = false;
  bool forced() const { return parts[0] > 0; }
};

// The output is cut into gb x gm x gn blocks, each of whose K is cut into gk parts: one
// (batch range, m range, n range, k range) block per core, core id = ((ib*gm + im)*gn + in)*gk
// + ik, so the cores of one K group are neighbours on the ring. Partial sums of a K group go
// along a ring.red chain to its last core (the owner), which runs the epilogue. Cores that
// share an A block (same ib, im, ik) form a multicast group (one of them reads each A tile and
// multicasts it), likewise cores sharing a B block (same ib, in, ik). Inside a block the
// output is walked in tm x tn tiles (the fp32 accumulator), each over K in tk steps, A and B
// tiles in two ping-pong LX slots. A panel (`a_panel` / `b_panel`): when a block has one tile
// along M (N), its A (B) tiles of every K step stay in LX, one slot per K step, loaded during
// the first pass over the block's other dimension and reused by every later tile (the operand
// is read from DRAM once; its load overlaps the first tiles' matmuls step by step).
struct MatmulGrid {
  int64_t gb = 1, gm = 1, gn = 1, gk = 1;  // parts per dimension
  int64_t bb = 1, mb = 0, nb = 0, kb = 0;  // block shape
  int64_t tm = 0, tn = 0, tk = 0;          // tiles inside a block
  int64_t cores_used = 0;
  bool mcast_a = false, mcast_b = false;  // A / B tiles multicast inside their groups
  bool a_panel = false, b_panel = false;  // A / B tiles of all K steps resident (see above)
  // LX slots of a streamed (not panel) operand; loads run one step ahead. 2 (ping-pong), or 3
  // with a lead group: a multicast group then has one more tile of slack before every member
  // must have freed a slot.
  int64_t bufs = 2;
  // B panel only: the first `lead` m tiles of each panel are walked K-outer (every K step of
  // all of them before the next K step), so while the panel fills from DRAM the PTs work on
  // `lead` tiles instead of one; the panel's K slices are then loaded in `lead` pieces that
  // ride with those tiles' A loads (a core's DMA-in queue is in order: a whole slice ahead of
  // an A load would hold up the multicast group waiting for it). lead + 1 accumulators.
  int64_t lead = 1;
  bool forced = false;
  // Prediction (cycles) and its parts.
  int64_t predicted_cycles = 0, dram_bytes = 0, pt_cycles = 0, dram_cycles = 0, dma_cycles = 0,
          overhead_cycles = 0, reduce_cycles = 0, epilogue_cycles = 0, first_tile_cycles = 0;
  // Share of the DRAM channels the concurrent requests of each stream (A, B, output) cover.
  double chan_a = 1, chan_b = 1, chan_o = 1;  // bandwidth shares: channels x run efficiency
  double run_a = 1, run_b = 1, run_o = 1;     // the DRAM's efficiency on the tiles' rows
  int64_t lx_bytes = 0;
  int64_t blocks() const { return gb * gm * gn * gk; }
  int64_t core_of(int64_t ib, int64_t im, int64_t in, int64_t ik) const {
    return ((ib * gm + im) * gn + in) * gk + ik;
  }
  nlohmann::json to_json() const;
};

// The n tile a block starts its walk at (of `nnt`, block `in` of `gn`): neighbouring blocks
// start at different columns, and blocks whose columns alias on the same DRAM channels
// (power-of-two widths) at different tiles, so cores reading (writing) at the same time spread
// over the channels. Multicast groups keep one order (matmul.cpp).
inline int64_t matmul_n_rotation(int64_t in, int64_t gn, int64_t nnt) {
  return nnt <= 1 ? 0 : (in + in * nnt / gn) % nnt;
}

// LX bytes of one core's working set for tiles (tm, tn, tk) with `c_slots` accumulator slots,
// `a_slots` A tile slots and `b_slots` B tile slots (2 = ping-pong; a panel: one per K step).
using MatmulLxFn = std::function<int64_t(int64_t tm, int64_t tn, int64_t tk, int c_slots,
                                         int64_t a_slots, int64_t b_slots)>;

// choose_matmul_grid's remembered answers within one compile (CompileContext::grid_memo): the
// fusion pass lowers the same matmul again for every trial, with one configuration.
struct GridMemo {
  struct Answer {
    std::vector<MatmulGrid> ranked;  // the best, then the best few other splits
    nlohmann::json alternatives;
  };
  std::map<std::vector<int64_t>, Answer> answers;
  std::mutex mutex;  // answers, from several threads (context.h)
};

// Chosen by the cost model over every (gb, gm, gn, gk) with gb*gm*gn*gk <= cores (or the
// forced split) and, for each, the tiles (and panels) that fit `lx_budget`: minimises the
// predicted cycles = first phase (the first output tile, or a B panel's lead group: its
// matmuls against the DRAM bytes it needs chip-wide; with a panel and no K split a pipeline of
// the panel's first K slice landing, then one matmul per step against its tile and a 1/lead
// piece of the next slice, the last step against the lead tiles' stores) + the rest (soft max
// of busiest PT, chip DRAM time with the read/write turnarounds, busiest DMA engine) + pipeline
// prologue + K-reduction chain + epilogue tail. DRAM time divides each stream's bytes by the
// bandwidth times the share of channels its concurrent requests cover (a lead group's A tiles
// of one K step share that step's columns). Ties go to fewer DRAM bytes, then fewer cores.
// `alternatives` (optional) receives the best few other splits, for the report; `runners_up`
// (optional) the same as grids, best first (empty for a forced split), for the caller to
// lower and predict (lower/matmul.cpp picks among them by the kernel prediction).
// `forced`: compiler.matmul_split / matmul_tiles / matmul_lead. `lx_key` (optional):
// everything `lx_bytes` depends on besides its arguments (element sizes, epilogue slots...);
// with it and a `memo`, the answer is remembered per (shape, lx_budget, lx_key, forced split).
// `cp`: the cost model's constants (cost.h), the same the kernel prediction uses.
MatmulGrid choose_matmul_grid(const MatmulShape& s, const arch::ArchConfig& cfg, int64_t lx_budget,
                              const MatmulLxFn& lx_bytes, const MatmulSplit& forced = {},
                              GridMemo* memo = nullptr, nlohmann::json* alternatives = nullptr,
                              const std::vector<int64_t>* lx_key = nullptr,
                              const CostParams& cp = {},
                              std::vector<MatmulGrid>* runners_up = nullptr);

// The roofline bound of a matmul: max(MACs / chip peak, minimum DRAM bytes (A, B, output once)
// / bandwidth), in cycles.
int64_t matmul_roofline_cycles(const MatmulShape& s, const arch::ArchConfig& cfg);

}  // namespace spyre::compiler
