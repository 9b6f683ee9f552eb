#pragma once
// Helpers shared by the compiler tests: golden IR files and a small hand-written IR.
#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "spyre/compiler/compile.h"
#include "spyre/isa/dtype.h"
#include "spyre/isa/loops.h"

namespace spyre::compiler::test {

// Element `flat` (row-major over size) of a binding, as a byte address.
inline uint64_t addr_of(const TensorBinding& b, int64_t flat) {
  int64_t off = 0;
  for (size_t d = b.size.size(); d-- > 0;) {
    off += (flat % b.size[d]) * b.stride[d];
    flat /= b.size[d];
  }
  return b.dram_addr + static_cast<uint64_t>(off * isa::dtype_size_bytes(b.dtype));
}

// Every core's stream as the sequencer issues it (hardware loops expanded, isa/loops.h): what
// tests that count or inspect instructions should look at.
inline std::vector<std::vector<isa::Instr>> issued(const isa::Program& p) {
  std::vector<std::vector<isa::Instr>> out;
  for (size_t c = 0; c < p.cores.size(); ++c) out.push_back(isa::expand_stream(p.cores[c], c));
  return out;
}

inline nlohmann::json load_golden(const std::string& name) {
  std::ifstream f(std::string(SPYRE_IR_DIR) + "/" + name + ".json");
  if (!f) throw std::runtime_error("missing golden IR " + name);
  return nlohmann::json::parse(f);
}

inline nlohmann::json affine_index(const std::string& expr, nlohmann::json coeffs,
                                   int64_t off = 0) {
  return {{"expr", expr}, {"affine", {{"offset", off}, {"coeffs", std::move(coeffs)}}}};
}

// y[i, j] = relu(x[i, j]) for x [rows, cols] fp16: the smallest valid pointwise graph.
inline nlohmann::json tiny_pointwise_ir(int64_t rows = 4, int64_t cols = 64) {
  using nlohmann::json;
  json idx = affine_index("64*x0 + x1", {{"x0", cols}, {"x1", 1}});
  return {{"schema", "spyre-sim-ir"},
          {"version", 1},
          {"torch_version", "2.13.0+cpu"},
          {"stage", "scheduler"},
          {"graph", "graph_0"},
          {"buffers",
           {{{"name", "arg0_1"},
             {"kind", "input"},
             {"dtype", "float16"},
             {"size", {rows, cols}},
             {"stride", {cols, 1}},
             {"offset", 0},
             {"view_of", nullptr}},
            {{"name", "buf0"},
             {"kind", "output"},
             {"dtype", "float16"},
             {"size", {rows, cols}},
             {"stride", {cols, 1}},
             {"offset", 0},
             {"view_of", nullptr}}}},
          {"inputs", {"arg0_1"}},
          {"outputs",
           {{{"buffer", "buf0"},
             {"dtype", "float16"},
             {"size", {rows, cols}},
             {"stride", {cols, 1}},
             {"offset", 0}}}},
          {"nodes",
           {{{"name", "op0"},
             {"kind", "pointwise"},
             {"outputs", {"buf0"}},
             {"origins", {"relu"}},
             {"aten", {"aten.relu.default"}},
             {"source", "model.py:3"},
             {"vars", {"x0", "x1"}},
             {"sizes", {rows, cols}},
             {"reduce_vars", json::array()},
             {"reduce_sizes", json::array()},
             {"reduction_type", nullptr},
             {"body",
              {{{"id", "v0"},
                {"op", "load"},
                {"args", json::array()},
                {"buffer", "arg0_1"},
                {"dtype", "float16"},
                {"index", idx}},
               {{"id", "v1"}, {"op", "relu"}, {"args", {"v0"}}, {"dtype", "float16"}},
               {{"op", "store"},
                {"args", {"v1"}},
                {"buffer", "buf0"},
                {"index", idx},
                {"mode", nullptr}}}}}}}};
}

// Softmax over the rows of x [rows, cols] fp16 as Inductor splits it into three nodes:
// op0 m = max_r x; op1 s = sum_r exp(x - m); op2 y = exp(x - m) / s. With `chain`, a fourth
// pointwise node op3 z = relu(y) * 2 + x follows (a pointwise chain after the reduction).
inline nlohmann::json softmax_ir(int64_t rows = 64, int64_t cols = 256, bool chain = false) {
  using nlohmann::json;
  auto buf = [](const std::string& n, const std::string& kind, const std::string& dt, json size,
                json stride) {
    return json{{"name", n},        {"kind", kind}, {"dtype", dt},       {"size", size},
                {"stride", stride}, {"offset", 0},  {"view_of", nullptr}};
  };
  auto ld = [](const std::string& id, const std::string& b, const std::string& dt, json idx) {
    return json{{"id", id},    {"op", "load"}, {"args", json::array()},
                {"buffer", b}, {"dtype", dt},  {"index", idx}};
  };
  auto op = [](const std::string& id, const std::string& o, json args, const std::string& dt) {
    return json{{"id", id}, {"op", o}, {"args", args}, {"dtype", dt}};
  };
  auto st = [](const std::string& o, const std::string& v, const std::string& b, json idx) {
    return json{{"op", o}, {"args", {v}}, {"buffer", b}, {"index", idx}, {"mode", nullptr}};
  };
  auto node = [&](const std::string& name, bool red, const std::string& out, json body,
                  const std::string& rt) {
    return json{{"name", name},
                {"kind", red ? "reduction" : "pointwise"},
                {"outputs", {out}},
                {"origins", {"softmax"}},
                {"aten", {"aten._softmax.default"}},
                {"source", "model.py:5"},
                {"vars", red ? json{"x0"} : json{"x0", "x1"}},
                {"sizes", red ? json{rows} : json{rows, cols}},
                {"reduce_vars", red ? json{"r0"} : json::array()},
                {"reduce_sizes", red ? json{cols} : json::array()},
                {"reduction_type", rt.empty() ? json(nullptr) : json(rt)},
                {"body", body}};
  };
  json xr = affine_index("r0 + " + std::to_string(cols) + "*x0", {{"x0", cols}, {"r0", 1}});
  json xp = affine_index(std::to_string(cols) + "*x0 + x1", {{"x0", cols}, {"x1", 1}});
  json row_r = affine_index("x0", {{"x0", 1}, {"r0", 0}});
  json row_p = affine_index("x0", {{"x0", 1}, {"x1", 0}});
  json nodes = json::array();
  nodes.push_back(node("op0", true, "buf0",
                       {ld("v0", "arg0_1", "float16", xr), op("v1", "to_dtype", {"v0"}, "float32"),
                        json{{"id", "v2"},
                             {"op", "reduction"},
                             {"args", {"v1"}},
                             {"dtype", "float32"},
                             {"reduction_type", "max"},
                             {"outputs", 1}},
                        st("store_reduction", "v2", "buf0", row_r)},
                       "max"));
  nodes.push_back(
      node("op1", true, "buf1",
           {ld("v0", "arg0_1", "float16", xr), op("v1", "to_dtype", {"v0"}, "float32"),
            ld("v2", "buf0", "float32", row_r), op("v3", "sub", {"v1", "v2"}, "float32"),
            op("v4", "exp", {"v3"}, "float32"),
            json{{"id", "v5"},
                 {"op", "reduction"},
                 {"args", {"v4"}},
                 {"dtype", "float32"},
                 {"reduction_type", "sum"},
                 {"outputs", 1}},
            st("store_reduction", "v5", "buf1", row_r)},
           "sum"));
  nodes.push_back(
      node("op2", false, "buf2",
           {ld("v0", "arg0_1", "float16", xp), op("v1", "to_dtype", {"v0"}, "float32"),
            ld("v2", "buf0", "float32", row_p), op("v3", "sub", {"v1", "v2"}, "float32"),
            op("v4", "exp", {"v3"}, "float32"), ld("v5", "buf1", "float32", row_p),
            op("v6", "truediv", {"v4", "v5"}, "float32"), op("v7", "to_dtype", {"v6"}, "float16"),
            st("store", "v7", "buf2", xp)},
           ""));
  json buffers = {
      buf("arg0_1", "input", "float16", {rows, cols}, {cols, 1}),
      buf("buf0", "intermediate", "float32", {rows, 1}, {1, rows}),
      buf("buf1", "intermediate", "float32", {rows, 1}, {1, rows}),
      buf("buf2", chain ? "intermediate" : "output", "float16", {rows, cols}, {cols, 1})};
  std::string out = "buf2";
  if (chain) {
    json c2 = {{"id", "v4"},
               {"op", "constant"},
               {"args", json::array()},
               {"dtype", "float32"},
               {"value", 2.0}};
    nodes.push_back(
        node("op3", false, "buf3",
             {ld("v0", "buf2", "float16", xp), op("v1", "to_dtype", {"v0"}, "float32"),
              op("v2", "relu", {"v1"}, "float32"), c2, op("v5", "mul", {"v2", "v4"}, "float32"),
              ld("v6", "arg0_1", "float16", xp), op("v7", "to_dtype", {"v6"}, "float32"),
              op("v8", "add", {"v5", "v7"}, "float32"), op("v9", "to_dtype", {"v8"}, "float16"),
              st("store", "v9", "buf3", xp)},
             ""));
    buffers.push_back(buf("buf3", "output", "float16", {rows, cols}, {cols, 1}));
    out = "buf3";
  }
  return {{"schema", "spyre-sim-ir"},
          {"version", 1},
          {"torch_version", "2.13.0+cpu"},
          {"stage", "scheduler"},
          {"graph", "softmax"},
          {"buffers", buffers},
          {"inputs", {"arg0_1"}},
          {"outputs",
           {{{"buffer", out},
             {"dtype", "float16"},
             {"size", {rows, cols}},
             {"stride", {cols, 1}},
             {"offset", 0}}}},
          {"nodes", nodes}};
}

}  // namespace spyre::compiler::test
