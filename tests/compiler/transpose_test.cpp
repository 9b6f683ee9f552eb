// Pure layout copies (compiler/lower/transpose.cpp): single-node graphs whose body is load ->
// [to_dtype] -> store with a permuted index (2-D transposes, NCHW -> NHWC, conv-weight
// re-layouts, odd sizes, several dtypes), compiled for "tiny" with `compiler.layout_copy`
// forced to the blocked transpose, to the loop lowering and left to the cost model, simulated,
// and compared element by element with the copy computed here (exact: a copy, or one rounding).
#include <gtest/gtest.h>

#include <random>

#include "compiler_test_util.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/ir.h"
#include "spyre/compiler/transpose.h"
#include "spyre/error.h"
#include "spyre/sim/simulate.h"

namespace spyre::compiler {
namespace {

struct CopyCase {
  std::string name;
  std::vector<int64_t> sizes;     // loop extents
  std::vector<int64_t> src, dst;  // per loop var: source and destination strides
  std::string sdt, ddt;           // dtypes; a to_dtype in the body when they differ
};

void PrintTo(const CopyCase& c, std::ostream* os) { *os << c.name; }

int64_t numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto x : s) n *= x;
  return n;
}

nlohmann::json expr_of(const std::vector<int64_t>& coeff) {
  nlohmann::json co = nlohmann::json::object();
  std::string e;
  for (size_t i = 0; i < coeff.size(); ++i) {
    co["x" + std::to_string(i)] = coeff[i];
    e += (i ? " + " : "") + std::to_string(coeff[i]) + "*x" + std::to_string(i);
  }
  return test::affine_index(e, co);
}

nlohmann::json copy_ir(const CopyCase& c) {
  const int64_t n = numel(c.sizes);
  auto buf = [&](const std::string& name, const std::string& kind, const std::string& dt) {
    return nlohmann::json{{"name", name},  {"kind", kind}, {"dtype", dt},       {"size", {n}},
                          {"stride", {1}}, {"offset", 0},  {"view_of", nullptr}};
  };
  nlohmann::json vars = nlohmann::json::array();
  for (size_t i = 0; i < c.sizes.size(); ++i) vars.push_back("x" + std::to_string(i));
  nlohmann::json body = {{{"id", "v0"},
                          {"op", "load"},
                          {"args", nlohmann::json::array()},
                          {"buffer", "x"},
                          {"dtype", c.sdt},
                          {"index", expr_of(c.src)}}};
  std::string last = "v0";
  if (c.sdt != c.ddt) {
    body.push_back({{"id", "v1"}, {"op", "to_dtype"}, {"args", {"v0"}}, {"dtype", c.ddt}});
    last = "v1";
  }
  body.push_back({{"op", "store"},
                  {"args", {last}},
                  {"buffer", "y"},
                  {"mode", nullptr},
                  {"index", expr_of(c.dst)}});
  return {{"schema", "spyre-sim-ir"},
          {"version", 1},
          {"torch_version", "test"},
          {"stage", "scheduler"},
          {"graph", c.name},
          {"buffers", {buf("x", "input", c.sdt), buf("y", "output", c.ddt)}},
          {"inputs", {"x"}},
          {"outputs",
           {{{"buffer", "y"}, {"dtype", c.ddt}, {"size", {n}}, {"stride", {1}}, {"offset", 0}}}},
          {"nodes",
           {{{"name", "op0"},
             {"kind", "pointwise"},
             {"outputs", {"y"}},
             {"origins", {"clone"}},
             {"aten", {"aten.clone.default"}},
             {"source", nullptr},
             {"vars", vars},
             {"sizes", c.sizes},
             {"reduce_vars", nlohmann::json::array()},
             {"reduce_sizes", nlohmann::json::array()},
             {"reduction_type", nullptr},
             {"body", body}}}}};
}

class LayoutCopyTest : public ::testing::TestWithParam<CopyCase> {};

