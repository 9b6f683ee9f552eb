// Private to compiler/lower/: the per-core instruction emission of a matmul (matmul.cpp picks
// the split and the LX plan; matmul_emit.cpp streams the operand tiles, the matmuls, the
// multicast handshakes and the K-reduction chain; matmul_output.cpp the bias, alpha/beta, the
// fused epilogue and the output store).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "matmul_walk.h"
#include "spyre/compiler/divide.h"
#include "spyre/compiler/epilogue.h"
#include "spyre/compiler/kernel.h"

namespace spyre::compiler {

// An operand as the kernel sees it: element (b, i, j) at storage offset
// off + b*sb + i*s0 + j*s1 of `buffer`.
struct MatmulOperand {
  std::string buffer;
  isa::DType dt = isa::DType::F16;
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t off = 0, sb = 0, s0 = 0, s1 = 0;
};

// The last two dimensions of `v` as rows x cols (a 1-d view is one row); with `batched` and 3
// dimensions the first is the batch.
MatmulOperand matmul_operand(const ir::TensorView& v, const std::string& buffer, bool batched);

// The rows [r0, r1) of a multicast tile of `rows` rows of `row_bytes` (sequence number idx)
// that member `member` of a group of gs cores reads and multicasts. The rows are cut into up
// to gs parts, part p read by member (idx + p) mod gs: every core then streams its share of
// the tile, so the tile arrives at the rate of the cores' own loads instead of one core's
// share of the DRAM while the others load their private tiles (a B panel). A part is at least
// one DMA burst (`min_bytes`): a smaller one adds requests and handshakes, no parallelism.
// With both operands multicast (min_bytes 0) the tiles already rotate over the group's cores:
// one part, read by member idx mod gs.
std::pair<int64_t, int64_t> mcast_part(int64_t rows, int64_t row_bytes, int64_t gs, int64_t idx,
                                       int64_t member, int64_t min_bytes);

// Multicast groups: the cores sharing an A block (vary in) and a B block (vary im).
std::vector<int64_t> matmul_a_group(const MatmulGrid& grid, const MatmulCoreWork& w);
std::vector<int64_t> matmul_b_group(const MatmulGrid& grid, const MatmulCoreWork& w);

// Everything the per-core emission needs, the same on every core: operands, tiles, the LX
// plan (slot addresses) and the epilogue.
struct MatmulPlan {
  MatmulOperand A, B, O, bias;
  bool is_addmm = false, trans_b = false, out_f32 = false;
  bool bias_rows = false, bias_scalar = false;  // bias varies per row / is one value
  int64_t esA = 2, esO = 2, esBias = 0;         // element sizes
  double alpha = 1, beta = 1;
  MatmulGrid grid;
  int cs = 1;        // accumulator / output slots
  int64_t nbuf = 2;  // slots of a streamed operand
  std::vector<int64_t> A_slot, B_slot, C_slot, O_slot, bias16;
  std::vector<std::array<int64_t, 2>> bias32;  // per accumulator slot, per corelet
  int64_t alpha_at = -1, beta_at = -1;         // LX of alpha / beta (-1: 1.0, not applied)
  const Epilogue* ep = nullptr;                // fused pointwise ops on each output tile
  // The output kept in LX for the next kernels (the LX plan): each core's rows of it at out_lx,
  // row after row (Kernel::division); also stored to DRAM when out_dram. -1: stored only.
  int64_t out_lx = -1;
  bool out_dram = true;
  // A taken from a slot the LX plan keeps it in (each core's rows of it, row after row): no A
  // loads, each matmul reads its rows there. -1: A is loaded from DRAM.
  int64_t a_lx = -1;
  std::vector<std::vector<int64_t>> ep_slot;  // per epilogue slot, per accumulator slot
  std::vector<int64_t> ep_const;              // per epilogue value: LX of a constant, or -1
};

// Emits core `core`'s program (block w) into k.cores[core].
class MatmulCoreEmitter {
 public:
  MatmulCoreEmitter(Kernel& k, const MatmulPlan& p, const MatmulCoreWork& w, int64_t core);
  void run();  // the whole program: constants, then the steps (loads nbuf-1 steps ahead)

 private:
  // matmul_emit.cpp: operand streaming, matmuls, multicast handshakes, K reduction.
  void load_tile(bool mcast, const std::vector<int64_t>& group, int64_t pos, int64_t idx,
                 int64_t free_tok, int64_t arr_tok, uint64_t dram, int64_t lx, DmaShape sh);
  // parts: bit 0 the A tile, bit 1 the B tile (piece `piece` of `pieces`), bit 2 the output
  // tile's loads (bias, epilogue operands).
  void emit_loads(const MatmulStep& s, int parts = 7, int64_t piece = 0, int64_t pieces = 1);
  void emit_compute(const MatmulStep& s);
  void arrivals(const std::vector<std::pair<int64_t, int64_t>>& rows, int64_t gs, int64_t pos,
                int64_t idx, int64_t tok, int64_t slot, int64_t bytes);
  void release(bool mcast, const std::vector<int64_t>& group, int64_t pos, int64_t idx,
               const std::vector<std::pair<int64_t, int64_t>>& rows, int64_t free_tok, int64_t slot,
               int64_t bytes);
  void emit_reduce(const MatmulStep& s);
  void raw_wait(int64_t q, int64_t tok, Access acc);
  void raw_sig(int64_t q, int64_t tok, int64_t to, Access acc);
  // matmul_output.cpp: bias and epilogue inputs, alpha/beta, epilogue ops, output store.
  void emit_constants();
  void emit_output_loads(const MatmulStep& s);
  void emit_epilogue(const MatmulStep& s);
  Tile ep_tile(int v, int cl, int64_t h0, int par) const;
  void ep_op(const TOp& op, int cl, int64_t h0, int par, int64_t nr, int64_t nt);
  void ep_dma(int acc, int v, int cl, int64_t m0, int64_t n0, int64_t h0, int par, int64_t nr,
              int64_t nt, bool store);
  // Corelet row split of a tile of mt rows: [0, h), [h, mt).
  std::array<std::pair<int64_t, int64_t>, 2> split_rows(int64_t mt) const;
  uint64_t addr(const MatmulOperand& m, int64_t b, int64_t i, int64_t j) const;

  Kernel& k_;
  const MatmulPlan& p_;
  const MatmulCoreWork& w_;
  const int64_t core_;
  const bool owner_;              // last core of its K chain: runs the epilogue of its block
  std::vector<int64_t> ga_, gb_;  // its A and B multicast groups
  int64_t my_a_, my_b_;           // its position in them
  int64_t part_min_;              // smallest multicast part (mcast_part)
  // Rows and bytes per row of each multicast tile (by sequence number), to know its loaders.
  std::vector<std::pair<int64_t, int64_t>> a_rows_, b_rows_;
  Emitter em_;
};

}  // namespace spyre::compiler
