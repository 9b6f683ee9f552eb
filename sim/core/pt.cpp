// PT array: closed-form latency (spyre/arch/unit_timing.h: dataflow, folds, fill/drain) and
// the matmul. Operand element e (e = row * ld + col, in elements) lies at its byte base +
// e * bytes, or for I4 in byte base + floor(e / 2), nibble e mod 2 (spyre/isa/dtype.h).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "spyre/arch/unit_timing.h"
#include "spyre/sim/units.h"

namespace spyre::sim {
namespace {

struct Mm {
  int64_t a, b, c, m, n, k, lda, ldb, ldc, flags;
  isa::DType dt;
};
Mm decode(const isa::Instr& in) {
  Mm x{SPYRE_OPERAND(in, "a"),
       SPYRE_OPERAND(in, "b"),
       SPYRE_OPERAND(in, "c"),
       SPYRE_OPERAND(in, "m"),
       SPYRE_OPERAND(in, "n"),
       SPYRE_OPERAND(in, "k"),
       SPYRE_OPERAND(in, "lda"),
       SPYRE_OPERAND(in, "ldb"),
       SPYRE_OPERAND(in, "ldc"),
       SPYRE_OPERAND(in, "flags"),
       static_cast<isa::DType>(SPYRE_OPERAND(in, "dt"))};
  return x;
}

}  // namespace

ByteRanges pt_lx_ranges(const isa::Instr& in) {
  Mm x = decode(in);
  if (x.m <= 0 || x.n <= 0) return {};
  ByteRanges r;
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

// `n` contiguous 16-bit elements at `src` as fp32, the values the table gives. Where the host
// converts faster and gives every one of the 65,536 values bit for bit as the table does
// (checked on first use: F16C's vcvtph2ps for fp16, a 16-bit shift for bf16), that way; else
// by table.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,f16c"))) void f16_by_f16c(const uint8_t* src, int64_t n, float* dst) {
  const int64_t full = n / 8 * 8;
  for (int64_t i = 0; i < full; i += 8)
    _mm256_storeu_ps(
        dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i))));
  if (full < n) {  // the last few, through a zero-padded vector
    alignas(16) uint8_t h[16] = {};
    std::memcpy(h, src + 2 * full, static_cast<size_t>(2 * (n - full)));
    float f[8];
    _mm256_storeu_ps(f, _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h))));
    std::memcpy(dst + full, f, static_cast<size_t>(n - full) * sizeof(float));
  }
}
bool f16c_usable() { return __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx2"); }
#else
void f16_by_f16c(const uint8_t*, int64_t, float*) {}
bool f16c_usable() { return false; }
#endif
void bf16_by_shift(const uint8_t* src, int64_t n, float* dst) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits = static_cast<uint32_t>(src[2 * i] | (src[2 * i + 1] << 8)) << 16;
    // A signalling NaN quietened, as the table's conversion through double does.
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) bits |= 0x00400000u;
    std::memcpy(dst + i, &bits, 4);
  }
}
// Whether `convert` gives every one of the 65,536 patterns of `dt` as the table does.
bool matches_table(void (*convert)(const uint8_t*, int64_t, float*), isa::DType dt) {
  std::vector<uint8_t> all(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) all[2 * h] = h & 0xff, all[2 * h + 1] = h >> 8;
  std::vector<float> got(65536);
  convert(all.data(), 65536, got.data());
  return std::memcmp(got.data(), half_table(dt), 65536 * sizeof(float)) == 0;
}
void convert16(const uint8_t* src, int64_t n, float* dst, isa::DType dt, const float* table) {
  static const bool f16c = f16c_usable() && matches_table(f16_by_f16c, isa::DType::F16),
                    bf16_shift = matches_table(bf16_by_shift, isa::DType::BF16);
  if (dt == isa::DType::F16 && f16c) return f16_by_f16c(src, n, dst);
  if (dt == isa::DType::BF16 && bf16_shift) return bf16_by_shift(src, n, dst);
  for (int64_t i = 0; i < n; ++i) dst[i] = table[src[2 * i] | (src[2 * i + 1] << 8)];
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
// [panel][kk][t], zero-padded) and rows in blocks of R, so one pass over a panel's kk advances
// R x kPanel independent sums held in registers: the same operations in the same order per
// element, vectorised across columns. A panel row is kPanel / lanes vectors of the host's width,
// and R is what its vector registers hold without spilling (matmul_float below).
constexpr int64_t kPanel = 16;
using F32x16 = float __attribute__((vector_size(64)));  // AVX-512: a panel row in one vector
using F32x8 = float __attribute__((vector_size(32)));   // AVX2: in two
using F32x4 = float __attribute__((vector_size(16)));   // SSE2: in four

template <typename V>
constexpr int kLanes = static_cast<int>(sizeof(V) / sizeof(float));
template <typename V>
constexpr int kPerRow = static_cast<int>(kPanel) / kLanes<V>;  // vectors per panel row

// (by reference: a vector passed by value would change the ABI between the targets)
template <typename V>
__attribute__((always_inline)) inline void load_v(V& v, const float* p) {
  std::memcpy(&v, p, sizeof v);
}

// acc[r][h] (vector h of row r's panel sums) += sum over kk of a[r * k + kk] * panel[kk][h].
template <typename V, int R>
__attribute__((always_inline)) inline void panel_rows(const float* a, int64_t k, const float* panel,
                                                      V (&acc)[R][kPerRow<V>]) {
  for (int64_t kk = 0; kk < k; ++kk) {
    V b[kPerRow<V>];
    for (int h = 0; h < kPerRow<V>; ++h) load_v(b[h], panel + kk * kPanel + h * kLanes<V>);
    for (int r = 0; r < R; ++r) {
      const float ar = a[r * k + kk];
      for (int h = 0; h < kPerRow<V>; ++h) acc[r][h] += ar * b[h];
    }
  }
}

template <typename V, int R>
__attribute__((always_inline)) inline void panel_block(uint8_t* lx, const Mm& x, const float* a,
                                                       const float* panel, int64_t i0, int64_t j0,
                                                       int64_t width) {
  // C is fp32 (isa::DType::F32: 4 little-endian IEEE bytes), a row's columns contiguous.
  float c[R][kPanel] = {};
  if (x.flags & 1)  // accumulate onto C
    for (int r = 0; r < R; ++r)
      std::memcpy(c[r], lx + x.c + ((i0 + r) * x.ldc + j0) * 4, static_cast<size_t>(width) * 4);
  V acc[R][kPerRow<V>];
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < kPerRow<V>; ++h) load_v(acc[r][h], c[r] + h * kLanes<V>);
  panel_rows<V, R>(a + i0 * x.k, x.k, panel, acc);
  for (int r = 0; r < R; ++r) {
    std::memcpy(c[r], &acc[r], sizeof acc[r]);
    std::memcpy(lx + x.c + ((i0 + r) * x.ldc + j0) * 4, c[r], static_cast<size_t>(width) * 4);
  }
}

