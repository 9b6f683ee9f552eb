// SFP emission shared by every lowering that runs a tile program (loops, column walks, matmul
// and convolution epilogues, selection): one place maps a program op onto SFP instructions.
#pragma once

#include <algorithm>
#include <cstdint>

#include "spyre/compiler/emit.h"
#include "spyre/compiler/tile_program.h"

namespace spyre::compiler {

// Emits an element-wise op (unary, binary, select, convert, fill) of a tile program on
// rows x cols of corelet cl; src(j) is the tile of the op's j-th operand. Returns false for
// every other kind (loads, stores, reductions, index, gathers): their lowering differs by caller.
template <class Src>
bool emit_elementwise(Emitter& em, int cl, const TOp& op, const Tile& dst, Src&& src, int64_t rows,
                      int64_t cols) {
  switch (op.kind) {
    case TOp::Unary: em.un(cl, op.fn, dst, src(0), rows, cols); return true;
    case TOp::Binary: em.bin(cl, op.fn, dst, src(0), src(1), rows, cols); return true;
    case TOp::Select: em.sel(cl, dst, src(0), src(1), src(2), rows, cols); return true;
    case TOp::Convert: em.cvt(cl, dst, src(0), rows, cols); return true;
    case TOp::Fill: em.fill(cl, dst, rows, cols, op.value); return true;
    case TOp::Load:
    case TOp::Store:
    case TOp::Reduce:
    case TOp::Iota:
    case TOp::Gather:
    case TOp::Scatter: return false;
  }
  return false;
}

// dst(r, c) = base + row_step*r + col_step*c, built by doubling: one element, then each step
// adds k*stride (written into the one-element scratch slot `scal`) to the first k columns
// (rows) to write the next k: 1 + 2*ceil(log2 cols) + 2*ceil(log2 rows) instructions, no DRAM.
inline void emit_iota(Emitter& em, int cl, const Tile& dst, const Tile& scal, double base,
                      int64_t row_step, int64_t col_step, int64_t rows, int64_t cols) {
  em.fill(cl, dst, 1, 1, base);
  for (int64_t kk = 1; kk < cols; kk *= 2) {
    em.fill(cl, scal, 1, 1, static_cast<double>(kk * col_step));
    em.bin(cl, isa::SfpFn::Add, dst.at(0, kk), dst, scal, 1, std::min(kk, cols - kk));
  }
  for (int64_t kk = 1; kk < rows; kk *= 2) {
    em.fill(cl, scal, 1, 1, static_cast<double>(kk * row_step));
    em.bin(cl, isa::SfpFn::Add, dst.at(kk, 0), dst, scal, std::min(kk, rows - kk), cols);
  }
}

}  // namespace spyre::compiler
