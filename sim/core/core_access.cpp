// Core: what an instruction touches. The bounds checks of its DMA, ring, PT and SFP operands
// against the LX and the device memory, and the LX regions the bank model charges (core.h).
#include <array>
#include <iterator>
#include <string>
#include <vector>

#include "spyre/error.h"
#include "spyre/sim/core.h"
#include "spyre/sim/report.h"
#include "spyre/sim/units.h"

namespace spyre::sim {

using isa::Opcode;

namespace {
bool is_dma(Opcode op) { return op == Opcode::DmaLoad || op == Opcode::DmaStore; }
bool is_pt(Opcode op) { return op == Opcode::PtMatmul; }
bool is_ring(Opcode op) { return op == Opcode::RingSend || op == Opcode::RingReduce; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
// The four DMA dimensions around `base` (outer, rep, row; bytes contiguous), on the DRAM or the
// LX side.
std::vector<Dim> dma_dims(const isa::Instr& in, bool dram_side) {
  return {{SPYRE_OPERAND(in, "outer"),
           dram_side ? SPYRE_OPERAND(in, "dram_outer") : SPYRE_OPERAND(in, "lx_outer")},
          {SPYRE_OPERAND(in, "reps"),
           dram_side ? SPYRE_OPERAND(in, "dram_rep") : SPYRE_OPERAND(in, "lx_rep")},
          {SPYRE_OPERAND(in, "rows"),
           dram_side ? SPYRE_OPERAND(in, "dram_stride") : SPYRE_OPERAND(in, "lx_stride")}};
}
}  // namespace

void Core::check_bounds(const Slot& e) const {
  const isa::Instr& in = e.in;
  const InstrRef at = ref(e);
  const int64_t lx_size = env_.cfg.lx_size_bytes;
  const int64_t dram_size = static_cast<int64_t>(env_.program.dram_bytes);
  if (in.op == Opcode::DmaGather || in.op == Opcode::DmaScatter) {
    const int64_t n = SPYRE_OPERAND(in, "n"), bytes = SPYRE_OPERAND(in, "bytes");
    const int64_t isz = SPYRE_OPERAND(in, "idt") == static_cast<int64_t>(isa::DType::I32) ? 4 : 8;
    if (n < 0)
      SPYRE_FAIL("spyre/core/instr", at.where(), "operand n=" + std::to_string(n) + " is negative");
    if (SPYRE_OPERAND(in, "idt") != static_cast<int64_t>(isa::DType::I32) &&
        SPYRE_OPERAND(in, "idt") != static_cast<int64_t>(isa::DType::I64))
      SPYRE_FAIL("spyre/core/instr", at.where(),
                 "operand idt=" + std::to_string(SPYRE_OPERAND(in, "idt")) +
                     " is not int64 (5) or int32 (4)");
    if (n == 0 || bytes <= 0) return;
    check_range(strided_range(SPYRE_OPERAND(in, "idx"), {}, n * isz), lx_size, "LX", at);
    check_range(
        strided_range(SPYRE_OPERAND(in, "lx"), {{n, SPYRE_OPERAND(in, "lx_stride")}}, bytes),
        lx_size, "LX", at);
    if (!env_.functional) return;  // index values exist only when data is simulated
    env_.settle_data();            // the index vector as the instructions before this one left it
    const std::vector<int64_t> idx = index_vector(lx_bytes_, in);
    for (size_t j = 0; j < idx.size(); ++j) {
      if (idx[j] < 0 || idx[j] >= SPYRE_OPERAND(in, "limit"))
        SPYRE_FAIL("spyre/core/instr", at.where(),
                   "index " + std::to_string(j) + " = " + std::to_string(idx[j]) +
                       " is outside [0, " + std::to_string(SPYRE_OPERAND(in, "limit")) + ")");
      check_range(
          strided_range(SPYRE_OPERAND(in, "dram") + idx[j] * SPYRE_OPERAND(in, "dram_stride"), {},
                        bytes),
          dram_size, "DRAM", at);
    }
  } else if (is_dma(in.op)) {
    const bool load = in.op == Opcode::DmaLoad;
    const int64_t bytes = SPYRE_OPERAND(in, "bytes");
    if (SPYRE_OPERAND(in, "outer") < 0)
      SPYRE_FAIL("spyre/core/instr", at.where(),
                 "operand outer=" + std::to_string(SPYRE_OPERAND(in, "outer")) + " is negative");
    ByteRange d = strided_range(SPYRE_OPERAND(in, "dram"), dma_dims(in, true), bytes);
    ByteRange l = strided_range(SPYRE_OPERAND(in, "lx"), dma_dims(in, false), bytes);
    check_range(load ? d : l, load ? dram_size : lx_size, load ? "DRAM" : "LX", at);
    check_range(load ? l : d, load ? lx_size : dram_size, load ? "LX" : "DRAM", at);
    if (load) {
      const auto mask = static_cast<uint64_t>(SPYRE_OPERAND(in, "mcast"));
      const int cores = static_cast<int>(std::min<uint64_t>(64, env_.program.num_cores));
      if (cores < 64 && (mask >> cores) != 0)
        SPYRE_FAIL("spyre/core/instr", at.where(),
                   "mcast mask " + std::to_string(SPYRE_OPERAND(in, "mcast")) +
                       " names a core outside the program's " + std::to_string(cores) + " cores");
    }
  } else if (is_ring(in.op)) {
    const int64_t dst = SPYRE_OPERAND(in, "dst_core");
    if (dst < 0 || dst >= static_cast<int64_t>(env_.program.num_cores))
      SPYRE_FAIL("spyre/core/instr", at.where(),
                 "operand dst_core=" + std::to_string(dst) + " is outside [0, " +
                     std::to_string(env_.program.num_cores - 1) + "]");
    if (in.op == Opcode::RingReduce && SPYRE_OPERAND(in, "bytes") % 4 != 0)
      SPYRE_FAIL("spyre/core/instr", at.where(),
                 "bytes=" + std::to_string(SPYRE_OPERAND(in, "bytes")) +
                     " is not a whole number of fp32 elements");
    check_range(strided_range(SPYRE_OPERAND(in, "src"), {}, SPYRE_OPERAND(in, "bytes")), lx_size,
                "LX", at);
    check_range(strided_range(SPYRE_OPERAND(in, "dst"), {}, SPYRE_OPERAND(in, "bytes")), lx_size,
                "LX", at);
  } else {
    for (const ByteRange& r : is_pt(in.op) ? pt_lx_ranges(in) : sfp_lx_ranges(in))
      check_range(r, lx_size, "LX", at);
  }
}

namespace {

// Which of kSfpOperands an opcode has (base and row stride; column stride), and whether it
// has `fn`: found by name once per opcode, not per instruction.
struct SfpLayout {
  std::array<bool, std::size(kSfpOperands)> has{}, has_cs{};
  bool has_fn = false;
};
const SfpLayout& sfp_layout(Opcode op) {
  static const std::vector<SfpLayout> table = [] {
    std::vector<SfpLayout> t(static_cast<size_t>(isa::num_opcodes()));
    for (int c = 0; c < isa::num_opcodes(); ++c) {
      const isa::OpInfo& info = isa::op_info(static_cast<Opcode>(c));
      SfpLayout& l = t[static_cast<size_t>(c)];
      l.has_fn = info.index_of("fn") >= 0;
      for (size_t i = 0; i < std::size(kSfpOperands); ++i) {
        l.has[i] =
            info.index_of(kSfpOperands[i].base) >= 0 && info.index_of(kSfpOperands[i].rs) >= 0;
        l.has_cs[i] = info.index_of(kSfpOperands[i].cs) >= 0;
      }
    }
    return t;
  }();
  return table[static_cast<size_t>(op)];
}

}  // namespace

LxRegions Core::lx_regions(const isa::Instr& in) const {
  LxRegions out;
  if (is_pt(in.op)) {
    // Bytes of `e` elements: I4 packs two per byte; isa::validate keeps its lda and ldb even,
    // so every row starts on a byte and the row strides below are exact.
    const auto dt = static_cast<isa::DType>(SPYRE_OPERAND(in, "dt"));
    auto bytes = [dt](int64_t e) { return isa::dtype_storage_bytes(dt, e); };
    const int64_t m = SPYRE_OPERAND(in, "m"), n = SPYRE_OPERAND(in, "n"),
                  k = SPYRE_OPERAND(in, "k");
    const int64_t folds_m = ceil_div(m, std::max<int64_t>(1, env_.cfg.pt_rows));
    const int64_t folds_n = ceil_div(n, std::max<int64_t>(1, env_.cfg.pt_lanes));
    const int64_t flags = SPYRE_OPERAND(in, "flags");
    out.push_back({SPYRE_OPERAND(in, "a"), bytes(k), m, bytes(SPYRE_OPERAND(in, "lda")),
                   folds_n});  // A once per N fold
    if (flags & 2)
      out.push_back({SPYRE_OPERAND(in, "b"), bytes(k), n, bytes(SPYRE_OPERAND(in, "ldb")),
                     folds_m});  // B^T [n, k]
    else
      out.push_back({SPYRE_OPERAND(in, "b"), bytes(n), k, bytes(SPYRE_OPERAND(in, "ldb")),
                     folds_m});  // B per M fold
    out.push_back(
        {SPYRE_OPERAND(in, "c"), n * 4, m, SPYRE_OPERAND(in, "ldc") * 4, (flags & 1) ? 2 : 1});
    return out;
  }
  const SfpLayout& layout = sfp_layout(in.op);
  const bool cvt = in.op == Opcode::SfpConvert;
  const bool compare = layout.has_fn && in.op == Opcode::SfpBinary &&
                       isa::sfp_fn_info(static_cast<isa::SfpFn>(SPYRE_OPERAND(in, "fn"))).cls ==
                           isa::SfpClass::Compare;
  const int64_t rows = SPYRE_OPERAND(in, "rows"), cols = SPYRE_OPERAND(in, "cols");
  for (size_t oi = 0; oi < std::size(kSfpOperands); ++oi) {
    const SfpOperandNames& o = kSfpOperands[oi];
    if (!layout.has[oi]) continue;
    const std::string_view n = o.base;
    isa::DType dt;
    if (n == "dst")
      dt = static_cast<isa::DType>(cvt ? SPYRE_OPERAND(in, "ddt") : SPYRE_OPERAND(in, "dt"));
    else if (n == "c")
      dt = isa::DType::Bool;
    else
      dt = static_cast<isa::DType>(cvt ? SPYRE_OPERAND(in, "sdt") : SPYRE_OPERAND(in, "dt"));
    if (n == "dst" && compare) dt = isa::DType::Bool;
    const bool one_col = !layout.has_cs[oi];  // sfp.red's dst: one element per row
    const int64_t cs = one_col ? 0 : in.operand(o.cs_slots);
    const int64_t ncols = one_col ? 1 : cols;
    if (rows <= 0 || ncols <= 0) continue;
    // Row 0's bytes (element_range: for I4 the bytes holding its first and last nibble); rows
    // follow every rs elements (isa::validate keeps an I4 operand's rs even: whole bytes).
    const ByteRange row0 = element_range(in.operand(o.base_slots), {{ncols, cs}}, dt);
    out.push_back(
        {row0.lo, row0.hi - row0.lo, rows, isa::dtype_byte_offset(dt, in.operand(o.rs_slots)), 1});
  }
  return out;
}

}  // namespace spyre::sim
