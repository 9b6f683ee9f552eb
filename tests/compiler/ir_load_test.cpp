#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler_test_util.h"
#include "spyre/compiler/ir.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

std::string load_error(const nlohmann::json& j, const std::string& file = "graph.json") {
  try {
    ir::load_ir(j, file);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream f(p);
  if (!f) throw std::runtime_error("cannot read " + p.string());
  return nlohmann::json::parse(f);
}

// Every golden capture under tests/data/ir (basic, ops/, models/), found at run time.
std::vector<std::filesystem::path> all_goldens() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(SPYRE_IR_DIR))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

const nlohmann::json* first_fallback(const nlohmann::json& j) {
  for (const auto& n : j["nodes"])
    if (n["kind"] == "fallback") return &n;
  return nullptr;
}

TEST(IrLoad, LoadsEveryGolden) {
  for (const char* name : {"matmul", "eltwise_chain", "mlp_block"}) {
    ir::Graph g = ir::load_ir(test::load_golden(name), name);
    EXPECT_FALSE(g.nodes.empty()) << name;
    EXPECT_FALSE(g.inputs.empty()) << name;
  }
}

// All goldens match the embedded schema and load: the fallback kernels they hold (topk,
// median) have a lowering (select.h), so none is refused.
TEST(IrLoad, LoadsEveryGoldenUnderTestsDataIr) {
  auto files = all_goldens();
  size_t loaded = 0, with_fallback = 0, models = 0, ops = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const std::string rel = std::filesystem::relative(path, SPYRE_IR_DIR).generic_string();
    nlohmann::json j = read_json(path);
    EXPECT_TRUE(ir::ir_schema().is_valid(j));
    models += rel.rfind("models/", 0) == 0;
    ops += rel.rfind("ops/", 0) == 0;
    with_fallback += first_fallback(j) != nullptr;
    try {
      ir::Graph g = ir::load_ir(j, rel);
      EXPECT_EQ(g.nodes.size(), j["nodes"].size());
      EXPECT_EQ(g.buffers.size(), j["buffers"].size());
      ++loaded;
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(files.size(), 100u);
  EXPECT_EQ(models, 4u);  // gpt2, bert, llama, resnet_block
  EXPECT_GE(ops, 90u);
  EXPECT_GE(with_fallback, 2u);  // topk, median
  EXPECT_EQ(loaded, files.size());
}

// topk's tuple and its MultiOutput views load: the tuple buffer has no dtype, each MultiOutput
// names its element.
TEST(IrLoad, LoweredFallbackLoadsWithItsTupleAndMultiOutputs) {
  ir::Graph g = ir::load_ir(test::load_golden("ops/topk"), "topk.json");
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].op_overload, "aten.topk.default");
  EXPECT_TRUE(g.buffer(g.nodes[0].outputs[0]).tuple);
  EXPECT_EQ(g.nodes[1].indices, std::vector<int64_t>{0});
  EXPECT_EQ(g.nodes[2].indices, std::vector<int64_t>{1});
  EXPECT_EQ(g.nodes[2].inputs.at(0).buffer, g.nodes[0].outputs[0]);
  EXPECT_EQ(g.nodes[2].layout.dtype, isa::DType::I64);
}

