// PT array: closed-form latency (spyre/arch/unit_timing.h: dataflow, folds, fill/drain) and
// the matmul. Operand element e (e = row * ld + col, in elements) lies at its byte base +
// e * bytes, or for I4 in byte base + floor(e / 2), nibble e mod 2 (spyre/isa/dtype.h).
#include <algorithm>
#include <cstring>
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
// (an fp8 or 16-bit product is exact in fp32), a multiply then an add (never fused: the
// functional result is the same on every host). Columns go in panels of kPanel (B packed
// [panel][kk][t], zero-padded) and rows in blocks of up to kRows, so one pass over a panel's kk
// advances kRows x kPanel independent sums held in registers: the same operations in the same
// order per element, vectorised across columns.
constexpr int64_t kPanel = 16;
constexpr int kRows = 4;
using F8 = float __attribute__((vector_size(32)));  // 8 lanes: a panel row is two

// (by reference: a 32-byte vector passed by value would change the ABI between the clones)
__attribute__((always_inline)) inline void load8(F8& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}

// acc[r] (a panel's 16 sums of row r, two F8) += sum over kk of a[r * k + kk] * panel[kk].
template <int R>
__attribute__((always_inline)) inline void panel_rows(const float* a, int64_t k, const float* panel,
                                                      F8 (&acc)[R][2]) {
  for (int64_t kk = 0; kk < k; ++kk) {
    F8 b0, b1;
    load8(b0, panel + kk * kPanel);
    load8(b1, panel + kk * kPanel + 8);
    for (int r = 0; r < R; ++r) {
      const float s = a[r * k + kk];
      const F8 av = {s, s, s, s, s, s, s, s};
      acc[r][0] += av * b0;
      acc[r][1] += av * b1;
    }
  }
}

template <int R>
__attribute__((always_inline)) inline void panel_block(uint8_t* lx, const Mm& x, const float* a,
                                                       const float* panel, int64_t i0, int64_t j0,
                                                       int64_t width) {
  // C is fp32 (isa::DType::F32: 4 little-endian IEEE bytes), a row's columns contiguous.
  float c[R][kPanel] = {};
  if (x.flags & 1)  // accumulate onto C
    for (int r = 0; r < R; ++r)
      std::memcpy(c[r], lx + x.c + ((i0 + r) * x.ldc + j0) * 4, static_cast<size_t>(width) * 4);
  F8 acc[R][2];
  for (int r = 0; r < R; ++r) load8(acc[r][0], c[r]), load8(acc[r][1], c[r] + 8);
  panel_rows<R>(a + i0 * x.k, x.k, panel, acc);
  for (int r = 0; r < R; ++r) {
    std::memcpy(c[r], &acc[r][0], sizeof acc[r][0]);
    std::memcpy(c[r] + 8, &acc[r][1], sizeof acc[r][1]);
    std::memcpy(lx + x.c + ((i0 + r) * x.ldc + j0) * 4, c[r], static_cast<size_t>(width) * 4);
  }
}

// The host's widest vectors where it has them (ifunc; AVX2 without FMA: the same roundings).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SPYRE_PT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SPYRE_PT_CLONES
#endif

SPYRE_PT_CLONES void matmul_float(uint8_t* lx, const Mm& x, const std::vector<float>& a) {
  const int64_t panels = (x.n + kPanel - 1) / kPanel;
  std::vector<float> bp(static_cast<size_t>(panels * x.k * kPanel), 0.0f);
  const float* table = half_table(x.dt);
  if (x.flags & 2) {  // TRANS_B: B stored [n,k]; read in its storage order
    for (int64_t j = 0; j < x.n; ++j) {
      float* dst = bp.data() + (j / kPanel) * x.k * kPanel + j % kPanel;
      for (int64_t kk = 0; kk < x.k; ++kk)
        dst[kk * kPanel] = load_f32(lx, x.b, j * x.ldb + kk, x.dt, table);
    }
  } else {  // B stored [k,n]: each row's columns, a panel's run at a time
    for (int64_t kk = 0; kk < x.k; ++kk)
      for (int64_t p = 0; p < panels; ++p) {
        float* dst = bp.data() + (p * x.k + kk) * kPanel;
        const int64_t e0 = kk * x.ldb + p * kPanel, w = std::min(kPanel, x.n - p * kPanel);
        if (table) {  // a 16-bit type: the table, straight from the bytes
          const uint8_t* src = lx + x.b + e0 * 2;
          for (int64_t t = 0; t < w; ++t) dst[t] = table[src[2 * t] | (src[2 * t + 1] << 8)];
        } else {
          for (int64_t t = 0; t < w; ++t) dst[t] = load_f32(lx, x.b, e0 + t, x.dt, nullptr);
        }
      }
  }
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t j0 = p * kPanel, width = std::min(kPanel, x.n - j0);
    const float* panel = bp.data() + p * x.k * kPanel;
    int64_t i = 0;
    for (; i + kRows <= x.m; i += kRows) panel_block<kRows>(lx, x, a.data(), panel, i, j0, width);
    const int64_t rest = x.m - i;  // 0 to kRows - 1 rows left
    if (rest == 3)
      panel_block<3>(lx, x, a.data(), panel, i, j0, width);
    else if (rest == 2)
      panel_block<2>(lx, x, a.data(), panel, i, j0, width);
    else if (rest == 1)
      panel_block<1>(lx, x, a.data(), panel, i, j0, width);
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
