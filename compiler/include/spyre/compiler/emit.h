#pragma once
// Typed instruction builders over a CoreStream: each computes the byte ranges its instruction
// touches (so the stream can order it) from the same operands the simulator uses.
#include <cstdint>
#include <string_view>

#include "spyre/compiler/stream.h"
#include "spyre/isa/isa.h"

namespace spyre::compiler {

// A DMA transfer: `reps` x `rows` rows of `bytes` contiguous bytes (strides in bytes).
struct DmaShape {
  int64_t bytes = 0, rows = 1, dram_stride = 0, lx_stride = 0, reps = 1, dram_rep = 0, lx_rep = 0;
  int64_t outer = 1, dram_outer = 0, lx_outer = 0;  // isa.def: outer repetitions of the reps
};

// An SFP operand: element (r, c) at addr + (r*rs + c*cs) * esize(dt); stride 0 broadcasts.
struct Tile {
  int64_t addr = 0, rs = 0, cs = 0;
  isa::DType dt = isa::DType::F32;
  Tile at(int64_t r, int64_t c) const {  // the operand moved to element (r, c)
    return Tile{addr + (r * rs + c * cs) * isa::dtype_size_bytes(dt), rs, cs, dt};
  }
};

isa::SfpFn sfp_fn(std::string_view name);  // throws when unknown

class Emitter {
 public:
  Emitter(CoreStream& s, uint16_t kernel) : s_(s), kernel_(kernel) {}
  void load(uint64_t dram, int64_t lx, const DmaShape& sh);
  void store(int64_t lx, uint64_t dram, const DmaShape& sh);
  // C (fp32, ldc) (+)= A (lda) x B (ldb; trans_b: stored [n, k]).
  void mm(int cl, int64_t a, int64_t b, int64_t c, int64_t m, int64_t n, int64_t k, int64_t lda,
          int64_t ldb, int64_t ldc, isa::DType dt, bool acc, bool trans_b);
  void un(int cl, isa::SfpFn fn, const Tile& dst, const Tile& a, int64_t rows, int64_t cols);
  // dt of a and b (dst is bool for comparisons, else dt).
  void bin(int cl, isa::SfpFn fn, const Tile& dst, const Tile& a, const Tile& b, int64_t rows,
           int64_t cols);
  void sel(int cl, const Tile& dst, const Tile& c, const Tile& a, const Tile& b, int64_t rows,
           int64_t cols);
  // dst[r] (fn)= reduce_c a[r, c]; dst row stride dst.rs.
  void red(int cl, isa::SfpFn fn, const Tile& dst, const Tile& a, int64_t rows, int64_t cols,
           bool acc);
  void cvt(int cl, const Tile& dst, const Tile& a, int64_t rows, int64_t cols);
  void fill(int cl, const Tile& dst, int64_t rows, int64_t cols, double value);

 private:
  void put(const isa::Instr& in, Access acc) { s_.emit(in, std::move(acc)); }
  CoreStream& s_;
  uint16_t kernel_;
};

// Bytes spanned by a DMA side: [base, base + (reps-1)*rep + (rows-1)*stride + bytes).
ByteRange dma_span(int64_t base, const DmaShape& sh, bool dram_side);
ByteRange tile_span(const Tile& t, int64_t rows, int64_t cols);

}  // namespace spyre::compiler