// Every panel, in blocks of R rows, then of 4, 2 and 1 for the rest.
template <typename V, int R>
__attribute__((always_inline)) inline void matmul_panels(uint8_t* lx, const Mm& x, const float* a,
                                                         const float* bp) {
  const int64_t panels = (x.n + kPanel - 1) / kPanel;
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t j0 = p * kPanel, width = std::min(kPanel, x.n - j0);
    const float* panel = bp + p * x.k * kPanel;
    int64_t i = 0;
    for (; i + R <= x.m; i += R) panel_block<V, R>(lx, x, a, panel, i, j0, width);
    if constexpr (R > 4) {
      if (x.m - i >= 4) {
        panel_block<V, 4>(lx, x, a, panel, i, j0, width);
        i += 4;
      }
    }
    if constexpr (R > 2) {
      if (x.m - i >= 2) {
        panel_block<V, 2>(lx, x, a, panel, i, j0, width);
        i += 2;
      }
    }
    for (; i < x.m; ++i) panel_block<V, 1>(lx, x, a, panel, i, j0, width);
  }
}

// B converted to fp32 in panel order ([panel][kk][t], zero-padded) into `bp`.
void pack_b(const uint8_t* lx, const Mm& x, std::vector<float>& bp) {
  const int64_t panels = (x.n + kPanel - 1) / kPanel;
  bp.assign(static_cast<size_t>(panels * x.k * kPanel), 0.0f);
  const float* table = half_table(x.dt);
  if (x.flags & 2) {  // TRANS_B: B stored [n,k]; read in its storage order
    thread_local std::vector<float> row;
    row.resize(table ? static_cast<size_t>(x.k) : 0);
    for (int64_t j = 0; j < x.n; ++j) {
      float* dst = bp.data() + (j / kPanel) * x.k * kPanel + j % kPanel;
      if (table) {
        convert16(lx + x.b + j * x.ldb * 2, x.k, row.data(), x.dt, table);
        for (int64_t kk = 0; kk < x.k; ++kk) dst[kk * kPanel] = row[static_cast<size_t>(kk)];
      } else {
        for (int64_t kk = 0; kk < x.k; ++kk)
          dst[kk * kPanel] = load_f32(lx, x.b, j * x.ldb + kk, x.dt, nullptr);
      }
    }
  } else {  // B stored [k,n]: each row converted whole, then a panel's run at a time
    thread_local std::vector<float> row;
    row.resize(static_cast<size_t>(x.n));
    for (int64_t kk = 0; kk < x.k; ++kk) {
      if (table) {  // a 16-bit type: straight from the bytes
        convert16(lx + x.b + kk * x.ldb * 2, x.n, row.data(), x.dt, table);
      } else {
        for (int64_t j = 0; j < x.n; ++j)
          row[static_cast<size_t>(j)] = load_f32(lx, x.b, kk * x.ldb + j, x.dt, nullptr);
      }
      for (int64_t p = 0; p < panels; ++p)
        std::memcpy(bp.data() + (p * x.k + kk) * kPanel, row.data() + p * kPanel,
                    static_cast<size_t>(std::min(kPanel, x.n - p * kPanel)) * sizeof(float));
    }
  }
}

