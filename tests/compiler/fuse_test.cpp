// The fusion pass: which nodes become one kernel, what the report says about each decision,
// and the merge of loop nodes it is built on.
#include <gtest/gtest.h>

#include <algorithm>

#include "compiler_test_util.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/fuse.h"

namespace spyre::compiler {
namespace {

std::vector<std::string> group_names(const ir::Graph& g, const FusionPlan& p) {
  std::vector<std::string> out;
  for (const auto& grp : p.groups) out.push_back(grp.name(g));
  return out;
}

TEST(Fusion, MlpBlockBecomesLayerNormAndTwoMatmulsWithEpilogues) {
  auto cfg = arch::load_arch("spyre");
  const ir::Graph g = ir::load_ir(test::load_golden("mlp_block"), "mlp_block.json");
  const FusionPlan p = plan_fusion(CompileContext(CompileOptions{}), g, cfg, plan_dram(g, cfg));
  EXPECT_EQ(group_names(g, p), (std::vector<std::string>{"op0+op1+op3", "op4+op5", "op6+op7"}));
  ASSERT_EQ(p.decisions.size(), 4u) << p.decisions.dump(1);
  const char* kinds[] = {"horizontal", "reduction", "epilogue", "epilogue"};
  for (size_t i = 0; i < 4; ++i) {
    const auto& d = p.decisions[i];
    EXPECT_EQ(d["kind"], kinds[i]);
    EXPECT_TRUE(d["taken"].get<bool>()) << d.dump();
    // Taken only when predicted to save: fewer cycles, and here fewer DRAM bytes too (the
    // intermediate no longer goes through DRAM).
    EXPECT_LT(d["predicted"]["after"]["cycles"], d["predicted"]["before"]["cycles"]);
    EXPECT_LT(d["predicted"]["after"]["dram_bytes"], d["predicted"]["before"]["dram_bytes"]);
  }
}

TEST(Fusion, EpilogueDropsTheMatmulOutputStoreOnlyWhenNothingElseReadsIt) {
  auto cfg = arch::load_arch("spyre");
  CompileResult r = compile(test::load_golden("mlp_block"), cfg, {}, "mlp_block.json");
  const auto& ks = r.report["kernels"];
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[0]["fusion_group"], "op0+op1+op3");
  EXPECT_EQ(ks[1]["name"], "op4_op5_addmm");
  EXPECT_EQ(ks[1]["epilogue"]["output_stored"], false);  // buf4 lives only in LX
  EXPECT_EQ(ks[2]["epilogue"]["output_stored"], false);  // buf6 too
  // The fused LayerNorm stores only buf3: mean and m2 stay in LX. 64x256 fp16 in, out, and
  // the two 256-element fp16 affine vectors once per core (32 cores).
  EXPECT_EQ(ks[0]["predicted"]["dram_bytes"], 2 * 64 * 256 * 2 + 2 * 32 * 512);
}

TEST(Fusion, OffCompilesOneKernelPerNodeWithNoDecisions) {
  auto cfg = arch::load_arch("spyre");
  CompileOptions o;
  o.set("fusion", "off");
  CompileResult r = compile(test::load_golden("mlp_block"), cfg, o, "mlp_block.json");
  EXPECT_EQ(r.report["kernels"].size(), 7u);
  EXPECT_TRUE(r.report["fusion"].empty());
  EXPECT_EQ(r.report["fusion_enabled"], false);
}

TEST(Fusion, LimitTakesTheFirstDecisionsAndReportsTheRestAsRejected) {
  auto cfg = arch::load_arch("spyre");
  CompileOptions o;
  o.set("fusion_limit", "1");
  CompileResult r = compile(test::load_golden("mlp_block"), cfg, o, "mlp_block.json");
  EXPECT_EQ(r.report["kernels"].size(), 6u);
  int taken = 0;
  for (const auto& d : r.report["fusion"]) {
    taken += d["taken"].get<bool>();
    if (!d["taken"].get<bool>()) {
      EXPECT_NE(d["reason"].get<std::string>().find("fusion limit"), std::string::npos);
    }
  }
  EXPECT_EQ(taken, 1);
}

TEST(Fusion, SoftmaxReductionsAndTheirConsumersBecomeOneKernel) {
  auto cfg = arch::load_arch("spyre");
  const ir::Graph g = ir::load_ir(test::softmax_ir(64, 256, true), "softmax.json");
  const FusionPlan p = plan_fusion(CompileContext(CompileOptions{}), g, cfg, plan_dram(g, cfg));
  EXPECT_EQ(group_names(g, p), (std::vector<std::string>{"op0+op1+op2+op3"}))
      << p.decisions.dump(1);
}

TEST(Fusion, LayerNormAfterAMatmulMergesMeanAndM2Horizontally) {
  // bert op20 (mean) and op21 (m2) both read the addmm op19 + residual; neither produces the
  // other and a reduction cannot be an epilogue, so only the horizontal candidate remains.
  auto cfg = arch::load_arch("spyre");
  const ir::Graph g = ir::load_ir(test::load_golden("models/bert"), "bert.json");
  const FusionPlan p = plan_fusion(CompileContext(CompileOptions{}), g, cfg, plan_dram(g, cfg));
  bool horizontal = false;
  for (const auto& d : p.decisions)
    if (d["group"] == nlohmann::json{"op20", "op21"}) {
      EXPECT_EQ(d["kind"], "horizontal");
      EXPECT_TRUE(d["taken"].get<bool>()) << d.dump();
      horizontal = true;
    }
  EXPECT_TRUE(horizontal) << p.decisions.dump(1);
  const auto names = group_names(g, p);
  EXPECT_NE(std::find(names.begin(), names.end(), "op20+op21+op23"), names.end());
}

TEST(MergeLoopNodes, SharesTheWelfordReductionOfMeanAndM2) {
  const ir::Graph g = ir::load_ir(test::load_golden("mlp_block"), "mlp_block.json");
  std::string why;
  auto n = merge_loop_nodes(g, {&g.nodes[0], &g.nodes[1]}, {"buf0", "buf1"}, &why);
  ASSERT_TRUE(n) << why;
  int reductions = 0, loads = 0, stores = 0;
  for (const auto& op : n->body) {
    reductions += op.op == "reduction";
    loads += op.op == "load";
    stores += op.op == "store_reduction";
  }
  EXPECT_EQ(reductions, 1);
  EXPECT_EQ(loads, 1);
  EXPECT_EQ(stores, 2);
  EXPECT_EQ(n->name, "op0+op1");
}

TEST(MergeLoopNodes, InternalBufferBecomesAValueAndItsStoreIsDropped) {
  const ir::Graph g = ir::load_ir(test::load_golden("mlp_block"), "mlp_block.json");
  std::string why;
  auto n = merge_loop_nodes(g, {&g.nodes[0], &g.nodes[1], &g.nodes[2]}, {"buf3"}, &why);
  ASSERT_TRUE(n) << why;
  EXPECT_EQ(n->kind, "reduction");
  EXPECT_EQ(n->outputs, std::vector<std::string>{"buf3"});
  for (const auto& op : n->body) {
    EXPECT_NE(op.buffer, "buf0");
    EXPECT_NE(op.buffer, "buf1");
  }
}

TEST(MergeLoopNodes, RejectsDifferentIterationSpaces) {
  const ir::Graph g = ir::load_ir(test::load_golden("mlp_block"), "mlp_block.json");
  std::string why;
  // op3 runs over [64, 256], op7 over [16384].
  EXPECT_FALSE(merge_loop_nodes(g, {&g.nodes[2], &g.nodes[6]}, {"buf3", "buf7"}, &why));
  EXPECT_NE(why.find("iteration spaces differ"), std::string::npos) << why;
}

}  // namespace
}  // namespace spyre::compiler
