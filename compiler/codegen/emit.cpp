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
  int64_t outer = dram_side ? sh.dram_outer : sh.lx_outer;
  if (sh.bytes == 0 || sh.rows == 0 || sh.reps == 0 || sh.outer == 0) return {base, base};
  int64_t lo = base + std::min<int64_t>(0, (sh.outer - 1) * outer) +
               std::min<int64_t>(0, (sh.reps - 1) * rep) +
               std::min<int64_t>(0, (sh.rows - 1) * stride);
  int64_t hi = base + std::max<int64_t>(0, (sh.outer - 1) * outer) +
               std::max<int64_t>(0, (sh.reps - 1) * rep) +
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

namespace {
using Operands = std::vector<std::pair<std::string_view, int64_t>>;

// A DMA instruction and the ranges it touches: `load` reads DRAM and writes LX, a store the
// reverse. Both carry the same operands.
std::pair<isa::Instr, Access> dma(Opcode op, bool load, uint64_t dram, int64_t lx,
                                  const DmaShape& shape, uint16_t kernel) {
  const DmaShape sh = collapse(shape);
  auto d = static_cast<int64_t>(dram);
  Access acc;
  (load ? acc.dram_read : acc.dram_write).push_back(dma_span(d, sh, true));
  (load ? acc.lx_write : acc.lx_read).push_back(dma_span(lx, sh, false));
  isa::Instr in = make_instr(op,
                             {{"dram", d},
                              {"lx", lx},
                              {"bytes", sh.bytes},
                              {"rows", sh.rows},
                              {"dram_stride", sh.dram_stride},
                              {"lx_stride", sh.lx_stride},
                              {"reps", sh.reps},
                              {"dram_rep", sh.dram_rep},
                              {"lx_rep", sh.lx_rep},
                              {"outer", sh.outer},
                              {"dram_outer", sh.dram_outer},
                              {"lx_outer", sh.lx_outer}},
                             kernel);
  return {in, std::move(acc)};
}

// The operand names of one SFP tile: its address and its row and column strides.
struct TileNames {
  std::string_view addr, rs, cs;
};
constexpr TileNames kDst{"dst", "dst_rs", "dst_cs"};
constexpr TileNames kA{"a", "a_rs", "a_cs"};
constexpr TileNames kB{"b", "b_rs", "b_cs"};
constexpr TileNames kC{"c", "c_rs", "c_cs"};

// Operands and byte ranges of an SFP instruction on cluster `cl` over rows x cols elements.
class Sfp {
 public:
  Sfp(int cl, int64_t rows, int64_t cols) : rows_(rows), cols_(cols) {
    ops_.emplace_back("cl", cl);
  }
  Sfp& op(std::string_view name, int64_t value) {
    ops_.emplace_back(name, value);
    return *this;
  }
  Sfp& tile(const TileNames& n, const Tile& t) {
    return op(n.addr, t.addr).op(n.rs, t.rs).op(n.cs, t.cs);
  }
  Sfp& read(const TileNames& n, const Tile& t) {
    acc_.lx_read.push_back(tile_span(t, rows_, cols_));
    return tile(n, t);
  }
  Sfp& write(const TileNames& n, const Tile& t) {
    acc_.lx_write.push_back(tile_span(t, rows_, cols_));
    return tile(n, t);
  }
  Access& access() { return acc_; }
  isa::Instr instr(Opcode opc, uint16_t kernel) {
    op("rows", rows_).op("cols", cols_);
    return make_instr(opc, ops_, kernel);
  }

 private:
  int64_t rows_, cols_;
  Operands ops_;
  Access acc_;
};
}  // namespace

void Emitter::load(uint64_t dram, int64_t lx, const DmaShape& shape) {
  auto [in, acc] = dma(Opcode::DmaLoad, true, dram, lx, shape, kernel_);
  put(in, std::move(acc));
}

void Emitter::store(int64_t lx, uint64_t dram, const DmaShape& shape) {
  auto [in, acc] = dma(Opcode::DmaStore, false, dram, lx, shape, kernel_);
  put(in, std::move(acc));
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
  Sfp s(cl, rows, cols);
  s.op("fn", static_cast<int64_t>(fn)).op("dt", static_cast<int64_t>(a.dt));
  s.read(kA, a).write(kDst, dst);
  put(s.instr(Opcode::SfpUnary, kernel_), std::move(s.access()));
}

void Emitter::bin(int cl, isa::SfpFn fn, const Tile& dst, const Tile& a, const Tile& b,
                  int64_t rows, int64_t cols) {
  Sfp s(cl, rows, cols);
  s.op("fn", static_cast<int64_t>(fn)).op("dt", static_cast<int64_t>(a.dt));
  s.read(kA, a).read(kB, b).write(kDst, dst);
  put(s.instr(Opcode::SfpBinary, kernel_), std::move(s.access()));
}

void Emitter::sel(int cl, const Tile& dst, const Tile& c, const Tile& a, const Tile& b,
                  int64_t rows, int64_t cols) {
  Sfp s(cl, rows, cols);
  s.op("dt", static_cast<int64_t>(a.dt));
  s.read(kC, c).read(kA, a).read(kB, b).write(kDst, dst);
  put(s.instr(Opcode::SfpSelect, kernel_), std::move(s.access()));
}

void Emitter::red(int cl, isa::SfpFn fn, const Tile& dst, const Tile& a, int64_t rows, int64_t cols,
                  bool acc_dst) {
  Sfp s(cl, rows, cols);
  s.op("fn", static_cast<int64_t>(fn)).op("dt", static_cast<int64_t>(a.dt));
  s.read(kA, a);
  // One value per row: dst has no column stride.
  s.op(kDst.addr, dst.addr).op(kDst.rs, dst.rs).op("acc", acc_dst ? 1 : 0);
  ByteRange d = tile_span(Tile{dst.addr, dst.rs, 0, dst.dt}, rows, 1);
  s.access().lx_write.push_back(d);
  if (acc_dst) s.access().lx_read.push_back(d);
  put(s.instr(Opcode::SfpReduce, kernel_), std::move(s.access()));
}

void Emitter::cvt(int cl, const Tile& dst, const Tile& a, int64_t rows, int64_t cols) {
  Sfp s(cl, rows, cols);
  s.op("sdt", static_cast<int64_t>(a.dt)).op("ddt", static_cast<int64_t>(dst.dt));
  s.read(kA, a).write(kDst, dst);
  put(s.instr(Opcode::SfpConvert, kernel_), std::move(s.access()));
}

void Emitter::fill(int cl, const Tile& dst, int64_t rows, int64_t cols, double value) {
  Sfp s(cl, rows, cols);
  s.op("dt", static_cast<int64_t>(dst.dt)).op("value", isa::float_operand(value));
  s.write(kDst, dst);
  put(s.instr(Opcode::SfpFill, kernel_), std::move(s.access()));
}

}  // namespace spyre::compiler
