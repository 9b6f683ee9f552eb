// IR building blocks for the convolution tests (conv_test.cpp, conv_epilogue_test.cpp): fp16
// buffers and views, the graph header, and one extern_kernels.convolution node, in the shapes
// Inductor captures (SCHEMA.md).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace spyre::compiler::test {

// Strides of a channels-last [N, C, H, W] tensor.
inline std::vector<int64_t> cl_stride(const std::vector<int64_t>& s) {
  return {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
}

inline nlohmann::json fp16_buffer(const std::string& name, const std::string& kind,
                                  const std::vector<int64_t>& size,
                                  const std::vector<int64_t>& stride) {
  return {{"name", name},     {"kind", kind}, {"dtype", "float16"}, {"size", size},
          {"stride", stride}, {"offset", 0},  {"view_of", nullptr}};
}

inline nlohmann::json fp16_view(const std::string& name, const std::vector<int64_t>& size,
                                const std::vector<int64_t>& stride) {
  return {
      {"buffer", name}, {"dtype", "float16"}, {"offset", 0}, {"size", size}, {"stride", stride}};
}

// The graph's header fields; buffers, inputs, outputs and nodes are the caller's.
inline nlohmann::json graph_header(const std::string& graph) {
  return {{"schema", "spyre-sim-ir"},
          {"version", 1},
          {"stage", "scheduler"},
          {"graph", graph},
          {"torch_version", "test"}};
}

// Node op0: extern_kernels.convolution of `inputs` (x, weight[, bias] views) into buffer
// `out` of shape `os`, channels-last.
inline nlohmann::json conv_node(const nlohmann::json& inputs, const std::string& out,
                                const std::vector<int64_t>& os, std::array<int64_t, 2> stride,
                                std::array<int64_t, 2> pad, std::array<int64_t, 2> dil,
                                int64_t groups) {
  return {
      {"name", "op0"},
      {"kind", "extern"},
      {"kernel", "extern_kernels.convolution"},
      {"aten", {"aten.convolution.default"}},
      {"op_overload", "aten.convolution.default"},
      {"origins", {"convolution"}},
      {"source", nullptr},
      {"constant_args", nlohmann::json::array()},
      {"inputs", inputs},
      {"outputs", {out}},
      {"layout", {{"dtype", "float16"}, {"offset", 0}, {"size", os}, {"stride", cl_stride(os)}}},
      {"kwargs",
       {{"stride", stride},
        {"padding", pad},
        {"dilation", dil},
        {"groups", groups},
        {"transposed", false},
        {"output_padding", {0, 0}}}}};
}

}  // namespace spyre::compiler::test
