// Split reductions (split_reduction.h): which reductions are split, into what, and the option.
// Numerics: the ops goldens sum_split / amax_split / amin_split (ops_test.cpp) run split on
// "tiny" and match the reference interpreter.
#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/split_reduction.h"

namespace spyre::compiler {
namespace {

const ir::Buffer* find(const ir::Graph& g, const std::string& name) { return g.find_buffer(name); }

TEST(SplitReduction, AFullSumBecomesPartialsOfOneChunkPerRowThenTheirSum) {
  // torch.sum of [128, 512] fp16: one row of 65536; "tiny" has 4 cores x 2 corelets.
  ir::Graph g = ir::load_ir(test::load_golden("ops/sum_split"), "sum_split.json");
  const auto splits = split_reductions(g, arch::load_arch("tiny"), {});
  ASSERT_EQ(splits.size(), 1u);
  const SplitReduction& s = splits[0];
  EXPECT_EQ(s.rows, 1);
  EXPECT_EQ(s.axis, 65536);
  EXPECT_EQ(s.parts, 16);  // chunks of 4096 elements: 16 rows for 8 workers
  ASSERT_EQ(g.nodes.size(), 2u);
  const ir::Node& part = g.nodes[0];
  const ir::Node& fin = g.nodes[1];
  EXPECT_EQ(part.name, s.partial_node);
  EXPECT_EQ(part.sizes, std::vector<int64_t>{16});
  EXPECT_EQ(part.reduce_sizes, std::vector<int64_t>{4096});
  EXPECT_EQ(fin.reduce_sizes, std::vector<int64_t>{16});
  const ir::Buffer* pb = find(g, s.partial_buffer);
  ASSERT_NE(pb, nullptr);
  EXPECT_EQ(pb->dtype, isa::DType::F32);  // partial sums keep fp32
  EXPECT_EQ(pb->size, std::vector<int64_t>{16});
  // The partial node's load walks chunk x_split at x_split * 4096 + r0.
  const ir::Op& load = part.body[0];
  ASSERT_EQ(load.op, "load");
  EXPECT_EQ(load.index->affine->coeff("x_split"), 4096);
  EXPECT_EQ(load.index->affine->coeff(part.reduce_vars[0]), 1);
}

TEST(SplitReduction, EnoughRowsOrTheOptionOffLeaveTheGraphAlone) {
  const auto cfg = arch::load_arch("tiny");
  ir::Graph rows = ir::load_ir(test::load_golden("ops/sum"), "sum.json");  // [16, 64] -> 16 rows
  EXPECT_TRUE(split_reductions(rows, cfg, {}).empty());
  ir::Graph g = ir::load_ir(test::load_golden("ops/sum_split"), "sum_split.json");
  EXPECT_TRUE(split_reductions(g, cfg, SplitReductionOptions{false}).empty());
  EXPECT_EQ(g.nodes.size(), 1u);
  // Welford (var, layer norm) is not split.
  ir::Graph w = ir::load_ir(test::load_golden("ops/layer_norm"), "layer_norm.json");
  EXPECT_TRUE(split_reductions(w, cfg, {}).empty());
}

TEST(SplitReduction, TheReportListsItAndTheOptionTurnsItOff) {
  const auto ir = test::load_golden("ops/amax_split");  // [2, 32768].amax(-1)
  const auto cfg = arch::load_arch("tiny");
  const CompileResult on = compile(ir, cfg, {}, "amax_split.json");
  ASSERT_EQ(on.report["split_reductions"].size(), 1u);
  EXPECT_EQ(on.report["split_reductions"][0]["parts"], 8);  // 2 rows x 8 chunks of 4096
  EXPECT_EQ(on.report["kernels"].size(), 2u);
  CompileOptions off;
  off.set("split_reduction", "off");
  const CompileResult r = compile(ir, cfg, off, "amax_split.json");
  EXPECT_TRUE(r.report["split_reductions"].empty());
  EXPECT_EQ(r.report["kernels"].size(), 1u);
}

}  // namespace
}  // namespace spyre::compiler
