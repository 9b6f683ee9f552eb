// End to end: compile each golden capture, fill its inputs with seeded random fp16 values,
// run the program on the simulator and compare with a plain C++ reference of the same math.
// Tolerance: max |error| <= 1e-2 * RMS(reference output) (fp16 outputs).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <map>
#include <random>

#include "../../tools/bench/mm_ir.h"
#include "compiler_test_util.h"
#include "spyre/compiler/compile.h"
#include "spyre/error.h"
#include "spyre/sim/simulate.h"

namespace spyre::compiler {
namespace {

using Tensor = std::vector<float>;  // row-major contents of a binding

float round_f16(float v) { return isa::f16_to_f32(isa::f32_to_f16(v)); }

int64_t numel(const TensorBinding& b) {
  int64_t n = 1;
  for (auto s : b.size) n *= s;
  return n;
}

using test::addr_of;

void write(sim::DeviceMemory& mem, const TensorBinding& b, const Tensor& t) {
  for (int64_t i = 0; i < numel(b); ++i)
    isa::store_element(mem.data() + addr_of(b, i), b.dtype, t[static_cast<size_t>(i)]);
}

Tensor read(const sim::DeviceMemory& mem, const TensorBinding& b) {
  Tensor t(static_cast<size_t>(numel(b)));
  for (int64_t i = 0; i < numel(b); ++i)
    t[static_cast<size_t>(i)] =
        static_cast<float>(isa::load_element(mem.data() + addr_of(b, i), b.dtype));
  return t;
}

struct SimRun {
  std::map<std::string, Tensor> in;
  Tensor out;
  CompileResult compiled;
  sim::SimResult sim;
};

// Inputs: N(0,1) * scale(name) rounded to fp16, seeded.
SimRun run_ir(const nlohmann::json& ir, const std::string& golden, const std::string& arch_fusion,
              const std::map<std::string, std::pair<float, float>>& mean_scale = {},
              const std::string& matmul_split = "") {
  // "spyre" or "spyre/unfused"
  const auto slash = arch_fusion.find('/');
  const std::string arch = arch_fusion.substr(0, slash);
  CompileOptions opts;
  opts.fusion = slash == std::string::npos;
  if (!matmul_split.empty()) opts.set("matmul_split", matmul_split);
  auto cfg = arch::load_arch(arch);
  SimRun r;
  r.compiled = compile(ir, cfg, opts, golden + ".json");
  sim::DeviceMemory mem(r.compiled.program.dram_bytes, 0);
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const auto& b : r.compiled.inputs) {
    auto [mean, scale] =
        mean_scale.count(b.name) ? mean_scale.at(b.name) : std::make_pair(0.0f, 1.0f);
    Tensor t(static_cast<size_t>(numel(b)));
    for (auto& v : t) v = round_f16(mean + scale * normal(rng));
    write(mem, b, t);
    r.in[b.name] = t;
  }
  r.sim = sim::simulate(r.compiled.program, cfg, mem);
  r.out = read(mem, r.compiled.outputs.at(0));
  std::cout << "[ e2e      ] " << golden << " on " << arch_fusion << ": predicted "
            << r.compiled.report["totals"]["predicted_cycles"] << " cycles, simulated "
            << r.sim.cycles << " cycles\n";
  for (const auto& k : r.sim.kernels)
    std::cout << "[ e2e      ]   " << k.name << ": simulated " << k.cycles() << "\n";
  return r;
}

SimRun run_golden(const std::string& golden, const std::string& arch_fusion,
                  const std::map<std::string, std::pair<float, float>>& mean_scale = {},
                  const std::string& matmul_split = "") {
  return run_ir(test::load_golden(golden), golden, arch_fusion, mean_scale, matmul_split);
}

void expect_close(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.size(), want.size());
  double ss = 0, max_err = 0;
  size_t worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    ss += static_cast<double>(want[i]) * want[i];
    double e = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(e <= max_err)) max_err = e, worst = i;  // NaN counts as worst
  }
  const double rms = std::sqrt(ss / static_cast<double>(want.size()));
  EXPECT_LE(max_err, 1e-2 * rms) << "worst element " << worst << ": got " << got[worst] << ", want "
                                 << want[worst] << " (rms " << rms << ")";
}

// C[m,n] = A[m,k] @ B[k,n], fp32 accumulation of fp16 values.
Tensor matmul(const Tensor& a, const Tensor& b, int64_t m, int64_t k, int64_t n, bool b_is_nk) {
  Tensor c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        acc += a[static_cast<size_t>(i * k + kk)] *
               b[static_cast<size_t>(b_is_nk ? j * k + kk : kk * n + j)];
      c[static_cast<size_t>(i * n + j)] = acc;
    }
  return c;
}

class E2e : public ::testing::TestWithParam<const char*> {};

TEST_P(E2e, MatmulMatchesReference) {
  SimRun r = run_golden("matmul", GetParam());
  Tensor want = matmul(r.in["arg0_1"], r.in["arg1_1"], 128, 256, 192, false);
  for (auto& v : want) v = round_f16(v);
  expect_close(r.out, want);
}