TEST_P(LayoutCopyTest, EveryModeCopiesExactly) {
  const CopyCase& c = GetParam();
  const nlohmann::json ir = copy_ir(c);
  const ir::Graph g = ir::load_ir(ir, c.name);
  const auto m = match_layout_copy(g, g.nodes.at(0));
  ASSERT_TRUE(m.has_value()) << "not recognised as a layout copy";
  const auto cfg = arch::load_arch("tiny");
  const int64_t n = numel(c.sizes);
  const isa::DType sdt = g.buffer("x").dtype, ddt = g.buffer("y").dtype;
  // Inputs: distinct values (exact in every tested dtype), the expected copy computed here.
  std::vector<double> in(static_cast<size_t>(n)), want(static_cast<size_t>(n), 0.0);
  std::mt19937 rng(7);
  std::vector<uint8_t> tmp(8);
  for (auto& v : in) {
    isa::store_element(tmp.data(), sdt, std::normal_distribution<double>(0.0, 4.0)(rng));
    v = isa::load_element(tmp.data(), sdt);
  }
  for (int64_t e = 0; e < n; ++e) {
    int64_t rest = e, s = 0, d = 0;
    for (size_t i = c.sizes.size(); i-- > 0;) {
      const int64_t idx = rest % c.sizes[i];
      rest /= c.sizes[i];
      s += idx * c.src[i];
      d += idx * c.dst[i];
    }
    isa::store_element(tmp.data(), ddt, in[static_cast<size_t>(s)]);
    want[static_cast<size_t>(d)] = isa::load_element(tmp.data(), ddt);
  }
  for (const char* mode : {"transpose", "loops", "auto"}) {
    CompileOptions opts;
    opts.set("layout_copy", mode);
    const CompileResult r = compile(ir, cfg, opts, c.name + ".json");
    const auto& kr = r.report["kernels"].at(0);
    if (std::string(mode) == "transpose") {
      ASSERT_TRUE(kr.contains("layout_copy"));
      EXPECT_EQ(kr["layout_copy"]["lowering"], "blocked transpose");
    }
    if (std::string(mode) == "auto") {  // both predicted, the choice recorded
      ASSERT_TRUE(kr.contains("layout_copy"));
      EXPECT_TRUE(kr["layout_copy"].contains("predicted_transpose"));
      EXPECT_TRUE(kr["layout_copy"].contains("predicted_loops"));
    }
    sim::DeviceMemory mem(r.program.dram_bytes, 0);
    const TensorBinding& ib = r.inputs.at(0);
    for (int64_t e = 0; e < n; ++e)
      isa::store_element(mem.data() + test::addr_of(ib, e), sdt, in[static_cast<size_t>(e)]);
    const sim::SimResult s = sim::simulate(r.program, cfg, mem);
    const TensorBinding& ob = r.outputs.at(0);
    int64_t bad = 0;
    for (int64_t e = 0; e < n; ++e)
      bad +=
          isa::load_element(mem.data() + test::addr_of(ob, e), ddt) != want[static_cast<size_t>(e)];
    std::cout << "[ copy     ] " << c.name << " (" << mode << ", "
              << (kr.contains("layout_copy") ? kr["layout_copy"]["lowering"].get<std::string>()
                                             : std::string("loops"))
              << "): " << s.cycles << " cycles\n";
    EXPECT_EQ(bad, 0) << mode << ": " << bad << " of " << n << " elements differ";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, LayoutCopyTest,
    ::testing::Values(
        // [37, 300] -> [300, 37]: odd sizes, edge tiles on both sides.
        CopyCase{"t2d_odd_f16", {37, 300}, {300, 1}, {1, 37}, "float16", "float16"},
        // NCHW -> NHWC, batch 2, 24 channels, 5x7 pixels, fp32.
        CopyCase{"nchw_nhwc_f32", {2, 24, 35}, {840, 35, 1}, {840, 1, 24}, "float32", "float32"},
        // NHWC -> NCHW of [1, 130, 6, 6] (pixels x channels -> channels x pixels), bf16.
        CopyCase{"nhwc_nchw_bf16", {36, 130}, {130, 1}, {1, 36}, "bfloat16", "bfloat16"},
        // OIHW -> OHWI conv weight ([16, 8, 3x3]: a batch of [8, 9] -> [9, 8]), fp16.
        CopyCase{"weight_ohwi", {16, 8, 9}, {72, 9, 1}, {72, 1, 8}, "float16", "float16"},
        // A transpose with a conversion fp16 -> fp32 and a merged dim ([5, 6] x 70 -> 70 x [5, 6]).
        CopyCase{"t_cvt_merged", {5, 6, 70}, {420, 70, 1}, {6, 1, 30}, "float16", "float32"},
        // Two batch dims ([2, 3] batches of [8, 20] -> [20, 8]).
        CopyCase{"two_batch_f16",
                 {2, 3, 8, 20},
                 {480, 160, 20, 1},
                 {480, 160, 1, 8},
                 "float16",
                 "float16"},
        // int32 [3, 129] -> [129, 3].
        CopyCase{"t2d_i32", {3, 129}, {129, 1}, {1, 3}, "int32", "int32"}),
    [](const ::testing::TestParamInfo<CopyCase>& i) { return i.param.name; });

TEST(LayoutCopyMatch, PlainCopiesAndComputationsAreNotTransposes) {
  // Contiguous along the same dim on both sides (attention's permute + clone keeps head_dim
  // innermost): the loop lowering's strided runs already move whole rows.
  const ir::Graph g = ir::load_ir(
      copy_ir(CopyCase{
          "permute", {2, 3, 4, 16}, {192, 16, 48, 1}, {192, 64, 16, 1}, "float16", "float16"}),
      "permute");
  EXPECT_FALSE(match_layout_copy(g, g.nodes.at(0)).has_value());
  const ir::Graph r = ir::load_ir(test::tiny_pointwise_ir(), "relu");  // not a copy
  EXPECT_FALSE(match_layout_copy(r, r.nodes.at(0)).has_value());
}

TEST(LayoutCopyMode, BadOptionIsAnErrorNamingIt) {
  CompileOptions o;
  try {
    o.set("layout_copy", "sideways");
    FAIL() << "accepted";
  } catch (const spyre::Error& e) {
    EXPECT_NE(std::string(e.what()).find("compiler.layout_copy"), std::string::npos);
  }
}

}  // namespace
}  // namespace spyre::compiler
