// PT array timing: exact tiles per dataflow and fill/drain mode, dtype rates, and the SCALE-Sim
// property test. Every expected count is arithmetic in a comment or SCALE-Sim v3's closed form
// written out here, never a number the simulator printed.
//
// Which count is compared: the PT busy cycles of the pt.mm (stats cores[0].pt0.busy_cycles).
// SCALE-Sim's "Total Cycles" is the 0-based index of the last compute cycle, i.e. busy - 1.
// In the scalesim presets issue_cycles is 0, so the run's total cycles equal the busy cycles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "sim_test_util.h"
#include "spyre/arch/unit_timing.h"
#include "spyre/error.h"
#include "spyre/sim/units.h"

namespace spyre::sim {
namespace {

using test::busy;
using test::config;
using test::program;

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// SCALE-Sim v3's closed forms (issue 3), the 0-based index of the last compute cycle.
int64_t scalesim_cycles(const std::string& df, int64_t R, int64_t C, int64_t M, int64_t N,
                        int64_t K) {
  if (df == "os") return cdiv(M, R) * cdiv(N, C) * (K + R + C - 2) - 1;
  if (df == "ws") return cdiv(K, R) * cdiv(N, C) * (M + 2 * R + C - 2) - 1;
  return cdiv(K, R) * cdiv(M, C) * (N + 2 * R + C - 2) - 1;
}

// "spyre" with its folds overlapped: the exact-cycle tests of the overlap formulas.
arch::ArchConfig overlap_config() {
  auto cfg = config();
  cfg.pt_fill_drain = "overlap";
  return cfg;
}

arch::ArchConfig scalesim(int64_t size, const std::string& df) {
  return arch::load_arch(size == 8 ? "scalesim" : "scalesim32", {"pt.dataflow=" + df});
}

std::string mm(int64_t m, int64_t n, int64_t k, const char* dt = "f16", int cl = 0) {
  // A at 0, B after A, C after B; leading dimensions equal to the widths (i4: two per byte).
  const std::string d = dt;
  const int64_t bits = d == "i4" ? 4 : d == "i8" || d == "f8e4m3" ? 8 : d == "f32" ? 32 : 16;
  const int64_t b = (m * k * bits + 7) / 8, c = b + (k * n * bits + 7) / 8;
  return "  pt.mm cl=" + std::to_string(cl) + " a=0 b=" + std::to_string(b) +
         " c=" + std::to_string(c) + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
         " k=" + std::to_string(k) + " lda=" + std::to_string(k) + " ldb=" + std::to_string(n) +
         " ldc=" + std::to_string(n) + " dt=" + dt + "\n";
}

SimResult run_one(const arch::ArchConfig& cfg, int64_t m, int64_t n, int64_t k,
                  const char* dt = "f16") {
  SimOptions o;
  o.functional = false;
  return test::run(program(1, ".core 0\n" + mm(m, n, k, dt) + "  halt\n"), cfg, o);
}

// A pt.mm at LX bytes A, B, C (leading dimensions in elements; flags: 1 accumulate, 2 TRANS_B).
isa::Instr pt_mm(int64_t A, int64_t B, int64_t C, int64_t m, int64_t n, int64_t k, int64_t lda,
                 int64_t ldb, int64_t ldc, int64_t flags, isa::DType dt) {
  return isa::make_instr(isa::Opcode::PtMatmul, {{"cl", 0},
                                                 {"a", A},
                                                 {"b", B},
                                                 {"c", C},
                                                 {"m", m},
                                                 {"n", n},
                                                 {"k", k},
                                                 {"lda", lda},
                                                 {"ldb", ldb},
                                                 {"ldc", ldc},
                                                 {"flags", flags},
                                                 {"dt", static_cast<int64_t>(dt)}});
}

// --- the "spyre" default: output-stationary, every fold drains -----------------------------

TEST(PtArray, SpyreDefaultIsOutputStationaryAndEveryFoldDrains) {
  auto cfg = config();
  EXPECT_EQ(cfg.pt_dataflow, "os");
  EXPECT_EQ(cfg.pt_fill_drain, "per_fold");
  // m=24, n=100, k=40 f16: ceil(24/8)*ceil(100/64) = 6 folds, 6*(40 + 8 + 64 - 2) = 660.
  auto r = run_one(cfg, 24, 100, 40);
  EXPECT_EQ(busy(r, 0, "pt0"), 660u);
  EXPECT_EQ(r.cycles, 1u + 660u);  // issue + PT
  // With the folds overlapped the drain shows once: 6*40 + 8 + 64 - 2 = 310.
  cfg.pt_fill_drain = "overlap";
  auto o = run_one(cfg, 24, 100, 40);
  EXPECT_EQ(busy(o, 0, "pt0"), 310u);
}

TEST(PtArray, DtypeRates) {
  auto cfg = overlap_config();
  // i8, k=33: k_eff = ceil(33/2) = 17; 1 fold: 17 + 70 = 87.
  EXPECT_EQ(busy(run_one(cfg, 8, 64, 33, "i8"), 0, "pt0"), 87u);
  // f32, k=33: k_eff = 33*2 = 66; 1 fold: 66 + 70 = 136.
  EXPECT_EQ(busy(run_one(cfg, 8, 64, 33, "f32"), 0, "pt0"), 136u);
  // pt.int8_rate=4: k_eff = ceil(33/4) = 9; 9 + 70 = 79.
  cfg.pt_int8_rate = 4;
  EXPECT_EQ(busy(run_one(cfg, 8, 64, 33, "i8"), 0, "pt0"), 79u);
}

TEST(PtArray, Fp8AtTheInt8RateAndInt4AtTheInt4Rate) {
  auto cfg = overlap_config();
  EXPECT_EQ(cfg.pt_int8_rate, 2);
  EXPECT_EQ(cfg.pt_int4_rate, 4);
  // os, one fold (m=8, n=64), drain R + C - 2 = 70:
  // f8e4m3, k=33: k_eff = ceil(33/2) = 17: 17 + 70 = 87 (as i8).
  EXPECT_EQ(busy(run_one(cfg, 8, 64, 33, "f8e4m3"), 0, "pt0"), 87u);
  // i4, k=66: k_eff = ceil(66/4) = 17: 87; k=34: ceil(34/4) = 9: 79; f16 k=66 would be 136.
  EXPECT_EQ(busy(run_one(cfg, 8, 64, 66, "i4"), 0, "pt0"), 87u);
  EXPECT_EQ(busy(run_one(cfg, 8, 64, 34, "i4"), 0, "pt0"), 79u);
  EXPECT_EQ(busy(run_one(cfg, 8, 64, 66, "f16"), 0, "pt0"), 136u);
  // Six folds (m=24, n=100: 3*2), k=40: f8e4m3 6*ceil(40/2) + 70 = 190; i4 6*10 + 70 = 130.
  EXPECT_EQ(busy(run_one(cfg, 24, 100, 40, "f8e4m3"), 0, "pt0"), 190u);
  EXPECT_EQ(busy(run_one(cfg, 24, 100, 40, "i4"), 0, "pt0"), 130u);
  // pt.int4_rate=8: i4 k=66: ceil(66/8) = 9: 79; fp8 keeps the int8 rate: 87.
  cfg.pt_int4_rate = 8;
  EXPECT_EQ(busy(run_one(cfg, 8, 64, 66, "i4"), 0, "pt0"), 79u);
  EXPECT_EQ(busy(run_one(cfg, 8, 64, 33, "f8e4m3"), 0, "pt0"), 87u);
  // is: rows <- k_eff. i4 m=100, n=30, k=20: k_eff = ceil(20/4) = 5, folds = 1*ceil(100/64) = 2,
  // P = 8, T = 30: 8 + 30 + 30 + 70 = 138 (f16 needs ceil(20/8) = 3 row folds: 6 folds,
  // 8 + 5*30 + 30 + 70 = 258).
  cfg = overlap_config();
  cfg.pt_dataflow = "is";
  EXPECT_EQ(busy(run_one(cfg, 100, 30, 20, "i4"), 0, "pt0"), 138u);
  EXPECT_EQ(busy(run_one(cfg, 100, 30, 20, "f16"), 0, "pt0"), 258u);
  cfg.pt_int4_rate = 0;
  EXPECT_THROW(arch::validate_unit_timing(cfg), Error);
}

TEST(PtArray, WeightStationaryOverlapHidesTheNextPreload) {
  auto cfg = overlap_config();
  cfg.pt_dataflow = "ws";
  // ws: rows <- k, lanes <- n, m streamed. m=20, n=128, k=16 f16, R=8, C=64:
  // folds = ceil(16/8)*ceil(128/64) = 4, P = 8, T = 20, D = 70.
  // overlap: P + (folds-1)*max(T,P) + T + D = 8 + 3*20 + 20 + 70 = 158.
  EXPECT_EQ(busy(run_one(cfg, 20, 128, 16), 0, "pt0"), 158u);
  // m=3 < P: the preload paces the folds: 8 + 3*max(3,8) + 3 + 70 = 105.
  EXPECT_EQ(busy(run_one(cfg, 3, 128, 16), 0, "pt0"), 105u);
  // per_fold: 4 * (8 + 20 + 70) = 392.
  cfg.pt_fill_drain = "per_fold";
  EXPECT_EQ(busy(run_one(cfg, 20, 128, 16), 0, "pt0"), 392u);
}

// Two pt.mm on one array, the second starting the cycle the first completes.
SimResult run_two(const arch::ArchConfig& cfg, int64_t m, int64_t n, int64_t k) {
  SimOptions o;
  o.functional = false;
  return test::run(program(1, ".core 0\n" + mm(m, n, k) + mm(m, n, k) + "  halt\n"), cfg, o);
}

TEST(PtArray, WeightStationaryOverlapChainsBackToBackInstructions) {
  auto cfg = overlap_config();
  cfg.pt_dataflow = "ws";
  // m=20, n=128, k=16 as above: the first 158. The second's weights shifted in under the
  // first's last stream (T' = 20 >= P = 8) and its stream follows while the first drains:
  // max(0, P - T') + (folds-1)*max(T,P) + T = 0 + 3*20 + 20 = 80 more.
  EXPECT_EQ(busy(run_two(cfg, 20, 128, 16), 0, "pt0"), 158u + 80u);
  // m=3: the first's last stream (3) hides 3 of the next preload's 8 cycles:
  // 105 + (8 - 3) + 3*max(3,8) + 3 = 105 + 32.
  EXPECT_EQ(busy(run_two(cfg, 3, 128, 16), 0, "pt0"), 105u + 32u);
  // per_fold ("spyre"): every instruction pays its own preload and drain: 2 * 392.
  cfg.pt_fill_drain = "per_fold";
  EXPECT_EQ(busy(run_two(cfg, 20, 128, 16), 0, "pt0"), 2u * 392u);
  // The closed form the compiler's timeline shares: alone, chained, and a run of them.
  cfg.pt_fill_drain = "overlap";
  const auto f16 = isa::DType::F16;
  EXPECT_EQ(arch::pt_mm_cycles(cfg, 20, 128, 16, f16), 158);
  EXPECT_EQ(arch::pt_mm_cycles(cfg, 20, 128, 16, f16, 20), 80);
  EXPECT_EQ(arch::pt_mm_chained_cycles(cfg, 20, 128, 16, f16), 80);
  // A pt.mm starting after the array went idle (not the last completion) pays everything.
  arch::PtPipe pipe;
  const isa::Instr in = pt_mm(0, 640, 4736, 20, 128, 16, 16, 128, 128, 0, f16);
  EXPECT_EQ(pipe.start(cfg, in, 0), 158);
  EXPECT_EQ(pipe.start(cfg, in, 158), 80);
  EXPECT_EQ(pipe.start(cfg, in, 300), 158);
}

TEST(PtArray, InputStationaryFoldsOverKAndM) {
  auto cfg = overlap_config();
  cfg.pt_dataflow = "is";
  // is: rows <- k, lanes <- m, n streamed. m=100, n=30, k=10 f16:
  // folds = ceil(10/8)*ceil(100/64) = 4, P = 8, T = 30, D = 70.
  // overlap: 8 + 3*30 + 30 + 70 = 198.
  EXPECT_EQ(busy(run_one(cfg, 100, 30, 10), 0, "pt0"), 198u);
  // int8 packs k: k_eff = ceil(10/2) = 5, one row fold: folds = 1*2 = 2: 8 + 30 + 30 + 70 = 138.
  EXPECT_EQ(busy(run_one(cfg, 100, 30, 10, "i8"), 0, "pt0"), 138u);
}

TEST(PtArray, UnknownDataflowOrFillModeIsAnErrorListingTheNames) {
  auto cfg = config();
  cfg.pt_dataflow = "rs";
  try {
    run_one(cfg, 8, 8, 8);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("known: os, ws, is"), std::string::npos) << e.what();
  }
  cfg = config();
  cfg.pt_fill_drain = "sometimes";
  EXPECT_THROW(arch::validate_unit_timing(cfg), Error);
  EXPECT_THROW(arch::load_arch("spyre", {"pt.dataflow="}), Error);
}

// --- the scalesim presets -----------------------------------------------------------------

TEST(PtScaleSim, OutputStationaryTile) {
  // 8x8, M=20 N=9 K=13: ceil(20/8)*ceil(9/8) = 3*2 = 6 folds of 13 + 8 + 8 - 2 = 27:
  // busy 6*27 = 162; SCALE-Sim 162 - 1 = 161 (SCALE-Sim 3.0.0 printed 161 for this shape).
  auto r = run_one(scalesim(8, "os"), 20, 9, 13);
  EXPECT_EQ(busy(r, 0, "pt0"), 162u);
  EXPECT_EQ(r.cycles, 162u);  // issue_cycles 0: the run is the PT
  EXPECT_EQ(busy(r, 0, "pt0") - 1, static_cast<uint64_t>(scalesim_cycles("os", 8, 8, 20, 9, 13)));
}

TEST(PtScaleSim, WeightStationaryTile) {
  // 8x8, M=20 N=9 K=13: ceil(13/8)*ceil(9/8) = 2*2 = 4 folds of 20 + 16 + 8 - 2 = 42:
  // busy 168; SCALE-Sim 167.
  auto r = run_one(scalesim(8, "ws"), 20, 9, 13);
  EXPECT_EQ(busy(r, 0, "pt0"), 168u);
  EXPECT_EQ(r.cycles, 168u);
}

TEST(PtScaleSim, InputStationaryTile) {
  // 8x8, M=20 N=9 K=13: ceil(13/8)*ceil(20/8) = 2*3 = 6 folds of 9 + 16 + 8 - 2 = 31:
  // busy 186; SCALE-Sim 185.
  auto r = run_one(scalesim(8, "is"), 20, 9, 13);
  EXPECT_EQ(busy(r, 0, "pt0"), 186u);
  EXPECT_EQ(r.cycles, 186u);
}

TEST(PtScaleSim, ThirtyTwoSquareTiles) {
  // 32x32, M=N=K=64: os 2*2*(64+62) = 504; ws and is 2*2*(64+64+32-2) = 632.
  EXPECT_EQ(busy(run_one(scalesim(32, "os"), 64, 64, 64), 0, "pt0"), 504u);
  EXPECT_EQ(busy(run_one(scalesim(32, "ws"), 64, 64, 64), 0, "pt0"), 632u);
  EXPECT_EQ(busy(run_one(scalesim(32, "is"), 64, 64, 64), 0, "pt0"), 632u);
}

// 200 random shapes per array size and dataflow (1200 runs), seeded: the simulator's PT busy
// cycles, less SCALE-Sim's 0-based offset, equal SCALE-Sim's closed form; so does the run total.
TEST(PtScaleSim, PropertyRandomShapesMatchClosedForms) {
  std::mt19937_64 rng(20250903);
  int checked = 0;
  for (int64_t size : {8, 32}) {
    for (const char* df : {"os", "ws", "is"}) {
      const auto cfg = scalesim(size, df);
      std::uniform_int_distribution<int64_t> dim(1, 4 * size + 7);
      for (int i = 0; i < 200; ++i) {
        const int64_t M = dim(rng), N = dim(rng), K = dim(rng);
        auto r = run_one(cfg, M, N, K);
        const int64_t want = scalesim_cycles(df, size, size, M, N, K);
        ASSERT_EQ(static_cast<int64_t>(busy(r, 0, "pt0")) - 1, want)
            << df << " " << size << "x" << size << " M=" << M << " N=" << N << " K=" << K;
        ASSERT_EQ(static_cast<int64_t>(r.cycles) - 1, want);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 1200);
}

// Functional: the panelled matmul (blocks of 8, 6, 4, 2 and 1 rows x 16 columns, vectorised)
// gives every C(i,j) bit for bit the plain fp32 sum over kk ascending (a multiply then an add,
// no FMA): row counts around the blocks, widths around the panel of 16, B plain and TRANS_B,
// with and without accumulate; with each kernel this host runs (pt_matmul_kernels).
void check_panelled_matmul() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  int checked = 0;
  // pad: leading dimensions past the widths (lda = k + 3, ldb + 5, ldc = n + 2), C's padding
  // holding a NaN that must stay
  for (int64_t pad : {0, 1})
    for (int64_t k : {0, 1, 29})
      for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13})
        for (int64_t n : {1, 16, 37})
          for (int64_t flags : {0, 1, 2, 3}) {
            const bool trans_b = flags & 2;
            const int64_t lda = k + 3 * pad, ldb = (trans_b ? k : n) + 5 * pad, ldc = n + 2 * pad;
            std::vector<uint8_t> lx(1 << 16, 0);
            const int64_t A = 0, B = 4096, C = 16384;
            std::vector<float> a(m * k), bt(n * k), c0(m * n, 0.0f);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t kk = 0; kk < k; ++kk) {
                const int64_t e = i * lda + kk;
                isa::store_element(lx.data() + A + e * 2, isa::DType::F16, u(rng));
                a[i * k + kk] =
                    static_cast<float>(isa::load_element(lx.data() + A + e * 2, isa::DType::F16));
              }
            for (int64_t j = 0; j < n; ++j)  // bt[j, kk] = B(kk, j), stored [n,k] or [k,n]
              for (int64_t kk = 0; kk < k; ++kk) {
                const int64_t e = trans_b ? j * ldb + kk : kk * ldb + j;
                isa::store_element(lx.data() + B + e * 2, isa::DType::F16, u(rng));
                bt[j * k + kk] =
                    static_cast<float>(isa::load_element(lx.data() + B + e * 2, isa::DType::F16));
              }
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < ldc; ++j) {  // C: the sum's start, a value to overwrite
                const float v = j < n ? static_cast<float>(u(rng)) : std::nanf("");
                if (j < n && (flags & 1)) c0[i * n + j] = v;
                isa::store_element(lx.data() + C + (i * ldc + j) * 4, isa::DType::F32, v);
              }
            auto in = pt_mm(A, B, C, m, n, k, lda, ldb, ldc, flags, isa::DType::F16);
            pt_execute(lx.data(), in);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = n; j < ldc; ++j) {
                float pad_value;
                std::memcpy(&pad_value, lx.data() + C + (i * ldc + j) * 4, 4);
                ASSERT_TRUE(std::isnan(pad_value)) << "C(" << i << "," << j << ") past n=" << n;
              }
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                volatile float acc = c0[i * n + j];
                for (int64_t kk = 0; kk < k; ++kk) {
                  volatile float prod = a[i * k + kk] * bt[j * k + kk];
                  acc = acc + prod;
                }
                const float want = acc;
                uint32_t got_bits, want_bits;  // bit for bit: the sign of a zero too
                std::memcpy(&got_bits, lx.data() + C + (i * ldc + j) * 4, 4);
                std::memcpy(&want_bits, &want, 4);
                ASSERT_EQ(got_bits, want_bits)
                    << "C(" << i << "," << j << ") m=" << m << " n=" << n << " k=" << k
                    << " flags=" << flags << " pad=" << pad;
                ++checked;
              }
          }
  EXPECT_EQ(checked,
            2 * 3 * 4 * (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 11 + 12 + 13) * (1 + 16 + 37));
}

