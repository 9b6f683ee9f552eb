#include <gtest/gtest.h>

#include "compiler_test_util.h"
#include "spyre/compiler/ir.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

std::string load_error(const nlohmann::json& j) {
  try {
    ir::load_ir(j, "graph.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(IrLoad, LoadsEveryGolden) {
  for (const char* name : {"matmul", "eltwise_chain", "mlp_block"}) {
    ir::Graph g = ir::load_ir(test::load_golden(name), name);
    EXPECT_FALSE(g.nodes.empty()) << name;
    EXPECT_FALSE(g.inputs.empty()) << name;
  }
}

TEST(IrLoad, MlpBlockHasTheNodesInductorProduces) {
  ir::Graph g = ir::load_ir(test::load_golden("mlp_block"), "mlp_block.json");
  ASSERT_EQ(g.nodes.size(), 7u);
  EXPECT_EQ(g.nodes[0].reduction_type, "welford_reduce");
  EXPECT_EQ(g.nodes[3].kernel, "extern_kernels.addmm");
  // linear: the weight is seen transposed, stride (1, K).
  EXPECT_EQ(g.nodes[3].inputs[2].stride, (std::vector<int64_t>{1, 256}));
}

TEST(IrLoad, WrongFieldTypeNamesFileNodeAndField) {
  auto j = test::tiny_pointwise_ir();
  j["nodes"][0]["name"] = "op3";
  j["nodes"][0]["sizes"] = "64";
  EXPECT_EQ(load_error(j), "graph.json: node op3: field 'sizes': expected list of int");
}

TEST(IrLoad, MissingFieldIsNamed) {
  auto j = test::tiny_pointwise_ir();
  j["nodes"][0].erase("vars");
  EXPECT_EQ(load_error(j), "graph.json: node op0: field 'vars': missing");
}

TEST(IrLoad, UnknownBufferInBodyNamesTheOp) {
  auto j = test::tiny_pointwise_ir();
  j["nodes"][0]["body"][0]["buffer"] = "nope";
  EXPECT_NE(load_error(j).find("graph.json: node op0: body op v0: field 'buffer'"),
            std::string::npos)
      << load_error(j);
}

TEST(IrLoad, UndefinedOperandIsAnError) {
  auto j = test::tiny_pointwise_ir();
  j["nodes"][0]["body"][1]["args"] = {"v9"};
  EXPECT_NE(load_error(j).find("operand 'v9' is not defined"), std::string::npos);
}

TEST(IrLoad, WrongSchemaAndVersion) {
  auto j = test::tiny_pointwise_ir();
  j["schema"] = "other";
  EXPECT_EQ(load_error(j), "graph.json: field 'schema': expected \"spyre-sim-ir\"");
  j = test::tiny_pointwise_ir();
  j["version"] = 2;
  EXPECT_EQ(load_error(j), "graph.json: field 'version': expected 1, got 2");
}

TEST(IrLoad, UnknownDtypeIsNamed) {
  auto j = test::tiny_pointwise_ir();
  j["buffers"][0]["dtype"] = "complex64";
  EXPECT_EQ(load_error(j), "graph.json: buffer arg0_1: field 'dtype': unknown dtype 'complex64'");
}

TEST(IrLoad, StrideLengthMustMatchSize) {
  auto j = test::tiny_pointwise_ir();
  j["buffers"][1]["stride"] = {1};
  EXPECT_EQ(load_error(j), "graph.json: buffer buf0: field 'stride': has 1 entries for 2 sizes");
}

}  // namespace
}  // namespace spyre::compiler
