#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "spyre/arch/arch.h"
#include "spyre/compiler/dram_plan.h"

namespace spyre::compiler {
namespace {

TEST(DramPlan, RegionsAreStickAlignedAndDisjoint) {
  auto j = test::tiny_pointwise_ir(3, 5);  // 15 fp16 = 30 bytes: padded to one stick
  ir::Graph g = ir::load_ir(j, "g.json");
  auto cfg = arch::load_arch("spyre");
  DramPlan p = plan_dram(g, cfg);
  EXPECT_EQ(p.at("arg0_1").addr, 0u);
  EXPECT_EQ(p.at("arg0_1").bytes, 30u);
  EXPECT_EQ(p.at("buf0").addr, 128u);
  EXPECT_EQ(p.total_bytes, 256u);
}

TEST(DramPlan, ViewsShareTheirBaseStorage) {
  auto j = test::tiny_pointwise_ir(4, 64);
  j["buffers"].push_back({{"name", "view0"},
                          {"kind", "view"},
                          {"dtype", "float16"},
                          {"size", {64, 4}},
                          {"stride", {1, 64}},
                          {"offset", 0},
                          {"view_of", "buf0"}});
  ir::Graph g = ir::load_ir(j, "g.json");
  DramPlan p = plan_dram(g, arch::load_arch("spyre"));
  EXPECT_EQ(p.at("view0").addr, p.at("buf0").addr);
  EXPECT_EQ(p.at("view0").storage, "buf0");
  EXPECT_EQ(p.addr("view0", 3, 2), p.at("buf0").addr + 6);
}

TEST(DramPlan, MlpBlockBuffersAllPlaced) {
  ir::Graph g = ir::load_ir(test::load_golden("mlp_block"), "mlp_block.json");
  DramPlan p = plan_dram(g, arch::load_arch("spyre"));
  for (const auto& b : g.buffers) {
    EXPECT_EQ(p.at(b.name).addr % 128, 0u) << b.name;
    EXPECT_GE(p.at(b.name).bytes, static_cast<uint64_t>(b.storage_elems()) * 2) << b.name;
  }
}

}  // namespace
}  // namespace spyre::compiler