TEST(PtFunctional, PanelledMatmulIsBitExactWithTheSequentialSum) {
  const std::vector<std::string> kernels = pt_matmul_kernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(kernels.back(), "base");
  for (const std::string& k : kernels) {
    SCOPED_TRACE("kernel " + k);
    ASSERT_TRUE(pt_select_matmul_kernel(k));
    check_panelled_matmul();
  }
  EXPECT_FALSE(pt_select_matmul_kernel("no such kernel"));
  ASSERT_TRUE(pt_select_matmul_kernel(kernels.front()));  // the host's own, for later tests
}

// Functional: rows of C that overlap (ldc 0: every row the same; ldc 5 < n = 16) with
// accumulate go one row at a time on every kernel: row i starts from what row i - 1 wrote.
TEST(PtFunctional, OverlappingAccumulatedRowsGoInOrderOnEveryKernel) {
  const int64_t m = 7, n = 16, k = 9, A = 0, B = 4096, C = 16384;
  for (int64_t ldc : {0, 5})
    for (const std::string& kern : pt_matmul_kernels()) {
      SCOPED_TRACE("kernel " + kern + " ldc " + std::to_string(ldc));
      ASSERT_TRUE(pt_select_matmul_kernel(kern));
      std::vector<uint8_t> lx(1 << 16, 0);
      std::vector<float> a(m * k), b(k * n), c((m - 1) * ldc + n);
      for (int64_t e = 0; e < m * k; ++e) {
        isa::store_element(lx.data() + A + e * 2, isa::DType::F16, 0.25 * (e % 11) - 1.0);
        a[e] = static_cast<float>(isa::load_element(lx.data() + A + e * 2, isa::DType::F16));
      }
      for (int64_t e = 0; e < k * n; ++e) {
        isa::store_element(lx.data() + B + e * 2, isa::DType::F16, 0.5 * (e % 7) - 1.5);
        b[e] = static_cast<float>(isa::load_element(lx.data() + B + e * 2, isa::DType::F16));
      }
      for (size_t j = 0; j < c.size(); ++j) {
        c[j] = 0.125f * static_cast<float>(j);
        isa::store_element(lx.data() + C + static_cast<int64_t>(j) * 4, isa::DType::F32, c[j]);
      }
      for (int64_t i = 0; i < m; ++i) {  // the reference: a row reads C, then writes it
        std::vector<float> row(c.begin() + i * ldc, c.begin() + i * ldc + n);
        for (int64_t j = 0; j < n; ++j) {
          volatile float acc = row[j];
          for (int64_t kk = 0; kk < k; ++kk) {
            volatile float prod = a[i * k + kk] * b[kk * n + j];
            acc = acc + prod;
          }
          row[j] = acc;
        }
        std::copy(row.begin(), row.end(), c.begin() + i * ldc);
      }
      pt_execute(lx.data(), pt_mm(A, B, C, m, n, k, k, n, ldc, 1, isa::DType::F16));
      for (size_t j = 0; j < c.size(); ++j) {
        uint32_t got, want;
        std::memcpy(&got, lx.data() + C + j * 4, 4);
        std::memcpy(&want, &c[j], 4);
        ASSERT_EQ(got, want) << "C element " << j;
      }
    }
  ASSERT_TRUE(pt_select_matmul_kernel(pt_matmul_kernels().front()));
}

