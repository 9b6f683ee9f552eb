#pragma once
// Selection ops that Inductor leaves as fallback kernels (no lowering of its own), run on the
// SFP with the ordinary ISA: aten.topk (values and int64 indices, largest/smallest, any dim),
// aten.sort / sort.stable, aten.kthvalue, aten.median.dim and aten.median (all elements; the
// lower median, torch's rule for even counts). No sort instruction:
// a row's elements are taken one per round in torch's order (NaN first for largest, last for
// smallest; equal values by ascending index), each round a masked rmax/rmin, an argmax of
// the matching candidates and a one-hot mask that removes the taken column (lower/select.cpp).
#include <string>
#include <vector>

#include "spyre/compiler/ir.h"

namespace spyre::compiler {

struct Kernel;

// True when a fallback node calling `op_overload` (e.g. "aten.topk.default") has a lowering
// here; its MultiOutput nodes are then views of the tuple's elements, not kernels.
bool select_lowers(const std::string& op_overload);

// Whether `v` walks as rows of its dim `dim` (every other dim collapses into one row dim of
// uniform stride): what lower_select needs of its input and of the outputs that keep the dim.
bool select_rows_collapse(const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                          int64_t dim);

// A selection along a dim its tensors do not walk as rows (topk over dim 1 of a contiguous
// [A, N, B]) gets copies: the input permuted so the dim is last, contiguous, and each output
// that keeps the dim written in that order then copied back (divide/select_copy.cpp). Applied
// before fusion; returns {node, copy_node, buffer} per copy, in node order.
struct ColumnReduction;
std::vector<ColumnReduction> copy_select_operands(ir::Graph& g);

// Lowers the fallback node k.node; the MultiOutput nodes that read its tuple name the output
// buffers (tuple element 0: values, 1: indices). Throws spyre::Error naming the node and its
// source line for what it does not accept (non-float inputs, layouts it cannot walk, nested
// tuples).
void lower_select(Kernel& k);

}  // namespace spyre::compiler
