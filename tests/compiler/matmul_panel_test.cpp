// Matmul panels (divide.h): A (B) tiles of every K step kept in LX across the n (m) tiles of a
// block. Each case compiles a GEMM whose LX is made small enough (arch override) that the
// cost model keeps a panel, checks that it did, runs it on the simulator and compares with a
// plain C++ reference (fp16 inputs, fp32 accumulation, fp16 output). Tolerance as e2e_test:
// max |error| <= 1e-2 * RMS(reference).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../../tools/bench/mm_ir.h"
#include "compiler_test_util.h"
#include "spyre/compiler/compile.h"
#include "spyre/error.h"
#include "spyre/sim/simulate.h"

namespace spyre::compiler {
namespace {

float round_f16(float v) { return isa::f16_to_f32(isa::f32_to_f16(v)); }

// C = A @ B (B row-major [K, N]) or C = A @ W^T (W [N, K]), fp16.
nlohmann::json gemm_ir(int64_t m, int64_t n, int64_t k, bool b_transposed) {
  return bench::mm_ir(m, n, k, "matmul_panel_test.cpp:1", b_transposed);
}

// Compiles and runs the GEMM on `tiny` with `lx_bytes` of LX and the forced split; returns
// the kernel's report after checking the output against the reference.
// `more`: further compiler options (key, value).
nlohmann::json run_gemm(int64_t m, int64_t n, int64_t k, bool bt, const std::string& split,
                        int64_t lx_bytes,
                        const std::vector<std::pair<std::string, std::string>>& more = {}) {
  const auto cfg = arch::load_arch("tiny", {"lx.size_bytes=" + std::to_string(lx_bytes)});
  CompileOptions opts;
  opts.set("matmul_split", split);
  for (const auto& [key, value] : more) opts.set(key, value);
  CompileResult c = compile(gemm_ir(m, n, k, bt), cfg, opts, "gemm.json");
  sim::DeviceMemory mem(c.program.dram_bytes, 0);
  std::mt19937 rng(99);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
  for (const auto& in : c.inputs) {
    std::vector<float>& t = in.name == "arg0_1" ? a : b;
    for (size_t i = 0; i < t.size(); ++i) {
      t[i] = round_f16(normal(rng));
      isa::store_element(mem.data() + test::addr_of(in, static_cast<int64_t>(i)), in.dtype, t[i]);
    }
  }
  sim::simulate(c.program, cfg, mem);
  const auto& ob = c.outputs.at(0);
  double sq = 0, worst = 0;
  std::vector<float> want(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t q = 0; q < k; ++q)
        acc +=
            a[static_cast<size_t>(i * k + q)] * b[static_cast<size_t>(bt ? j * k + q : q * n + j)];
      want[static_cast<size_t>(i * n + j)] = round_f16(acc);
      sq += static_cast<double>(acc) * acc;
    }
  const double rms = std::sqrt(sq / static_cast<double>(m * n));
  for (int64_t i = 0; i < m * n; ++i) {
    const float got =
        static_cast<float>(isa::load_element(mem.data() + test::addr_of(ob, i), ob.dtype));
    worst = std::max(worst, std::fabs(static_cast<double>(got - want[static_cast<size_t>(i)])));
  }
  EXPECT_LE(worst, 1e-2 * rms) << split << " " << m << "x" << n << "x" << k;
  return c.report["kernels"][0];
}

// A panel has one LX slot per K step of the block.
void expect_panel(const nlohmann::json& kr, const char* which, int64_t kb) {
  EXPECT_TRUE(kr["split"]["panel"][which].get<bool>()) << kr["split"].dump();
  const int64_t tk = kr["tiles"]["tk"].get<int64_t>();
  EXPECT_LT(tk, kb) << kr["tiles"].dump();  // several K steps: a panel, not one tile
  EXPECT_EQ(kr["tiles"][std::string(which) + "_slots"].get<int64_t>(), (kb + tk - 1) / tk)
      << kr["tiles"].dump();
}

TEST(MatmulPanel, BPanelOverMTilesMatchesReference) {
  // n split: A is multicast, each core's B block stays in LX as a panel while A streams.
  for (bool bt : {false, true})
    expect_panel(run_gemm(256, 512, 1024, bt, "1,1,4,1", 448 * 1024), "b", 1024);
}

TEST(MatmulPanel, APanelOverNTilesMatchesReference) {
  // m split: B is multicast, each core's A rows (96 x 384) stay in LX as a panel while B
  // streams over the block's n tiles. The tiles are forced (the kernel prediction takes
  // whole-K tiles of 48 rows for this shape).
  expect_panel(
      run_gemm(384, 384, 384, false, "1,4,1,1", 512 * 1024, {{"matmul_tiles", "96,128,192"}}), "a",
      384);
}

TEST(MatmulPanel, LeadGroupMatchesReference) {
  // A B panel whose first m tiles are walked K-outer (divide.h `lead`): the panel's later K
  // slices are loaded in pieces; lead + 1 accumulators, three A slots for the multicast group.
  // The tiles are forced (the cost model takes whole-K tiles for this shape).
  for (bool bt : {false, true}) {
    const nlohmann::json kr = run_gemm(512, 256, 1024, bt, "1,1,4,1", 1024 * 1024,
                                       {{"matmul_tiles", "128,64,256"}, {"matmul_lead", "4"}});
    EXPECT_TRUE(kr["split"]["panel"]["b"].get<bool>()) << kr["split"].dump();
    EXPECT_GT(kr["split"]["lead"].get<int64_t>(), 1) << kr["split"].dump();
    EXPECT_EQ(kr["split"]["slots"].get<int64_t>(), 3) << kr["split"].dump();
    EXPECT_LT(kr["tiles"]["tk"].get<int64_t>(), 1024) << kr["tiles"].dump();  // B in pieces
  }
}

TEST(MatmulPanel, ForcedTilesAndLongLeadMatchReference) {
  // `compiler.matmul_tiles` / `compiler.matmul_lead` force the tiles and the lead group: two K
  // steps (the shape of the 2048 GEMM's choice), leads that do not divide the m tiles, and a
  // lead covering every m tile (no walk after the lead group).
  for (const char* lead : {"3", "5", "8"}) {
    const nlohmann::json kr = run_gemm(256, 256, 512, false, "1,1,4,1", 1024 * 1024,
                                       {{"matmul_tiles", "32,64,256"}, {"matmul_lead", lead}});
    EXPECT_TRUE(kr["split"]["panel"]["b"].get<bool>()) << kr["split"].dump();
    EXPECT_EQ(kr["split"]["lead"].get<int64_t>(), std::stoll(lead)) << kr["split"].dump();
    EXPECT_EQ(kr["tiles"]["tm"].get<int64_t>(), 32) << kr["tiles"].dump();
    EXPECT_EQ(kr["tiles"]["tn"].get<int64_t>(), 64) << kr["tiles"].dump();
    EXPECT_EQ(kr["tiles"]["tk"].get<int64_t>(), 256) << kr["tiles"].dump();
  }
  // A long lead with a K split: every lead tile's partial sums go along the ring.red chain.
  const nlohmann::json kk = run_gemm(256, 256, 1024, false, "1,1,2,2", 1024 * 1024,
                                     {{"matmul_tiles", "32,128,256"}, {"matmul_lead", "6"}});
  EXPECT_EQ(kk["split"]["lead"].get<int64_t>(), 6) << kk["split"].dump();
  EXPECT_EQ(kk["split"]["split"]["k"].get<int64_t>(), 2) << kk["split"].dump();
  // Forced tiles off the PT's row and K alignment (ragged edge tiles in M and K).
  const nlohmann::json kr =
      run_gemm(256, 256, 512, true, "1,1,4,1", 1024 * 1024, {{"matmul_tiles", "24,64,96"}});
  EXPECT_EQ(kr["tiles"]["tm"].get<int64_t>(), 24) << kr["tiles"].dump();
  EXPECT_EQ(kr["tiles"]["tk"].get<int64_t>(), 96) << kr["tiles"].dump();
}

TEST(MatmulPanel, ForcedTilesThatDoNotFitNameTheOption) {
  const auto cfg = arch::load_arch("tiny", {"lx.size_bytes=" + std::to_string(256 * 1024)});
  CompileOptions opts;
  opts.set("matmul_split", "1,1,1,1");
  opts.set("matmul_tiles", "256,256,512");
  try {
    compile(gemm_ir(256, 256, 512, false), cfg, opts, "gemm.json");
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compiler.matmul_tiles"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("do not fit"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gemm.json: "), std::string::npos) << e.what();
  }
  for (const char* bad : {"", "1,2", "0,64,64", "a,b,c", "64,64,64,64"}) {
    try {
      opts.set("matmul_tiles", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("compiler.matmul_tiles"), std::string::npos);
    }
  }
  for (const char* bad : {"0", "-1", "x", "2,3"}) {
    try {
      opts.set("matmul_lead", bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("compiler.matmul_lead"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace spyre::compiler
