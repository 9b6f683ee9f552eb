#include "spyre/compiler/emit.h"

#include "spyre/error.h"

namespace spyre::compiler {

using isa::make_instr;
using isa::Opcode;

isa::SfpFn sfp_fn(std::string_view name) {
  const isa::SfpFnInfo* f = isa::find_sfp_fn(name);
  if (!f) throw Error("sfp", "unknown SFP function '" + std::string(name) + "'");
  return f->fn;
}

ByteRange dma_span(int64_t base, const DmaShape& sh, bool dram_side) {
  int64_t stride = dram_side ? sh.dram_stride : sh.lx_stride;
  int64_t rep = dram_side ? sh.dram_rep : sh.lx_rep;
  if (sh.bytes == 0 || sh.rows == 0 || sh.reps == 0) return {base, base};
  int64_t lo = base + std::min<int64_t>(0, (sh.reps - 1) * rep) +
               std::min<int64_t>(0, (sh.rows - 1) * stride);
  int64_t hi = base + std::max<int64_t>(0, (sh.reps - 1) * rep) +
               std::max<int64_t>(0, (sh.rows - 1) * stride) + sh.bytes;
  return {lo, hi};
}

ByteRange tile_span(const Tile& t, int64_t rows, int64_t cols) {
  if (rows == 0 || cols == 0) return {t.addr, t.addr};
  const int64_t es = isa::dtype_size_bytes(t.dt);
  int64_t lo =
      t.addr +
      (std::min<int64_t>(0, (rows - 1) * t.rs) + std::min<int64_t>(0, (cols - 1) * t.cs)) * es;
  int64_t hi =
      t.addr +
      (std::max<int64_t>(0, (rows - 1) * t.rs) + std::max<int64_t>(0, (cols - 1) * t.cs) + 1) * es;
  return {lo, hi};
}

namespace {
// Rows that follow each other on both sides become one row (fewer, larger DRAM requests).
DmaShape collapse(DmaShape sh) {
  if (sh.rows > 1 && sh.dram_stride == sh.bytes && sh.lx_stride == sh.bytes) {
    sh.bytes *= sh.rows;
    sh.rows = 1;
    sh.dram_stride = sh.lx_stride = 0;
  }
  if (sh.rows == 1 && sh.reps > 1 && sh.dram_rep == sh.bytes && sh.lx_rep == sh.bytes) {
    sh.bytes *= sh.reps;
    sh.reps = 1;
    sh.dram_rep = sh.lx_rep = 0;
  }
  return sh;
}
}  // namespace

void Emitter::load(uint64_t dram, int64_t lx, const DmaShape& shape) {
  const DmaShape sh = collapse(shape);
  auto d = static_cast<int64_t>(dram);
  Access acc;
  acc.dram_read.push_back(dma_span(d, sh, true));
  acc.lx_write.push_back(dma_span(lx, sh, false));
  put(make_instr(Opcode::DmaLoad,
                 {{"dram", d},
                  {"lx", lx},
                  {"bytes", sh.bytes},
                  {"rows", sh.rows},
                  {"dram_stride", sh.dram_stride},
                  {"lx_stride", sh.lx_stride},
                  {"reps", sh.reps},
                  {"dram_rep", sh.dram_rep},
                  {"lx_rep", sh.lx_rep}},
                 kernel_),
      std::move(acc));
}

void Emitter::store(int64_t lx, uint64_t dram, const DmaShape& shape) {
  const DmaShape sh = collapse(shape);
  auto d = static_cast<int64_t>(dram);
  Access acc;
  acc.dram_write.push_back(dma_span(d, sh, true));
  acc.lx_read.push_back(dma_span(lx, sh, false));
  put(make_instr(Opcode::DmaStore,
                 {{"lx", lx},
                  {"dram", d},
                  {"bytes", sh.bytes},
                  {"rows", sh.rows},
                  {"lx_stride", sh.lx_stride},
                  {"dram_stride", sh.dram_stride},
                  {"reps", sh.reps},
                  {"lx_rep", sh.lx_rep},
                  {"dram_rep", sh.dram_rep}},
                 kernel_),
      std::move(acc));
}

void Emitter::mm(int cl, int64_t a, int64_t b, int64_t c, int64_t m, int64_t n, int64_t k,
                 int64_t lda, int64_t ldb, int64_t ldc, isa::DType dt, bool acc_c, bool trans_b) {
  const int64_t es = isa::dtype_size_bytes(dt);
  Access acc;
  acc.lx_read.push_back({a, a + ((m - 1) * lda + k) * es});
  acc.lx_read.push_back(trans_b ? ByteRange{b, b + ((n - 1) * ldb + k) * es}
                                : ByteRange{b, b + ((k - 1) * ldb + n) * es});
  ByteRange cr{c, c + ((m - 1) * ldc + n) * 4};
  acc.lx_write.push_back(cr);
  if (acc_c) acc.lx_read.push_back(cr);
  put(make_instr(Opcode::PtMatmul,
                 {{"cl", cl},
                  {"a", a},
                  {"b", b},
                  {"c", c},
                  {"m", m},
                  {"n", n},
                  {"k", k},
                  {"lda", lda},
                  {"ldb", ldb},
                  {"ldc", ldc},
                  {"dt", static_cast<int64_t>(dt)},
                  {"flags", (acc_c ? 1 : 0) | (trans_b ? 2 : 0)}},
                 kernel_),
      std::move(acc));
}

void Emitter::un(int cl, isa::SfpFn fn, const Tile& dst, const Tile& a, int64_t rows,
                 int64_t cols) {
  Access acc;
  acc.lx_read.push_back(tile_span(a, rows, cols));
  acc.lx_write.push_back(tile_span(dst, rows, cols));
  put(make_instr(Opcode::SfpUnary,
                 {{"cl", cl},
                  {"fn", static_cast<int64_t>(fn)},
                  {"dt", static_cast<int64_t>(a.dt)},
                  {"dst", dst.addr},
                  {"dst_rs", dst.rs},
                  {"dst_cs", dst.cs},
                  {"a", a.addr},
                  {"a_rs", a.rs},
                  {"a_cs", a.cs},
                  {"rows", rows},
                  {"cols", cols}},
                 kernel_),
      std::move(acc));
}

void Emitter::bin(int cl, isa::SfpFn fn, const Tile& dst, const Tile& a, const Tile& b,
                  int64_t rows, int64_t cols) {
  Access acc;
  acc.lx_read.push_back(tile_span(a, rows, cols));
  acc.lx_read.push_back(tile_span(b, rows, cols));
  acc.lx_write.push_back(tile_span(dst, rows, cols));
  put(make_instr(Opcode::SfpBinary,
                 {{"cl", cl},
                  {"fn", static_cast<int64_t>(fn)},
                  {"dt", static_cast<int64_t>(a.dt)},
                  {"dst", dst.addr},
                  {"dst_rs", dst.rs},
                  {"dst_cs", dst.cs},
                  {"a", a.addr},
                  {"a_rs", a.rs},
                  {"a_cs", a.cs},
                  {"b", b.addr},
                  {"b_rs", b.rs},
                  {"b_cs", b.cs},
                  {"rows", rows},
                  {"cols", cols}},
                 kernel_),
      std::move(acc));
}

void Emitter::sel(int cl, const Tile& dst, const Tile& c, const Tile& a, const Tile& b,
                  int64_t rows, int64_t cols) {
  Access acc;
  acc.lx_read.push_back(tile_span(c, rows, cols));
  acc.lx_read.push_back(tile_span(a, rows, cols));
  acc.lx_read.push_back(tile_span(b, rows, cols));
  acc.lx_write.push_back(tile_span(dst, rows, cols));
  put(make_instr(Opcode::SfpSelect,
                 {{"cl", cl},
                  {"dt", static_cast<int64_t>(a.dt)},
                  {"dst", dst.addr},
                  {"dst_rs", dst.rs},
                  {"dst_cs", dst.cs},
                  {"c", c.addr},
                  {"c_rs", c.rs},
                  {"c_cs", c.cs},
                  {"a", a.addr},
                  {"a_rs", a.rs},
                  {"a_cs", a.cs},
                  {"b", b.addr},
                  {"b_rs", b.rs},
                  {"b_cs", b.cs},
                  {"rows", rows},
                  {"cols", cols}},
                 kernel_),
      std::move(acc));
}

void Emitter::red(int cl, isa::SfpFn fn, const Tile& dst, const Tile& a, int64_t rows, int64_t cols,
                  bool acc_dst) {
  Access acc;
  acc.lx_read.push_back(tile_span(a, rows, cols));
  ByteRange d = tile_span(Tile{dst.addr, dst.rs, 0, dst.dt}, rows, 1);
  acc.lx_write.push_back(d);
  if (acc_dst) acc.lx_read.push_back(d);
  put(make_instr(Opcode::SfpReduce,
                 {{"cl", cl},
                  {"fn", static_cast<int64_t>(fn)},
                  {"dt", static_cast<int64_t>(a.dt)},
                  {"dst", dst.addr},
                  {"dst_rs", dst.rs},
                  {"a", a.addr},
                  {"a_rs", a.rs},
                  {"a_cs", a.cs},
                  {"rows", rows},
                  {"cols", cols},
                  {"acc", acc_dst ? 1 : 0}},
                 kernel_),
      std::move(acc));
}

void Emitter::cvt(int cl, const Tile& dst, const Tile& a, int64_t rows, int64_t cols) {
  Access acc;
  acc.lx_read.push_back(tile_span(a, rows, cols));
  acc.lx_write.push_back(tile_span(dst, rows, cols));
  put(make_instr(Opcode::SfpConvert,
                 {{"cl", cl},
                  {"sdt", static_cast<int64_t>(a.dt)},
                  {"ddt", static_cast<int64_t>(dst.dt)},
                  {"dst", dst.addr},
                  {"dst_rs", dst.rs},
                  {"dst_cs", dst.cs},
                  {"a", a.addr},
                  {"a_rs", a.rs},
                  {"a_cs", a.cs},
                  {"rows", rows},
                  {"cols", cols}},
                 kernel_),
      std::move(acc));
}

void Emitter::fill(int cl, const Tile& dst, int64_t rows, int64_t cols, double value) {
  Access acc;
  acc.lx_write.push_back(tile_span(dst, rows, cols));
  put(make_instr(Opcode::SfpFill,
                 {{"cl", cl},
                  {"dt", static_cast<int64_t>(dst.dt)},
                  {"dst", dst.addr},
                  {"dst_rs", dst.rs},
                  {"dst_cs", dst.cs},
                  {"rows", rows},
                  {"cols", cols},
                  {"value", isa::float_operand(value)}},
                 kernel_),
      std::move(acc));
}

}  // namespace spyre::compiler
