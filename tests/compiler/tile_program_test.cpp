#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/tile_program.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

TileProgram build(const nlohmann::json& j, size_t node, const std::string& arch = "spyre") {
  static ir::Graph g;  // keep the graph alive for the returned program's references
  g = ir::load_ir(j, "g.json");
  return build_tile_program(g, g.nodes[node], arch::load_arch(arch), "g.json: node");
}

TEST(TileProgram, EltwiseChainBroadcastsTheVectorOverRows) {
  TileProgram p = build(test::load_golden("eltwise_chain"), 0);
  EXPECT_EQ(p.space.row.size, 64);
  EXPECT_EQ(p.space.col.size, 512);
  EXPECT_TRUE(p.space.outer.empty());
  // y[x1] varies along the columns only: loaded once per core, not per tile.
  int hoisted_loads = 0, tiled_loads = 0;
  for (const auto& op : p.ops)
    if (op.kind == TOp::Load)
      (p.vals[static_cast<size_t>(op.dst)].tiled ? tiled_loads : hoisted_loads)++;
  EXPECT_EQ(hoisted_loads, 1);
  EXPECT_EQ(tiled_loads, 1);  // x is loaded once although the body loads it twice
}

TEST(TileProgram, OneDimensionalGeluIsSplitIntoRowsAndColumns) {
  TileProgram p = build(test::load_golden("mlp_block"), 4);  // op5: gelu over 65536 elements
  EXPECT_EQ(p.space.row.size * p.space.col.size, 65536);
  EXPECT_EQ(p.space.col.size, 1024);  // 65536 / (32 cores * 2 corelets)
  EXPECT_EQ(p.space.row.coeff[0], 1024);
}

TEST(TileProgram, WelfordMeanKeepsOnlyWhatIsStored) {
  TileProgram p = build(test::load_golden("mlp_block"), 0);  // op0 stores the mean only
  EXPECT_TRUE(p.is_reduction);
  EXPECT_EQ(p.space.col.size, 256);
  int reduces = 0;
  for (const auto& op : p.ops) reduces += op.kind == TOp::Reduce;
  EXPECT_EQ(reduces, 1);
  p = build(test::load_golden("mlp_block"), 1);  // op1 stores m2: two reductions
  reduces = 0;
  for (const auto& op : p.ops) reduces += op.kind == TOp::Reduce;
  EXPECT_EQ(reduces, 2);
}

TEST(TileProgram, MaskedLoadIsUnsupportedAndNamesTheOp) {
  auto j = test::tiny_pointwise_ir();
  j["nodes"][0]["body"][1] = {{"id", "v1"},     {"op", "masked"},
                              {"args", {"v0"}}, {"dtype", "float16"},
                              {"value", 0.0},   {"body", nlohmann::json::array()}};
  try {
    build(j, 0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("op v1 'masked'"), std::string::npos) << e.what();
  }
}

TEST(TileProgram, NonAffineIndexIsUnsupported) {
  auto j = test::tiny_pointwise_ir();
  j["nodes"][0]["body"][0]["index"]["affine"] = nullptr;
  j["nodes"][0]["body"][0]["index"]["expr"] = "x0*x1";
  try {
    build(j, 0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'x0*x1' of buffer arg0_1 is not affine"),
              std::string::npos)
        << e.what();
  }
}

TEST(TileProgram, ReflectionPadIsAGatherAtAnIndexComputedFromIotas) {
  // reflection_pad2d: index -64*Abs(Abs(x0 - 1) - 15) - Abs(Abs(x1 - 2) - 63) + 1023.
  TileProgram p = build(test::load_golden("ops/pad_reflect"), 0, "tiny");
  int gathers = 0, abs_ops = 0, iotas = 0;
  for (const auto& op : p.ops) {
    gathers += op.kind == TOp::Gather;
    iotas += op.kind == TOp::Iota;
    abs_ops += op.kind == TOp::Unary && op.fn == isa::SfpFn::Abs;
  }
  EXPECT_EQ(gathers, 1);
  EXPECT_EQ(abs_ops, 4);
  EXPECT_EQ(iotas, 2);  // one per loop variable
}

