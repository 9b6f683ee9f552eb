// A convolution followed by inference BatchNorm (per-channel (y - mean) * scale + shift), an
// optional residual add and ReLU, as Inductor captures it (one extern node, one pointwise
// node): compiled for "tiny" with the pointwise node fused into the convolution's epilogue
// (conv.cpp + epilogue.cpp) and unfused, simulated with the same inputs; the two outputs must be
// bit-identical (the fused epilogue rounds where the DRAM trip did) and match the reference
// interpreter (ir_interp.h).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compiler_test_util.h"
#include "conv_ir.h"
#include "ir_interp.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/conv.h"
#include "spyre/sim/simulate.h"

namespace spyre::compiler {
namespace {

struct EpiCase {
  std::string name;
  int64_t c, h, w, oc, stride;
  bool residual;
};

void PrintTo(const EpiCase& c, std::ostream* os) { *os << c.name; }

using test::cl_stride;

nlohmann::json epi_ir(const EpiCase& k) {
  using nlohmann::json;
  const int64_t oh = (k.h + 2 - 3) / k.stride + 1, ow = (k.w + 2 - 3) / k.stride + 1;
  const std::vector<int64_t> xs{1, k.c, k.h, k.w}, ws{k.oc, k.c, 3, 3}, os{1, k.oc, oh, ow};
  const auto& buf = test::fp16_buffer;
  const auto& view = test::fp16_view;
  json j = test::graph_header(k.name);
  j["buffers"] = {
      buf("x", "input", xs, cl_stride(xs)),        buf("wt", "parameter", ws, cl_stride(ws)),
      buf("y", "intermediate", os, cl_stride(os)), buf("mean", "parameter", {k.oc}, {1}),
      buf("scale", "parameter", {k.oc}, {1}),      buf("shift", "parameter", {k.oc}, {1}),
      buf("z", "output", os, cl_stride(os))};
  j["inputs"] = {"x", "wt", "mean", "scale", "shift"};
  if (k.residual) {
    j["buffers"].push_back(buf("res", "input", os, cl_stride(os)));
    j["inputs"].push_back("res");
  }
  j["outputs"] = {view("z", os, cl_stride(os))};
  const json conv = test::conv_node({view("x", xs, cl_stride(xs)), view("wt", ws, cl_stride(ws))},
                                    "y", os, {k.stride, k.stride}, {1, 1}, {1, 1}, 1);
  const std::string pix = std::to_string(k.oc) + "*x0 + x1";
  const json full = test::affine_index(pix, {{"x0", k.oc}, {"x1", 1}});
  const json chan = test::affine_index("x1", {{"x0", 0}, {"x1", 1}});
  auto load = [](const std::string& id, const std::string& b, const json& idx) {
    return json{{"id", id},    {"op", "load"},       {"args", json::array()},
                {"buffer", b}, {"dtype", "float16"}, {"index", idx}};
  };
  auto op = [](const std::string& id, const std::string& o, std::vector<std::string> args,
               const std::string& dt) {
    return json{{"id", id}, {"op", o}, {"args", args}, {"dtype", dt}};
  };
  json body = {load("v0", "y", full),
               op("v1", "to_dtype", {"v0"}, "float32"),
               load("v2", "mean", chan),
               op("v3", "to_dtype", {"v2"}, "float32"),
               op("v4", "sub", {"v1", "v3"}, "float32"),
               load("v5", "scale", chan),
               op("v6", "to_dtype", {"v5"}, "float32"),
               op("v7", "mul", {"v4", "v6"}, "float32"),
               load("v8", "shift", chan),
               op("v9", "to_dtype", {"v8"}, "float32"),
               op("v10", "add", {"v7", "v9"}, "float32")};
  std::string last = "v10";
  if (k.residual) {
    body.push_back(load("v11", "res", full));
    body.push_back(op("v12", "to_dtype", {"v11"}, "float32"));
    body.push_back(op("v13", "add", {"v10", "v12"}, "float32"));
    last = "v13";
  }
  body.push_back(op("v14", "to_dtype", {last}, "float16"));
  body.push_back(op("v15", "relu", {"v14"}, "float16"));
  body.push_back(
      {{"op", "store"}, {"args", {"v15"}}, {"buffer", "z"}, {"mode", nullptr}, {"index", full}});
  const json bn = {{"name", "op1"},
                   {"kind", "pointwise"},
                   {"outputs", {"z"}},
                   {"origins", {"relu"}},
                   {"aten", {"aten.relu.default"}},
                   {"source", nullptr},
                   {"vars", {"x0", "x1"}},
                   {"sizes", {oh * ow, k.oc}},
                   {"reduce_vars", json::array()},
                   {"reduce_sizes", json::array()},
                   {"reduction_type", nullptr},
                   {"body", body}};
  j["nodes"] = {conv, bn};
  return j;
}

class ConvEpilogue : public ::testing::TestWithParam<EpiCase> {};

TEST_P(ConvEpilogue, FusedEqualsUnfused) {
  const EpiCase& c = GetParam();
  const nlohmann::json ir = epi_ir(c);
  const auto cfg = arch::load_arch("tiny");
  test::IrInterp ref(ir);
  std::mt19937 rng(5);
  std::vector<std::vector<double>> inputs;
  for (const auto& name : ir["inputs"]) {
    nlohmann::json b;
    for (const auto& x : ir["buffers"])
      if (x["name"] == name) b = x;
    const nlohmann::json v = {
        {"buffer", name}, {"size", b["size"]}, {"stride", b["stride"]}, {"offset", 0}};
    int64_t n = 1;
    for (auto s : b["size"]) n *= s.get<int64_t>();
    std::vector<double> vals(static_cast<size_t>(n));
    // Weights at the fan-in scale; scale near 1 so the BatchNorm does not blow values up.
    const double sd = name == "wt" ? 1.0 / std::sqrt(9.0 * static_cast<double>(c.c)) : 1.0;
    for (auto& x : vals)
      x = name == "scale" ? std::uniform_real_distribution<double>(0.5, 1.5)(rng)
                          : std::normal_distribution<double>(0.0, sd)(rng);
    ref.write_view(v, vals);
    inputs.push_back(ref.read_view(v));  // rounded to fp16
  }
  ref.run();
  const auto want = ref.read_view(ir["outputs"][0]);

  auto run = [&](bool fused, const char* halo) {
    CompileOptions o;
    o.set("fusion", fused ? "on" : "off");
    o.set("debug.conv_halo", halo);
    if (fused) o.set("debug.force_fusion", "all");  // the fused path, whatever the cost model says
    const CompileResult r = compile(ir, cfg, o, c.name + ".json");
    if (fused) {
      EXPECT_EQ(r.report["kernels"].size(), 1u);
      EXPECT_TRUE(r.report["kernels"][0].contains("epilogue"));
      EXPECT_FALSE(r.report["kernels"][0]["epilogue"]["output_stored"].get<bool>());
    } else {
      EXPECT_EQ(r.report["kernels"].size(), 2u);
    }
    sim::DeviceMemory mem(r.program.dram_bytes, 0);
    for (size_t i = 0; i < r.inputs.size(); ++i) {
      const TensorBinding& b = r.inputs[i];
      for (size_t e = 0; e < inputs[i].size(); ++e)
        isa::store_element(mem.data() + test::addr_of(b, static_cast<int64_t>(e)), b.dtype,
                           inputs[i][e]);
    }
    const sim::SimResult s = sim::simulate(r.program, cfg, mem);
    std::cout << "[ conv+bn  ] " << c.name << (fused ? " fused: " : " unfused: ") << s.cycles
              << " cycles\n";
    const TensorBinding& o2 = r.outputs.at(0);
    std::vector<double> got(want.size());
    for (size_t e = 0; e < got.size(); ++e)
      got[e] = isa::load_element(mem.data() + test::addr_of(o2, static_cast<int64_t>(e)), o2.dtype);
    return got;
  };
  for (const char* halo : {"halo", "taps"}) {  // both input-load paths
    const auto fused = run(true, halo), unfused = run(false, halo);
    int64_t differ = 0;
    double rms = 0, err = 0, top = 0;
    for (size_t e = 0; e < want.size(); ++e) {
      differ += fused[e] != unfused[e];
      rms += want[e] * want[e];
      top = std::max(top, std::abs(want[e]));
      err = std::max(err, std::abs(fused[e] - want[e]));
    }
    rms = std::sqrt(rms / static_cast<double>(want.size()));
    EXPECT_EQ(differ, 0) << "fused and unfused outputs differ in " << differ << " elements";
    EXPECT_GT(rms, 0.1);
    // fp16: the conv output's rounding can flip one ulp, which BatchNorm scales by <= 1.5.
    EXPECT_LE(err, 2 * top * std::ldexp(1.0, -10) + 1e-3 * rms);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvEpilogue,
    ::testing::Values(EpiCase{"bn_relu", 24, 9, 9, 40, 1, false},
                      // Two output-channel tiles, stride 2, odd width, residual add.
                      EpiCase{"bn_add_relu_strided", 16, 10, 7, 160, 2, true}),
    [](const ::testing::TestParamInfo<EpiCase>& i) { return i.param.name; });

}  // namespace
}  // namespace spyre::compiler