// A fallback with no lowering (topk's graph calling an ATen op spyre-sim does not lower) is
// refused naming the op and the user's source line; its MultiOutput nodes are not reached.
TEST(IrLoad, FallbackWithoutLoweringIsRefusedNamingOpAndSource) {
  nlohmann::json j = test::load_golden("ops/topk");
  j["nodes"][0]["op_overload"] = "aten.mode.default";
  j["nodes"][0]["kernel"] = "torch.ops.aten.mode.default";
  const std::string err = load_error(j, "mode.json");
  EXPECT_NE(err.find("mode.json: node op0 (aten.mode.default, at tools/models/ops.py:158)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("unsupported op"), std::string::npos) << err;
  EXPECT_NE(err.find("fallback kernel torch.ops.aten.mode.default"), std::string::npos) << err;
}

// A result whose size an op computes from values (SCHEMA.md `symbolic`) can come only from a
// host call (compiler.host_fallback=on): a fallback the chip runs (topk, select.h), or any op
// without the option, is refused naming the op, the buffer and the size.
TEST(IrLoad, ValueDependentSizesComeOnlyFromTheHost) {
  nlohmann::json j = test::load_golden("ops/topk");
  const std::string values = j["nodes"][1]["outputs"][0];
  for (auto& b : j["buffers"])
    if (b["name"] == values) {
      nlohmann::json size = b["size"];
      size[0] = "u0";
      b["symbolic"] = {
          {"size", size}, {"stride", b["stride"]}, {"offset", 0}, {"bounds", {{"u0", {0, 4}}}}};
    }
  ir::LoadOptions host;
  host.host_fallback = true;
  auto error = [&](const nlohmann::json& g, const ir::LoadOptions& o) -> std::string {
    try {
      ir::load_ir(g, "v.json", o);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  std::string err = error(j, host);  // topk runs on the chip even under host fallback
  EXPECT_NE(err.find("v.json: node op0 (aten.topk.default"), std::string::npos) << err;
  EXPECT_NE(err.find("buffer " + values + " has the size u0, which depends on the values"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("host_fallback=on"), std::string::npos) << err;

  j["nodes"][0]["op_overload"] = "aten.nonzero.default";  // no lowering: the host can run it
  err = error(j, {});
  EXPECT_NE(err.find("node op0 (aten.nonzero.default"), std::string::npos) << err;
  EXPECT_NE(err.find("--set compiler.host_fallback=on runs the op on the host"), std::string::npos)
      << err;
  ir::Graph g = ir::load_ir(j, "v.json", host);
  EXPECT_EQ(g.buffer(values).symbolic["size"][0], "u0");
  EXPECT_EQ(g.buffer(values).symbolic["bounds"]["u0"][1], 4);
}

// A buffer without a dtype that no fallback outputs is bad IR, named by buffer and field.
TEST(IrLoad, TupleBufferMustBeAFallbacksOutput) {
  nlohmann::json j = test::load_golden("ops/topk");
  j["buffers"].push_back({{"name", "tup"},
                          {"kind", "intermediate"},
                          {"dtype", nullptr},
                          {"size", nlohmann::json::array()},
                          {"stride", nlohmann::json::array()},
                          {"offset", 0},
                          {"view_of", nullptr}});
  const std::string err = load_error(j, "t.json");
  EXPECT_NE(err.find("t.json: buffer tup: field 'dtype'"), std::string::npos) << err;
}

// An integer JSON number that int64 cannot hold (2^63) is refused by field, not wrapped to a
// negative offset.
TEST(IrLoad, IntegerBeyondInt64IsNamed) {
  nlohmann::json j = test::load_golden("ops/add");
  j["buffers"][0]["offset"] = uint64_t{1} << 63;
  const std::string err = load_error(j, "big.json");
  EXPECT_NE(err.find("big.json: buffer " + j["buffers"][0]["name"].get<std::string>() +
                     ": field 'offset'"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("expected int"), std::string::npos) << err;
}

// The library's copy of the schema is the file in the tree (CMake regenerates it on change).
TEST(IrLoad, EmbeddedSchemaIsTheSchemaFile) {
  std::ifstream f(SPYRE_IR_SCHEMA_FILE);
  ASSERT_TRUE(f) << SPYRE_IR_SCHEMA_FILE;
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_EQ(text.str(), ir::ir_schema_text());
}

TEST(IrLoad, BiggestGoldenLoadsFast) {
  std::filesystem::path biggest;
  for (const auto& p : all_goldens())
    if (biggest.empty() || std::filesystem::file_size(p) > std::filesystem::file_size(biggest))
      biggest = p;
  std::ifstream f(biggest);
  std::stringstream text;
  text << f.rdbuf();
  auto t0 = std::chrono::steady_clock::now();
  ir::Graph g = ir::load_ir(nlohmann::json::parse(text.str()), biggest.filename().string());
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "parse + validate + load " << biggest.filename().string() << " ("
            << text.str().size() / 1024 << " KiB, " << g.nodes.size() << " nodes): " << s * 1e3
            << " ms\n";
  EXPECT_LT(s, 0.5);
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
  EXPECT_EQ(load_error(j), "graph.json: node op3: field 'sizes': expected array, got string");
  j = test::tiny_pointwise_ir();
  j["nodes"][0]["name"] = "op3";
  j["nodes"][0]["sizes"][1] = "64";
  EXPECT_EQ(load_error(j), "graph.json: node op3: field 'sizes[1]': expected integer, got string");
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
  EXPECT_EQ(load_error(j), "graph.json: field 'schema': expected \"spyre-sim-ir\", got \"other\"");
  j = test::tiny_pointwise_ir();
  j["version"] = 2;
  EXPECT_EQ(load_error(j), "graph.json: field 'version': expected 1, got 2");
}

TEST(IrLoad, UnknownDtypeIsNamed) {
  auto j = test::tiny_pointwise_ir();
  j["buffers"][0]["dtype"] = "complex64";
  EXPECT_EQ(load_error(j),
            "graph.json: buffer arg0_1: field 'dtype': expected one of \"float16\", \"bfloat16\", "
            "\"float32\", \"float64\", \"int8\", \"uint8\", \"int16\", \"int32\", \"int64\", "
            "\"bool\" or null, got \"complex64\"");
}

TEST(IrLoad, StrideLengthMustMatchSize) {
  auto j = test::tiny_pointwise_ir();
  j["buffers"][1]["stride"] = {1};
  EXPECT_EQ(load_error(j), "graph.json: buffer buf0: field 'stride': has 1 entries for 2 sizes");
}

// The tests' hand-written graphs are held to the same schema as captures.
TEST(IrLoad, HandWrittenTestGraphsMatchTheSchema) {
  for (const auto& [name, j] : {std::pair{"tiny_pointwise_ir", test::tiny_pointwise_ir()},
                                std::pair{"softmax_ir", test::softmax_ir()},
                                std::pair{"softmax_ir chain", test::softmax_ir(64, 256, true)}}) {
    auto v = ir::ir_schema().validate(j);
    EXPECT_FALSE(v) << name << ": " << json_schema::path_string(v->path) << ": " << v->message;
  }
}

TEST(IrLoad, DtypeTheSchemaAdmitsButTheDeviceLacks) {
  auto j = test::tiny_pointwise_ir();
  j["buffers"][0]["dtype"] = "float64";
  EXPECT_NE(load_error(j).find("graph.json: buffer arg0_1: field 'dtype': dtype 'float64': the "
                               "chip has no such type"),
            std::string::npos)
      << load_error(j);
  // A buffer a node writes, and a body op's value, name the ATen ops behind them.
  j = test::tiny_pointwise_ir();
  j["nodes"][0]["aten"] = {"aten._to_copy.default"};
  const std::string out = j["nodes"][0]["outputs"][0];
  for (auto& b : j["buffers"])
    if (b["name"] == out) b["dtype"] = "uint8";
  EXPECT_NE(
      load_error(j).find("dtype 'uint8': the chip has no such type (it has float16, "
                         "bfloat16, float32, int8, int32 and bool; int64 for indices); "
                         "written by node " +
                         j["nodes"][0]["name"].get<std::string>() + " (aten._to_copy.default)"),
      std::string::npos)
      << load_error(j);
  j = test::tiny_pointwise_ir();
  j["nodes"][0]["aten"] = {"aten.mul.Tensor", "aten.double.default"};
  j["nodes"][0]["body"][0]["dtype"] = "float64";
  EXPECT_NE(load_error(j).find("field 'dtype': dtype 'float64': the chip has no such type"),
            std::string::npos)
      << load_error(j);
  EXPECT_NE(load_error(j).find("; from aten.mul.Tensor, aten.double.default"), std::string::npos)
      << load_error(j);
}

// Mutations of a real capture: each names the node (or buffer, body op, output) and the field.
class IrMutation : public ::testing::Test {
 protected:
  nlohmann::json j = read_json(std::string(SPYRE_IR_DIR) + "/models/gpt2.json");
  std::string err() { return load_error(j, "gpt2.json"); }
  // The first node whose kind is `kind`, with its name.
  nlohmann::json& node(const std::string& kind, std::string* name) {
    for (auto& n : j["nodes"])
      if (n["kind"] == kind) {
        *name = n["name"].get<std::string>();
        return n;
      }
    throw std::runtime_error("no " + kind + " node in gpt2.json");
  }
  // The first op `op` in `body`, with its index.
  static nlohmann::json& op(nlohmann::json& body, const std::string& op, size_t* at = nullptr) {
    for (size_t i = 0; i < body.size(); ++i)
      if (body[i]["op"] == op) {
        if (at) *at = i;
        return body[i];
      }
    throw std::runtime_error("no " + op + " op");
  }
};

TEST_F(IrMutation, ValidAsCaptured) { EXPECT_EQ(err(), "no error"); }

TEST_F(IrMutation, WrongTypeInALoopNode) {
  std::string name;
  node("pointwise", &name)["sizes"][0] = "64";
  EXPECT_EQ(err(), "gpt2.json: node " + name + ": field 'sizes[0]': expected integer, got string");
}

TEST_F(IrMutation, NegativeSize) {
  std::string name;
  node("reduction", &name)["reduce_sizes"][0] = -1;
  EXPECT_EQ(err(), "gpt2.json: node " + name + ": field 'reduce_sizes[0]': expected >= 0, got -1");
}

TEST_F(IrMutation, PointwiseNodeWithAReductionType) {
  std::string name;
  node("pointwise", &name)["reduction_type"] = "sum";
  EXPECT_EQ(err(),
            "gpt2.json: node " + name + ": field 'reduction_type': expected null, got string");
}

TEST_F(IrMutation, UnknownNodeKind) {
  std::string name;
  node("pointwise", &name)["kind"] = "template";
  EXPECT_EQ(err(),
            "gpt2.json: node " + name +
                ": field 'kind': expected one of \"pointwise\", \"reduction\", \"extern\" or "
                "\"fallback\", got \"template\"");
}

TEST_F(IrMutation, MissingFieldOfABuffer) {
  j["buffers"][1].erase("stride");
  EXPECT_EQ(err(), "gpt2.json: buffer " + j["buffers"][1]["name"].get<std::string>() +
                       ": field 'stride': missing");
}

TEST_F(IrMutation, ViewBufferWithoutViewOf) {
  j["buffers"][0]["kind"] = "view";
  EXPECT_EQ(err(), "gpt2.json: buffer " + j["buffers"][0]["name"].get<std::string>() +
                       ": field 'view_of': expected string, got null");
}

TEST_F(IrMutation, UnknownKeys) {
  std::string name;
  node("pointwise", &name)["tile"] = 4;
  EXPECT_EQ(err(), "gpt2.json: node " + name +
                       ": field 'tile': unknown field (the IR schema does not allow it here)");
  j = read_json(std::string(SPYRE_IR_DIR) + "/models/gpt2.json");
  node("extern", &name)["vars"] = nlohmann::json::array();  // a loop node's key
  EXPECT_EQ(err(), "gpt2.json: node " + name +
                       ": field 'vars': unknown field (the IR schema does not allow it here)");
  j = read_json(std::string(SPYRE_IR_DIR) + "/models/gpt2.json");
  j["buffers"][2]["layout"] = nullptr;
  EXPECT_EQ(err(), "gpt2.json: buffer " + j["buffers"][2]["name"].get<std::string>() +
                       ": field 'layout': unknown field (the IR schema does not allow it here)");
  j = read_json(std::string(SPYRE_IR_DIR) + "/models/gpt2.json");
  j["created"] = "today";
  EXPECT_EQ(err(),
            "gpt2.json: field 'created': unknown field (the IR schema does not allow it here)");
}

TEST_F(IrMutation, BodyOps) {
  std::string name;
  auto& n = node("pointwise", &name);
  nlohmann::json& load = op(n["body"], "load");
  const std::string id = load["id"].get<std::string>();
  load.erase("index");
  EXPECT_EQ(err(), "gpt2.json: node " + name + ": body op " + id + ": field 'index': missing");
  load["index"] = {{"expr", "x0"}, {"affine", {{"offset", 0}, {"coeffs", {{"x0", "1"}}}}}};
  EXPECT_EQ(err(), "gpt2.json: node " + name + ": body op " + id +
                       ": field 'index.affine.coeffs.x0': expected integer, got string");
  load["index"]["affine"] = 7;
  EXPECT_EQ(err(), "gpt2.json: node " + name + ": body op " + id +
                       ": field 'index.affine': expected object or null, got integer");
}

TEST_F(IrMutation, StoreWithAnIdAndBadOperands) {
  std::string name;
  auto& n = node("pointwise", &name);
  size_t at = 0;
  nlohmann::json& store = op(n["body"], "store", &at);
  store["dtype"] = "float16";
  EXPECT_EQ(err(), "gpt2.json: node " + name + ": body[" + std::to_string(at) +
                       "]: field 'dtype': not allowed here");
  store.erase("dtype");
  store["args"].push_back(store["args"][0]);
  EXPECT_EQ(err(), "gpt2.json: node " + name + ": body[" + std::to_string(at) +
                       "]: field 'args': expected at most 1 item, got 2 items");
  store["args"] = {"x"};
  EXPECT_EQ(err(), "gpt2.json: node " + name + ": body[" + std::to_string(at) +
                       "]: field 'args[0]': expected a string matching /^v[0-9]+(\\.[0-9]+)?$/, "
                       "got \"x\"");
}

TEST_F(IrMutation, ExternNodeInputs) {
  std::string name;
  auto& n = node("extern", &name);
  n["inputs"][0]["dtype"] = "complex64";
  EXPECT_NE(err().find("gpt2.json: node " + name +
                       ": field 'inputs[0].dtype': expected one of \"float16\""),
            std::string::npos)
      << err();
  n["inputs"][0]["dtype"] = "float16";
  n["layout"].erase("offset");
  EXPECT_EQ(err(), "gpt2.json: node " + name + ": field 'layout.offset': missing");
}

TEST_F(IrMutation, GraphOutputs) {
  j["outputs"][0]["offset"] = -1;
  EXPECT_EQ(err(), "gpt2.json: outputs[0]: field 'offset': expected >= 0, got -1");
  j["outputs"][0] = "buf0";
  EXPECT_EQ(err(), "gpt2.json: outputs[0]: expected object, got string");
}

TEST_F(IrMutation, NodeWithoutAUsableName) {
  j["nodes"][1].erase("name");
  EXPECT_EQ(err(), "gpt2.json: nodes[1]: field 'name': missing");
  j["nodes"][1]["name"] = "n1";
  EXPECT_EQ(err(),
            "gpt2.json: node n1: field 'name': expected a string matching /^op[0-9]+$/, got "
            "\"n1\"");
}

// A masked op's sub-block: the path goes through both body ops.
TEST(IrLoad, MaskedSubBlockOpIsNamed) {
  nlohmann::json j = read_json(std::string(SPYRE_IR_DIR) + "/ops/pad.json");
  for (auto& n : j["nodes"])
    for (auto& o : n["body"])
      if (o["op"] == "masked") {
        o["body"][0]["dtype"] = "float8";
        EXPECT_EQ(load_error(j, "pad.json"),
                  "pad.json: node " + n["name"].get<std::string>() + ": body op " +
                      o["id"].get<std::string>() + ": body op " +
                      o["body"][0]["id"].get<std::string>() +
                      ": field 'dtype': expected one of \"float16\", \"bfloat16\", \"float32\", "
                      "\"float64\", \"int8\", \"uint8\", \"int16\", \"int32\", \"int64\", "
                      "\"bool\" or null, got \"float8\"");
        return;
      }
  FAIL() << "no masked op in ops/pad.json";
}

}  // namespace
}  // namespace spyre::compiler
