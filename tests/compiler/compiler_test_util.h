#pragma once
// Helpers shared by the compiler tests: golden IR files and a small hand-written IR.
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace spyre::compiler::test {

inline nlohmann::json load_golden(const std::string& name) {
  std::ifstream f(std::string(SPYRE_IR_DIR) + "/" + name + ".json");
  if (!f) throw std::runtime_error("missing golden IR " + name);
  return nlohmann::json::parse(f);
}

inline nlohmann::json affine_index(const std::string& expr, nlohmann::json coeffs, int64_t off = 0) {
  return {{"expr", expr}, {"affine", {{"offset", off}, {"coeffs", std::move(coeffs)}}}};
}

// y[i, j] = relu(x[i, j]) for x [rows, cols] fp16: the smallest valid pointwise graph.
inline nlohmann::json tiny_pointwise_ir(int64_t rows = 4, int64_t cols = 64) {
  using nlohmann::json;
  json idx = affine_index("64*x0 + x1", {{"x0", cols}, {"x1", 1}});
  return {
      {"schema", "spyre-sim-ir"},
      {"version", 1},
      {"torch_version", "2.13.0+cpu"},
      {"stage", "scheduler"},
      {"graph", "graph_0"},
      {"buffers",
       {{{"name", "arg0_1"}, {"kind", "input"}, {"dtype", "float16"}, {"size", {rows, cols}},
         {"stride", {cols, 1}}, {"offset", 0}, {"view_of", nullptr}},
        {{"name", "buf0"}, {"kind", "output"}, {"dtype", "float16"}, {"size", {rows, cols}},
         {"stride", {cols, 1}}, {"offset", 0}, {"view_of", nullptr}}}},
      {"inputs", {"arg0_1"}},
      {"outputs",
       {{{"buffer", "buf0"}, {"dtype", "float16"}, {"size", {rows, cols}}, {"stride", {cols, 1}},
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
          {{{"id", "v0"}, {"op", "load"}, {"args", json::array()}, {"buffer", "arg0_1"},
            {"dtype", "float16"}, {"index", idx}},
           {{"id", "v1"}, {"op", "relu"}, {"args", {"v0"}}, {"dtype", "float16"}},
           {{"op", "store"}, {"args", {"v1"}}, {"buffer", "buf0"}, {"index", idx},
            {"mode", nullptr}}}}}}}};
}

}  // namespace spyre::compiler::test