// The host's widest vectors, chosen once: 8 rows x 1 vector on AVX-512 (8 of 32 registers), 6
// rows x 2 vectors on AVX2 (12 of 16), 2 rows x 4 vectors on the x86-64 baseline (8 of 16).
// None enables FMA, and every block shape does the same operations per element in the same
// order: the results are the same bits on every host (PtFunctional.* covers each shape's edges);
// a NaN result is a NaN everywhere, its payload the host's choice.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SPYRE_PT_TARGETS 1
__attribute__((target("avx512f"))) void matmul_avx512(uint8_t* lx, const Mm& x, const float* a,
                                                      const float* bp) {
  matmul_panels<F32x16, 8>(lx, x, a, bp);
}
__attribute__((target("avx2"))) void matmul_avx2(uint8_t* lx, const Mm& x, const float* a,
                                                 const float* bp) {
  matmul_panels<F32x8, 6>(lx, x, a, bp);
}
#endif
void matmul_base(uint8_t* lx, const Mm& x, const float* a, const float* bp) {
  matmul_panels<F32x4, 2>(lx, x, a, bp);
}

using MatmulKernel = void (*)(uint8_t*, const Mm&, const float*, const float*);
struct NamedKernel {
  const char* name;
  MatmulKernel fn;
};
std::vector<NamedKernel> host_kernels() {
  std::vector<NamedKernel> out;
#ifdef SPYRE_PT_TARGETS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) out.push_back({"avx512f", &matmul_avx512});
  if (__builtin_cpu_supports("avx2")) out.push_back({"avx2", &matmul_avx2});
#endif
  out.push_back({"base", &matmul_base});
  return out;
}
// Set before any run (static initialisation) or by a test between runs, read by the thread that
// runs the effects.
std::atomic<MatmulKernel> g_matmul{host_kernels().front().fn};

void matmul_float(uint8_t* lx, const Mm& x, const std::vector<float>& a,
                  const std::vector<float>& bp) {
  // Rows of C that overlap (|ldc| < n) and accumulate: a row starts from what the rows before
  // it wrote, so they go one at a time, in the same order on every host.
  if ((x.flags & 1) && x.m > 1 && (x.ldc < 0 ? -x.ldc : x.ldc) < x.n)
    return matmul_panels<F32x4, 1>(lx, x, a.data(), bp.data());
  g_matmul.load(std::memory_order_relaxed)(lx, x, a.data(), bp.data());
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

std::vector<std::string> pt_matmul_kernels() {
  std::vector<std::string> out;
  for (const NamedKernel& k : host_kernels()) out.emplace_back(k.name);
  return out;
}

bool pt_select_matmul_kernel(const std::string& name) {
  for (const NamedKernel& k : host_kernels())
    if (name == k.name) {
      g_matmul.store(k.fn);
      return true;
    }
  return false;
}

void pt_execute(uint8_t* lx, const isa::Instr& in) {
  Mm x = decode(in);
  if (x.m <= 0 || x.n <= 0) return;
  const bool integer = !isa::dtype_is_float(x.dt);
  // A gathered once as fp32, row-major [m,k]; the buffers kept between calls (a pt.mm's are
  // hundreds of KiB: fresh ones would cost page faults every time). thread_local is enough:
  // a run's effects run on one thread (the kernel's, or its DataWorker's), pt_execute returns
  // before another starts (it never waits), nor does it call itself.
  thread_local std::vector<float> a, bp;
  a.resize(static_cast<size_t>(x.m * x.k));
  const float* table = half_table(x.dt);
  for (int64_t i = 0; i < x.m; ++i) {
    if (table) {
      convert16(lx + x.a + i * x.lda * 2, x.k, a.data() + i * x.k, x.dt, table);
      continue;
    }
    for (int64_t kk = 0; kk < x.k; ++kk)
      a[static_cast<size_t>(i * x.k + kk)] = load_f32(lx, x.a, i * x.lda + kk, x.dt, nullptr);
  }
  if (integer) {
    matmul_integer(lx, x, a);
    return;
  }
  pack_b(lx, x, bp);
  matmul_float(lx, x, a, bp);
}

}  // namespace spyre::sim