TEST_P(E2e, EltwiseChainMatchesReference) {
  SimRun r = run_golden("eltwise_chain", GetParam());
  const Tensor &x = r.in["arg0_1"], &y = r.in["arg1_1"];
  Tensor want(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    float v = x[i] * 2.0f + y[i % 512];
    want[i] = round_f16(std::exp(std::max(v, 0.0f)) - x[i]);
  }
  expect_close(r.out, want);
}

void check_mlp_block(const std::string& arch_fusion, const std::string& split) {
  // arg0_1/arg1_1: LayerNorm weight/bias; arg2_1: x; arg3_1/arg4_1: fc1; arg5_1/arg6_1: fc2.
  SimRun r = run_golden("mlp_block", arch_fusion,
                        {{"arg0_1", {1.0f, 0.1f}},
                         {"arg1_1", {0.0f, 0.1f}},
                         {"arg3_1", {0.0f, 0.0625f}},
                         {"arg4_1", {0.0f, 0.0625f}},
                         {"arg5_1", {0.0f, 0.03125f}},
                         {"arg6_1", {0.0f, 0.03125f}}},
                        split);
  const int64_t M = 64, H = 256, F = 1024;
  const Tensor& x = r.in["arg2_1"];
  Tensor h(static_cast<size_t>(M * H));
  for (int64_t i = 0; i < M; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < H; ++j) mean += x[static_cast<size_t>(i * H + j)];
    mean /= H;
    for (int64_t j = 0; j < H; ++j) var += std::pow(x[static_cast<size_t>(i * H + j)] - mean, 2);
    var /= H;
    for (int64_t j = 0; j < H; ++j) {
      double v = (x[static_cast<size_t>(i * H + j)] - mean) / std::sqrt(var + 1e-5);
      h[static_cast<size_t>(i * H + j)] = round_f16(static_cast<float>(
          v * r.in["arg0_1"][static_cast<size_t>(j)] + r.in["arg1_1"][static_cast<size_t>(j)]));
    }
  }
  Tensor f = matmul(h, r.in["arg3_1"], M, H, F, true);
  for (int64_t i = 0; i < M * F; ++i) {
    float v = round_f16(f[static_cast<size_t>(i)] + r.in["arg4_1"][static_cast<size_t>(i % F)]);
    f[static_cast<size_t>(i)] = round_f16(0.5f * v * (1.0f + std::erf(v * 0.70710678f)));
  }
  Tensor o = matmul(f, r.in["arg5_1"], M, F, H, true);
  Tensor want(static_cast<size_t>(M * H));
  for (int64_t i = 0; i < M * H; ++i) {
    float v = round_f16(o[static_cast<size_t>(i)] + r.in["arg6_1"][static_cast<size_t>(i % H)]);
    want[static_cast<size_t>(i)] = round_f16(x[static_cast<size_t>(i)] + v);
  }
  expect_close(r.out, want);
}

TEST_P(E2e, MlpBlockMatchesReference) { check_mlp_block(GetParam(), ""); }

// fc1/fc2 with their fused epilogues (bias, GELU, residual) under a K split (partial sums on
// the reduce ring, epilogue on the chain's last core) and a split that multicasts A and B.
TEST_P(E2e, MlpBlockWithKSplitMatchesReference) { check_mlp_block(GetParam(), "1,1,2,2"); }
TEST_P(E2e, MlpBlockWithMulticastSplitMatchesReference) { check_mlp_block(GetParam(), "1,2,2,1"); }

// C = A @ B (B row-major [K, N]) and C = A @ W^T (W a linear weight [N, K]), fp16.
nlohmann::json gemm_ir(int64_t m, int64_t n, int64_t k, bool b_transposed) {
  return bench::mm_ir(m, n, k, "model.py:1", b_transposed);
}

void check_gemm(const std::string& arch, int64_t m, int64_t n, int64_t k, bool bt,
                const std::string& split, bool want_kred, bool want_mcast) {
  SimRun r = run_ir(gemm_ir(m, n, k, bt), "gemm", arch, {}, split);
  Tensor want = matmul(r.in["arg0_1"], r.in["arg1_1"], m, k, n, bt);
  for (auto& v : want) v = round_f16(v);
  expect_close(r.out, want);
  const auto& sp = r.compiled.report["kernels"][0]["split"];
  EXPECT_EQ(!sp["k_reduce"]["chains"].empty(), want_kred) << sp.dump();
  EXPECT_EQ(
      sp["multicast"]["a"]["enabled"].get<bool>() || sp["multicast"]["b"]["enabled"].get<bool>(),
      want_mcast)
      << sp.dump();
}

// A bare GEMM has nothing to fuse: these run on each preset once, not also "unfused".
class E2eGemm : public ::testing::TestWithParam<const char*> {};

TEST_P(E2eGemm, GemmKSplitMatchesReference) {
  check_gemm(GetParam(), 64, 128, 512, false, "1,1,1,4", true, false);
  check_gemm(GetParam(), 48, 64, 1000, true, "1,1,1,4", true, false);  // ragged K chunks
}

