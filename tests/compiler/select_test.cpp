// topk and median (fallback kernels lowered on the SFP, compiler/lower/select.cpp) on inputs
// chosen for torch's corner cases: ties, NaN, +-inf, rows of -inf, signed zeros. Each golden
// capture is compiled for "tiny", simulated in functional mode and compared bit for bit (NaN
// with NaN, the sign of zero) with the reference interpreter, which sorts each row
// (ir_interp_select.h). A few facts are also checked by hand, independent of both.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "compiler_test_util.h"
#include "ir_interp.h"
#include "spyre/compiler/compile.h"
#include "spyre/error.h"
#include "spyre/sim/simulate.h"

namespace spyre::compiler {
namespace {

using nlohmann::json;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Outcome {
  CompileResult r;
  std::vector<std::vector<double>> got, want;  // per graph output, row-major
};

// Compiles `ir`, writes `x` (row-major over the single input) to the device and the reference,
// simulates and reads every output back from both.
Outcome run(const json& ir, const std::vector<double>& x, const arch::ArchConfig& cfg) {
  Outcome o;
  o.r = compile(ir, cfg, {}, "select.json");
  test::IrInterp ref(ir);
  sim::DeviceMemory mem(o.r.program.dram_bytes, 0);
  const TensorBinding& in = o.r.inputs.at(0);
  const json view = {{"buffer", ir["inputs"][0]}, {"size", in.size}, {"stride", in.stride}};
  ref.write_view(view, x);
  const std::vector<double> rounded = ref.read_view(view);
  for (size_t e = 0; e < rounded.size(); ++e)
    isa::store_element(mem.data() + test::addr_of(in, static_cast<int64_t>(e)), in.dtype,
                       rounded[e]);
  ref.run();
  sim::simulate(o.r.program, cfg, mem);
  for (size_t i = 0; i < o.r.outputs.size(); ++i) {
    const TensorBinding& b = o.r.outputs[i];
    o.want.push_back(ref.read_view(ir["outputs"][i]));
    std::vector<double> g(o.want.back().size());
    for (size_t e = 0; e < g.size(); ++e)
      g[e] = isa::load_element(mem.data() + test::addr_of(b, static_cast<int64_t>(e)), b.dtype);
    o.got.push_back(g);
  }
  return o;
}

bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

void expect_exact(const Outcome& o) {
  ASSERT_EQ(o.got.size(), o.want.size());
  for (size_t i = 0; i < o.got.size(); ++i)
    for (size_t e = 0; e < o.got[i].size(); ++e)
      ASSERT_TRUE(same(o.got[i][e], o.want[i][e])) << "output " << i << " element " << e << ": got "
                                                   << o.got[i][e] << ", want " << o.want[i][e];
}

// rows x n values: row 0 all equal, row 1 two NaNs, row 2 all -inf, row 3 signed zeros over
// negatives, row 4 +inf and -inf among finite values, the rest small integers (many ties) and
// a few NaNs.
std::vector<double> corner_rows(int64_t rows, int64_t n) {
  std::mt19937 rng(7);
  std::vector<double> x(static_cast<size_t>(rows * n));
  auto at = [&](int64_t r, int64_t c) -> double& { return x[static_cast<size_t>(r * n + c)]; };
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double v = static_cast<double>(static_cast<int>(rng() % 9) - 4);
      if (r == 0) v = 1.0;
      if (r == 1) v = c == 5 || c == 9 ? kNan : v;
      if (r == 2) v = -kInf;
      if (r == 3) v = c % 3 == 0 ? -0.0 : c % 3 == 1 ? 0.0 : -1.0 - static_cast<double>(c);
      if (r == 4) v = c == 2 ? kInf : c == 7 ? -kInf : v;
      if (r > 4 && rng() % 23 == 0) v = kNan;
      at(r, c) = v;
    }
  return x;
}

TEST(Select, TopkLargestMatchesTorchOrderOnTiesNanInfAndZeros) {
  const json ir = test::load_golden("ops/topk");  // [16, 64] fp16, k=4, dim -1
  const Outcome o = run(ir, corner_rows(16, 64), arch::load_arch("tiny"));
  expect_exact(o);
  const auto& v = o.got[0];
  const auto& i = o.got[1];
  // By hand: equal values by ascending index; NaN first; a row of -inf still gives 0..3.
  EXPECT_EQ((std::vector<double>{i[0], i[1], i[2], i[3]}), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_TRUE(std::isnan(v[4]) && std::isnan(v[5]) && i[4] == 5 && i[5] == 9);
  EXPECT_EQ((std::vector<double>{i[8], i[9], i[10], i[11]}), (std::vector<double>{0, 1, 2, 3}));
  EXPECT_TRUE(v[12] == 0 && std::signbit(v[12]) && i[12] == 0);  // -0.0 at column 0 first
  EXPECT_TRUE(v[13] == 0 && !std::signbit(v[13]) && i[13] == 1);
  EXPECT_TRUE(v[16] == kInf && i[16] == 2);
}

TEST(Select, TopkSmallestAlongAStridedDimPutsNanLast) {
  const json ir = test::load_golden("ops/topk_smallest");  // [16, 64] fp16, k=3, dim 0
  std::vector<double> x(16 * 64, 3.0);
  for (int64_t c = 0; c < 64; ++c)
    for (int64_t r = 0; r < 16; ++r) {
      double v = static_cast<double>((r * 7 + c) % 5);
      if (c == 0) v = r < 14 ? kNan : 1.0;  // two numbers, then NaN (smallest: NaN last)
      if (c == 1) v = -kInf;                // ties of -inf: rows 0, 1, 2
      x[static_cast<size_t>(r * 64 + c)] = v;
    }
  const Outcome o = run(ir, x, arch::load_arch("tiny"));
  expect_exact(o);
  // Output [3, 64]: column 0 is 1, 1, NaN at rows 14, 15, 0.
  EXPECT_EQ(o.got[0][0], 1.0);
  EXPECT_EQ(o.got[0][64], 1.0);
  EXPECT_TRUE(std::isnan(o.got[0][128]));
  EXPECT_EQ((std::vector<double>{o.got[1][0], o.got[1][64], o.got[1][128]}),
            (std::vector<double>{14, 15, 0}));
  EXPECT_EQ((std::vector<double>{o.got[1][1], o.got[1][65], o.got[1][129]}),
            (std::vector<double>{0, 1, 2}));
}

TEST(Select, MedianIsTheLowerMedianAndNanWhereARowHasOne) {
  const json ir = test::load_golden("ops/median");  // [16, 63] fp16, values only
  const Outcome o = run(ir, corner_rows(16, 63), arch::load_arch("tiny"));
  expect_exact(o);
  EXPECT_EQ(o.got[0][0], 1.0);
  EXPECT_TRUE(std::isnan(o.got[0][1]));
  EXPECT_EQ(o.got[0][2], -kInf);

  const json even = test::load_golden("ops/median_keepdim");  // [10, 24] bf16, dim 0, indices
  std::vector<double> x(10 * 24);
  for (int64_t r = 0; r < 10; ++r)
    for (int64_t c = 0; c < 24; ++c) x[static_cast<size_t>(r * 24 + c)] = static_cast<double>(r);
  x[3 * 24 + 1] = kNan;  // column 1: NaN at its first NaN, row 3
  x[7 * 24 + 1] = kNan;
  for (int64_t r = 0; r < 10; ++r) x[static_cast<size_t>(r * 24 + 2)] = 2.0;  // all tied
  const Outcome e = run(even, x, arch::load_arch("tiny"));
  expect_exact(e);
  EXPECT_EQ(e.got[0][0], 4.0);  // 0..9: the lower of the two middle values
  EXPECT_EQ(e.got[1][0], 4.0);
  EXPECT_TRUE(std::isnan(e.got[0][1]));
  EXPECT_EQ(e.got[1][1], 3.0);
  EXPECT_EQ(e.got[1][2], 4.0);  // ties: rank 4 in ascending index order
}

// sort (stable, descending): ties keep ascending index, NaN first -- exactly torch's stable
// order; kthvalue (dim 0, fp32): the k-th smallest, NaN largest; median of all elements.
TEST(Select, StableSortKthvalueAndMedianOfAllMatchTheReference) {
  const auto cfg = arch::load_arch("tiny");
  const Outcome s = run(test::load_golden("ops/sort"), corner_rows(16, 32), cfg);
  expect_exact(s);
  EXPECT_TRUE(std::isnan(s.got[0][32]) && s.got[1][32] == 5 && s.got[1][33] == 9);
  EXPECT_EQ(s.got[1][0], 0);  // a row of equal values stays in order
  EXPECT_EQ(s.got[1][31], 31);
  const Outcome k = run(test::load_golden("ops/kthvalue"), corner_rows(12, 40), cfg);
  expect_exact(k);
  const Outcome m = run(test::load_golden("ops/median_all"), corner_rows(9, 15), cfg);
  expect_exact(m);
  EXPECT_TRUE(std::isnan(m.got[0][0]));  // row 1 holds NaNs
}

// A small LX makes every corelet walk several tiles of one row each.
TEST(Select, TopkOverSeveralTilesPerCorelet) {
  auto cfg = arch::load_arch("tiny");
  cfg.set("lx.reserve_bytes", "0");
  cfg.set("lx.backend_reserve_fraction", "0");
  cfg.set("lx.size_bytes", "8192");
  const json ir = test::load_golden("ops/topk");
  const Outcome o = run(ir, corner_rows(16, 64), cfg);
  expect_exact(o);
  const json& k = o.r.report["kernels"][0];
  EXPECT_EQ(k["name"], "op0_topk");
  EXPECT_EQ(k["unit"], "sfp");
  EXPECT_LT(k["tiles"]["rows"].get<int64_t>(), k["split"]["rows_per_corelet"].get<int64_t>());
}

TEST(Select, RefusesIntegerInputNamingNodeAndSource) {
  json ir = test::load_golden("ops/topk");
  ir["buffers"][0]["dtype"] = "int32";
  ir["buffers"][2]["dtype"] = "int32";
  ir["nodes"][0]["inputs"][0]["dtype"] = "int32";
  ir["nodes"][1]["layout"]["dtype"] = "int32";
  ir["outputs"][0]["dtype"] = "int32";
  try {
    compile(ir, arch::load_arch("tiny"), {}, "t.json");
    FAIL() << "int32 topk compiled";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("t.json: node op0 (aten.topk.default, at tools/models/ops.py:158)"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("selection over i32 is not lowered"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace spyre::compiler