TEST(TileProgram, IndexWithAProductOfVariablesIsStillRefused) {
  auto j = test::tiny_pointwise_ir();
  j["nodes"][0]["body"][0]["index"]["affine"] = nullptr;
  j["nodes"][0]["body"][0]["index"]["expr"] = "Abs(x0*x1 - 3)";
  EXPECT_THROW(build(j, 0), Error);
}

TEST(TileProgram, EmbeddingGathersWholeRows) {
  // embedding: arg0_1[32*v1 + x1] with v1 = ids[x0]: one index per row (x1 is contiguous).
  TileProgram p = build(test::load_golden("ops/embedding"), 0, "tiny");
  int gathers = 0;
  for (const auto& op : p.ops) {
    if (op.kind != TOp::Gather) continue;
    ++gathers;
    EXPECT_FALSE(p.vals[static_cast<size_t>(op.src[0])].c);  // the index: one per row
    EXPECT_TRUE(p.vals[static_cast<size_t>(op.dst)].c);      // the rows: all columns
  }
  EXPECT_EQ(gathers, 1);
}

TEST(TileProgram, EmbeddingCompilesToOneGatherRequestPerRow) {
  const auto ir = test::load_golden("ops/embedding");  // 64 ids into a [100, 32] fp16 table
  const auto r = compile(ir, arch::load_arch("tiny"), {}, "embedding.json");
  int64_t rows = 0;
  for (const auto& core : test::issued(r.program))
    for (const auto& in : core) {
      if (in.op != isa::Opcode::DmaGather) continue;
      EXPECT_EQ(in.get("bytes"), 32 * 2);  // a whole row of the table
      EXPECT_EQ(in.get("lx_stride"), 32 * 2);
      EXPECT_EQ(in.get("limit"), 100 * 32 - 32 + 1);  // the last row start that fits
      rows += in.get("n");
    }
  EXPECT_EQ(rows, 64);
}

TEST(TileProgram, TransposeIsCutIntoBlocksOfOneDramWord) {
  // bert op8: buf8[128*x0 + x1] = 0.125 * float(buf6[x0 + 256*x1]) over [256, 128]: the load
  // is contiguous along x0, the fp32 store along x1.
  TileProgram p = build(test::load_golden("models/bert"), 7);
  EXPECT_TRUE(p.space.blocked);
  EXPECT_EQ(p.space.row.size, 64);  // 128 B of the fp16 load per DMA run
  EXPECT_EQ(p.space.col.size, 32);  // 128 B of the fp32 store
  EXPECT_EQ(p.space.outer_count(), 256 * 128 / (64 * 32));
  int transposed_loads = 0;
  for (const auto& op : p.ops)
    if (op.kind == TOp::Load) transposed_loads += p.vals[static_cast<size_t>(op.dst)].transposed;
  EXPECT_EQ(transposed_loads, 1);
}

TEST(TileProgram, StoreAlongTheRowsIsWrittenFromATransposedCopy) {
  // llama op11 (rotary embedding of k, stored transposed: buf11[8192*x0 + x1 + 128*x2]).
  TileProgram p = build(test::load_golden("models/llama"), 9);
  EXPECT_TRUE(p.space.blocked);
  EXPECT_EQ(p.space.row.size, 32);  // the fp32 store: 128 B runs
  int stores = 0;
  for (const auto& op : p.ops) {
    if (op.kind != TOp::Store) continue;
    ++stores;
    EXPECT_TRUE(p.vals[static_cast<size_t>(op.src[0])].transposed);
  }
  EXPECT_EQ(stores, 1);
}

TEST(TileProgram, BlockedTransposeMovesOnlyWholeDramWords) {
  const auto r = compile(test::load_golden("models/bert"), arch::load_arch("spyre"), {}, "b.json");
  int64_t id = -1;
  for (const auto& k : r.report["kernels"])
    if (k["name"] == "op8_pointwise") id = k["id"].get<int64_t>();
  ASSERT_GE(id, 0);
  int64_t dmas = 0;
  for (const auto& core : test::issued(r.program))
    for (const auto& in : core) {
      if (in.kernel != id || (in.op != isa::Opcode::DmaLoad && in.op != isa::Opcode::DmaStore))
        continue;
      ++dmas;
      EXPECT_EQ(in.get("bytes") % 128, 0) << isa::op_info(in.op).mnemonic;
    }
  EXPECT_GT(dmas, 0);
}

}  // namespace
}  // namespace spyre::compiler
