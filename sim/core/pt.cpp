// PT array: closed-form latency (spyre/arch/unit_timing.h: dataflow, folds, fill/drain) and
// the matmul. Operand element e (e = row * ld + col, in elements) lies at its byte base +
// e * bytes, or for I4 in byte base + floor(e / 2), nibble e mod 2 (spyre/isa/dtype.h).
#include <algorithm>
#include <vector>

#include "spyre/arch/unit_timing.h"
#include "spyre/sim/units.h"

namespace spyre::sim {
namespace {

struct Mm {
  int64_t a, b, c, m, n, k, lda, ldb, ldc, flags;
  isa::DType dt;
};
Mm decode(const isa::Instr& in) {
  Mm x{in.get("a"),
       in.get("b"),
       in.get("c"),
       in.get("m"),
       in.get("n"),
       in.get("k"),
       in.get("lda"),
       in.get("ldb"),
       in.get("ldc"),
       in.get("flags"),
       static_cast<isa::DType>(in.get("dt"))};
  return x;
}

}  // namespace

uint64_t pt_cycles(const arch::ArchConfig& cfg, const isa::Instr& in) {
  return static_cast<uint64_t>(arch::pt_mm_cycles(cfg, in));
}

std::vector<ByteRange> pt_lx_ranges(const isa::Instr& in) {
  Mm x = decode(in);
  if (x.m <= 0 || x.n <= 0) return {};
  std::vector<ByteRange> r;
  r.push_back(element_range(x.a, {{x.m, x.lda}, {x.k, 1}}, x.dt));
  if (x.flags & 2)
    r.push_back(element_range(x.b, {{x.n, x.ldb}, {x.k, 1}}, x.dt));
  else
    r.push_back(element_range(x.b, {{x.k, x.ldb}, {x.n, 1}}, x.dt));
  r.push_back(strided_range(x.c, {{x.m, x.ldc * 4}, {x.n, 4}}, 4));
  return r;
}

namespace {

// Element of a 16-bit float type as fp32 by table (load_element's value, built once): the
// operand gather converts every A and B element of each pt.mm, which dominated functional runs
// of tiles with few rows (the compiler's m = 8 passes).
const float* half_table(isa::DType dt) {
  auto build = [](isa::DType t) {
    std::vector<float> v(65536);
    for (uint32_t h = 0; h < 65536; ++h) {
      const uint8_t b[2] = {static_cast<uint8_t>(h & 0xff), static_cast<uint8_t>(h >> 8)};
      v[h] = static_cast<float>(isa::load_element(b, t));
    }
    return v;
  };
  static const std::vector<float> f16 = build(isa::DType::F16), bf16 = build(isa::DType::BF16);
  return dt == isa::DType::F16 ? f16.data() : dt == isa::DType::BF16 ? bf16.data() : nullptr;
}

// Element `e` of the operand at byte `base` as fp32 (exact for every input dtype the PT takes:
// fp8 and int4 too).
inline float load_f32(const uint8_t* lx, int64_t base, int64_t e, isa::DType dt,
                      const float* table) {
  if (table) {
    const uint8_t* p = lx + base + e * 2;
    return table[p[0] | (p[1] << 8)];
  }
  return static_cast<float>(isa::load_element(lx + base, dt, e));
}

// Floating inputs (fp16, bf16, fp32, fp8): every C(i,j) is its own fp32 sum over kk ascending
// (an fp8 or 16-bit product is exact in fp32). Columns go in panels of
// kPanel (B packed [panel][kk][t], zero-padded) so one pass over kk advances kPanel independent
// sums: the same operations in the same order per element, but the adds of different columns
// overlap in the pipeline (and vectorise) instead of waiting on one dependency chain.
constexpr int64_t kPanel = 16;

void matmul_float(uint8_t* lx, const Mm& x, const std::vector<float>& a) {
  const bool accumulate = x.flags & 1;
  const int64_t panels = (x.n + kPanel - 1) / kPanel;
  std::vector<float> bp(static_cast<size_t>(panels * x.k * kPanel), 0.0f);
  const float* table = half_table(x.dt);
  const bool trans_b = x.flags & 2;
  for (int64_t r = 0; r < (trans_b ? x.n : x.k); ++r)  // B in its storage order
    for (int64_t q = 0; q < (trans_b ? x.k : x.n); ++q) {
      const int64_t j = trans_b ? r : q, kk = trans_b ? q : r;
      bp[static_cast<size_t>(((j / kPanel) * x.k + kk) * kPanel + j % kPanel)] =
          load_f32(lx, x.b, r * x.ldb + q, x.dt, table);
    }
  for (int64_t i = 0; i < x.m; ++i) {
    const float* ar = a.data() + i * x.k;
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t j0 = p * kPanel, width = std::min(kPanel, x.n - j0);
      float acc[kPanel] = {};
      if (accumulate)
        for (int64_t t = 0; t < width; ++t)
          acc[t] = static_cast<float>(
              isa::load_element(lx + x.c + (i * x.ldc + j0 + t) * 4, isa::DType::F32));
      const float* panel = bp.data() + p * x.k * kPanel;
      for (int64_t kk = 0; kk < x.k; ++kk) {
        const float av = ar[kk];
        const float* bk = panel + kk * kPanel;
        for (int64_t t = 0; t < kPanel; ++t) acc[t] += av * bk[t];
      }
      for (int64_t t = 0; t < width; ++t)
        isa::store_element(lx + x.c + (i * x.ldc + j0 + t) * 4, isa::DType::F32, acc[t]);
    }
  }
}

// Integer inputs (int8, int4, ...): exact products summed in int64, the int32 result joins the
// fp32 C.
void matmul_integer(uint8_t* lx, const Mm& x, const std::vector<float>& a) {
  const bool accumulate = x.flags & 1;
  std::vector<float> bt(static_cast<size_t>(x.n * x.k));  // B transposed to [n,k]
  for (int64_t j = 0; j < x.n; ++j)
    for (int64_t kk = 0; kk < x.k; ++kk) {
      const int64_t off = (x.flags & 2) ? (j * x.ldb + kk) : (kk * x.ldb + j);
      bt[static_cast<size_t>(j * x.k + kk)] =
          static_cast<float>(isa::load_element(lx + x.b, x.dt, off));
    }
  for (int64_t i = 0; i < x.m; ++i) {
    const float* ar = a.data() + i * x.k;
    for (int64_t j = 0; j < x.n; ++j) {
      const float* bc = bt.data() + j * x.k;
      uint8_t* cp = lx + x.c + (i * x.ldc + j) * 4;
      float acc = accumulate ? static_cast<float>(isa::load_element(cp, isa::DType::F32)) : 0.0f;
      int64_t s = 0;
      for (int64_t kk = 0; kk < x.k; ++kk)
        s += static_cast<int64_t>(ar[kk]) * static_cast<int64_t>(bc[kk]);
      acc += static_cast<float>(static_cast<int32_t>(s));
      isa::store_element(cp, isa::DType::F32, acc);
    }
  }
}

}  // namespace

void pt_execute(uint8_t* lx, const isa::Instr& in) {
  Mm x = decode(in);
  if (x.m <= 0 || x.n <= 0) return;
  const bool integer = !isa::dtype_is_float(x.dt);
  // A gathered once as fp32, row-major [m,k].
  std::vector<float> a(static_cast<size_t>(x.m * x.k));
  const float* table = half_table(x.dt);
  for (int64_t i = 0; i < x.m; ++i)
    for (int64_t kk = 0; kk < x.k; ++kk)
      a[static_cast<size_t>(i * x.k + kk)] = load_f32(lx, x.a, i * x.lda + kk, x.dt, table);
  if (integer)
    matmul_integer(lx, x, a);
  else
    matmul_float(lx, x, a);
}

}  // namespace spyre::sim