TEST_P(E2eGemm, GemmMulticastMatchesReference) {
  check_gemm(GetParam(), 64, 256, 256, false, "1,2,2,1", false, true);
  check_gemm(GetParam(), 128, 256, 512, true, "1,2,2,1", false, true);
}

TEST_P(E2eGemm, GemmMulticastAndKSplitMatchesReference) {
  check_gemm(GetParam(), 64, 256, 512, false, "1,1,2,2", true, true);
}

TEST_P(E2eGemm, GemmAutoSplitMatchesReference) {
  SimRun r = run_ir(gemm_ir(96, 320, 768, true), "gemm", GetParam());
  Tensor want = matmul(r.in["arg0_1"], r.in["arg1_1"], 96, 768, 320, true);
  for (auto& v : want) v = round_f16(v);
  expect_close(r.out, want);
}

TEST(MatmulSplitOption, BadValuesNameTheKey) {
  CompileOptions o;
  for (const char* bad : {"1,2", "1,2,3", "1,2,3,4,5", "1,0,1,1", "a,1,1,1", "1,1,1,", ""}) {
    try {
      o.set("matmul_split", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("compiler.matmul_split"), std::string::npos) << e.what();
    }
  }
  o.set("matmul_split", "1,4,8,1");
  EXPECT_EQ(o.matmul_split, (std::array<int64_t, 4>{1, 4, 8, 1}));
}

// The fusion pass's own-group trials run on compiler.threads threads (fuse.cpp), sharing the
// compile's memos under a lock: the one-layer GPT-2 block (matmuls, softmax, LayerNorm, 20+
// groups) compiles to the same program and report on one thread and on two. (On a host with
// one hardware thread both run on one.)
TEST(CompileThreads, OneThreadAndTwoGiveTheSameProgramAndReport) {
  const nlohmann::json ir = test::load_golden("models/gpt2");
  const auto cfg = arch::load_arch("spyre");
  CompileOptions one, two;
  one.set("threads", "1");
  two.set("threads", "2");
  const CompileResult a = compile(ir, cfg, one, "gpt2.json"),
                      b = compile(ir, cfg, two, "gpt2.json");
  EXPECT_TRUE(a.program == b.program);
  EXPECT_EQ(a.report.dump(), b.report.dump());
  EXPECT_GT(a.report["fusion"].size(), 20u);
}

TEST(CompileOptionKeys, EveryListedKeyIsAcceptedAndOthersAreNot) {
  // keys() feeds the sweep's "did you mean" and the unknown-key message: each listed key must
  // be one set() knows (a bad value is then a complaint about the value, not the key).
  CompileOptions o;
  for (const auto& key : CompileOptions::keys()) {
    try {
      o.set(key, "not a value");
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find("unknown compiler option"), std::string::npos)
          << key << ": " << e.what();
    }
  }
  try {
    o.set("fusoin", "on");
    ADD_FAILURE() << "accepted an unknown key";
  } catch (const Error& e) {
    for (const auto& key : CompileOptions::keys())
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << key;
  }
}

TEST(MatmulSplitOption, MoreCoresThanTheChipIsAnError) {
  CompileOptions o;
  o.set("matmul_split", "1,4,4,4");
  EXPECT_THROW(compile(gemm_ir(64, 256, 512, false), arch::load_arch("tiny"), o), Error);
}

TEST_P(E2e, SoftmaxThenPointwiseChainMatchesReference) {
  // Reductions with their consumers (max, sum of exp, normalise) and a pointwise chain after.
  const int64_t R = 64, C = 256;
  SimRun r = run_ir(test::softmax_ir(R, C, true), "softmax", GetParam());
  const Tensor& x = r.in["arg0_1"];
  Tensor want(x.size());
  for (int64_t i = 0; i < R; ++i) {
    float m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < C; ++j) m = std::max(m, x[static_cast<size_t>(i * C + j)]);
    for (int64_t j = 0; j < C; ++j) sum += std::exp(x[static_cast<size_t>(i * C + j)] - m);
    for (int64_t j = 0; j < C; ++j) {
      const auto e = static_cast<size_t>(i * C + j);
      const float y = round_f16(std::exp(x[e] - m) / sum);
      want[e] = round_f16(std::max(y, 0.0f) * 2.0f + x[e]);
    }
  }
  expect_close(r.out, want);
  if (std::string(GetParam()).find('/') == std::string::npos) {
    EXPECT_EQ(r.compiled.report["kernels"].size(), 1u) << r.compiled.report["fusion"].dump(1);
  }
}

INSTANTIATE_TEST_SUITE_P(Arch, E2eGemm, ::testing::Values("tiny", "spyre"),
                         [](const auto& info) { return std::string(info.param); });

INSTANTIATE_TEST_SUITE_P(Arch, E2e,
                         ::testing::Values("tiny", "spyre", "tiny/unfused", "spyre/unfused"),
                         [](const auto& info) {
                           std::string s = info.param;
                           if (s.find('/') != std::string::npos)
                             s = s.substr(0, s.find('/')) + "_unfused";
                           return s;
                         });

}  // namespace
}  // namespace spyre::compiler