// Functional, 16-bit inputs: every one of the 65,536 bit patterns of fp16 and of bf16 (zeros,
// subnormals, infinities, NaNs) reaches C as the value isa::load_element decodes, as an A
// element and as a B element (plain and TRANS_B), however the host converts the operands (a
// table, or its vector conversion where that agrees). Each C element holds exactly one
// pattern: the pattern's row (A) or column (B) is zero but for it, the other operand all
// ones, and the patterns sit at every position of a 16-element row (every vector lane). A NaN
// only as a NaN (its payload is the compiler's choice of a multiply's operand order), and -0
// as 0 (the sum starts at +0).
TEST(PtFunctional, EverySixteenBitPatternReachesCAsLoadElementDecodes) {
  constexpr int64_t m = 16, n = 16, k = 16;  // 16 patterns per pt.mm, pattern r at kk = r
  const int64_t A = 0, B = 1024, C = 2048;
  const uint16_t one_f16 = 0x3c00, one_bf16 = 0x3f80;
  int checked = 0;
  for (isa::DType dt : {isa::DType::F16, isa::DType::BF16})
    for (int64_t where : {0, 1, 2})  // the patterns in A; in B plain; in B transposed
      for (uint32_t base = 0; base < 65536; base += 16) {
        std::vector<uint8_t> lx(1 << 13, 0);
        const uint16_t one = dt == isa::DType::F16 ? one_f16 : one_bf16;
        auto put = [&](int64_t at, uint16_t v) { std::memcpy(lx.data() + at, &v, 2); };
        for (int64_t r = 0; r < 16; ++r)
          for (int64_t t = 0; t < 16; ++t) {
            // A(r, t) and B's element (r, t) of its storage: the pattern on the diagonal
            // (zeros elsewhere) for the operand under test, ones for the other.
            const auto pattern = static_cast<uint16_t>(t == r ? base + r : 0);
            put(A + (r * k + t) * 2, where == 0 ? pattern : one);
            put(B + (r * 16 + t) * 2, where == 0 ? one : pattern);
          }
        const int64_t flags = where == 2 ? 2 : 0;
        pt_execute(lx.data(), pt_mm(A, B, C, m, n, k, k, 16, n, flags, dt));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            // The one pattern of C(i, j): row i's in A, column j's in B (stored row j when
            // transposed, its kk = j either way).
            const int64_t r = where == 0 ? i : j;
            const auto pattern = static_cast<uint16_t>(base + r);
            uint8_t bytes[2];
            std::memcpy(bytes, &pattern, 2);
            const float want = static_cast<float>(isa::load_element(bytes, dt));
            float got;
            std::memcpy(&got, lx.data() + C + (i * n + j) * 4, 4);
            if (std::isnan(want)) {
              ASSERT_TRUE(std::isnan(got)) << isa::dtype_name(dt) << " pattern " << pattern;
            } else {
              uint32_t got_bits, want_bits;
              const float want_sum = 0.0f + want;  // -0 becomes +0, as in the sum
              std::memcpy(&got_bits, &got, 4);
              std::memcpy(&want_bits, &want_sum, 4);
              ASSERT_EQ(got_bits, want_bits)
                  << isa::dtype_name(dt) << " where=" << where << " pattern " << pattern << " C("
                  << i << "," << j << ")";
            }
            ++checked;
          }
      }
  EXPECT_EQ(checked, 2 * 3 * 4096 * m * n);
}

