#pragma once
// The IR of `torch.mm(a, b)` (fp16, row-major) as Inductor captures it, with the structure of
// tests/data/ir/matmul.json, for benchmarks and tests that need GEMMs of any size without torch.
// b_transposed: B is a linear layer's weight W [N, K] read as W^T (stride (1, K)), C = A @ W^T.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace spyre::bench {

inline nlohmann::json mm_ir(int64_t m, int64_t n, int64_t k, const std::string& source,
                            bool b_transposed = false) {
  using nlohmann::json;
  auto tensor = [](const std::string& buffer, int64_t rows, int64_t cols, bool t = false) {
    return json{{"buffer", buffer},
                {"dtype", "float16"},
                {"offset", 0},
                {"size", {rows, cols}},
                {"stride", t ? json{1, rows} : json{cols, 1}}};
  };
  auto buffer = [](const std::string& name, const std::string& kind, int64_t rows, int64_t cols) {
    return json{{"dtype", "float16"},   {"kind", kind},        {"name", name},      {"offset", 0},
                {"size", {rows, cols}}, {"stride", {cols, 1}}, {"view_of", nullptr}};
  };
  json layout = {{"dtype", "float16"}, {"offset", 0}, {"size", {m, n}}, {"stride", {n, 1}}};
  json node = {{"aten", {"aten.mm.default"}},
               {"constant_args", json::array()},
               {"inputs", {tensor("arg0_1", m, k), tensor("arg1_1", k, n, b_transposed)}},
               {"kernel", "extern_kernels.mm"},
               {"kind", "extern"},
               {"kwargs", json::object()},
               {"layout", layout},
               {"name", "op0"},
               {"op_overload", "aten.mm.out"},
               {"origins", {"mm"}},
               {"outputs", {"buf0"}},
               {"source", source}};
  return {{"buffers",
           {buffer("arg0_1", "input", m, k),
            b_transposed ? buffer("arg1_1", "input", n, k) : buffer("arg1_1", "input", k, n),
            buffer("buf0", "output", m, n)}},
          {"graph", "graph_0"},
          {"inputs", {"arg0_1", "arg1_1"}},
          {"nodes", {node}},
          {"outputs", {tensor("buf0", m, n)}},
          {"schema", "spyre-sim-ir"},
          {"stage", "scheduler"},
          {"torch_version", "2.13.0+cpu"},
          {"version", 1}};
}

}  // namespace spyre::bench
