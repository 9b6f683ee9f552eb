#pragma once
// Column reductions (work division of a reduction whose reduced variable is the strided one,
// `x.sum(dim=0)` of a row-major [R, C]): the loop lowering reduces along a tile's columns, so
// such a node reads each kept column's elements one stride apart, DMA runs of a few bytes
// (a 2048 x 512 fp16 column sum ran at 11 GB/s). This pass puts a layout copy in front of it:
// a pointwise node writes the input transposed into a new intermediate [C, R] (lowered as a
// blocked transpose, transpose.h), and the reduction reads that row by row.
//
// Applied to reduction nodes with one kept and one reduced variable, a single load whose index
// steps by 1 along the kept variable and by more than 1 along the reduced one, the reduction
// and its store (nothing else), when the reduced axis has at least 64 elements and the kept
// one at least 8.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/compiler/ir.h"

namespace spyre::compiler {

struct ColumnReduction {
  std::string node, copy_node, buffer;
  nlohmann::json to_json() const;
};

// Rewrites `g` in place (the copy node comes just before its reduction); returns what it
// rewrote, in node order.
std::vector<ColumnReduction> transpose_column_reductions(ir::Graph& g);

}  // namespace spyre::compiler