// fp8 (e4m3): every product is exact in fp32 and C(i,j) is the fp32 sum over kk ascending, as
// for fp16; int4: exact integer products summed in integer, added to C. Operands are read at
// element e = row * ld + col: for i4 byte floor(e/2), nibble e%2, so an odd k and odd n leave
// rows ending mid-byte.
TEST(PtFunctional, Fp8AndInt4MatchAReferenceLoop) {
  const int64_t m = 3, n = 5, k = 7, lda = 8, ldb = 8, ldc = 6;
  const int64_t A = 0, B = 1024, C = 4096;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-20.0, 20.0);
  std::uniform_int_distribution<int> q(-8, 7);
  for (isa::DType dt : {isa::DType::F8E4M3, isa::DType::I4}) {
    for (int64_t flags : {0, 3}) {  // plain; TRANS_B with accumulate
      std::vector<uint8_t> lx(1 << 13, 0);
      std::vector<double> a(m * k), b(k * n), c0(m * n, 0.0);
      auto value = [&] { return dt == isa::DType::I4 ? q(rng) : u(rng); };
      for (int64_t i = 0; i < m; ++i)
        for (int64_t kk = 0; kk < k; ++kk) {
          isa::store_element(lx.data() + A, dt, i * lda + kk, value());
          a[i * k + kk] = isa::load_element(lx.data() + A, dt, i * lda + kk);
        }
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t j = 0; j < n; ++j) {
          const int64_t e = (flags & 2) ? j * ldb + kk : kk * ldb + j;
          isa::store_element(lx.data() + B, dt, e, value());
          b[kk * n + j] = isa::load_element(lx.data() + B, dt, e);
        }
      if (flags & 1)
        for (int64_t e = 0; e < m * n; ++e) {
          c0[e] = std::round(u(rng));
          isa::store_element(lx.data() + C + ((e / n) * ldc + e % n) * 4, isa::DType::F32, c0[e]);
        }
      auto in = pt_mm(A, B, C, m, n, k, lda, ldb, ldc, flags, dt);
      pt_execute(lx.data(), in);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float want;
          if (dt == isa::DType::I4) {
            int64_t sum = 0;
            for (int64_t kk = 0; kk < k; ++kk)
              sum += static_cast<int64_t>(a[i * k + kk]) * static_cast<int64_t>(b[kk * n + j]);
            want = static_cast<float>(c0[i * n + j]) + static_cast<float>(sum);
          } else {
            volatile float acc = static_cast<float>(c0[i * n + j]);
            for (int64_t kk = 0; kk < k; ++kk) {
              volatile float prod =
                  static_cast<float>(a[i * k + kk]) * static_cast<float>(b[kk * n + j]);
              acc = acc + prod;
            }
            want = acc;
          }
          float got;
          std::memcpy(&got, lx.data() + C + (i * ldc + j) * 4, 4);
          ASSERT_EQ(got, want) << isa::dtype_name(dt) << " flags=" << flags << " C(" << i << ","
                               << j << ")";
        }
    }
  }
  // The operands' LX bytes: i4 A covers elements 0 .. (m-1)*lda + k-1 = 22 -> bytes [0, 12)
  // (i8: [0, 23)); B [k, n] with ldb: elements 0 .. 6*8 + 4 = 52 -> [1024, 1024 + 27).
  auto in = pt_mm(A, B, C, m, n, k, lda, ldb, ldc, 0, isa::DType::I4);
  auto r = pt_lx_ranges(in);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].lo, A);
  EXPECT_EQ(r[0].hi, A + 12);
  EXPECT_EQ(r[1].lo, B);
  EXPECT_EQ(r[1].hi, B + 27);
  EXPECT_EQ(r[2].hi, C + ((m - 1) * ldc + n) * 4);
  in.a[static_cast<size_t>(isa::op_info(in.op).index_of("dt"))] =
      static_cast<int64_t>(isa::DType::I8);
  EXPECT_EQ(pt_lx_ranges(in)[0].hi, A + 23);
}

}  // namespace
}  // namespace spyre::sim
