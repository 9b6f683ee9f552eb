#pragma once
// A matmul's A operand read column-major (`x.t() @ y`, `a.transpose(1, 2) @ b`: A's column
// stride is not 1). The matmul lowering streams A row by row (matmul.h), so this pass puts a
// layout copy in front of such a matmul: a pointwise node writes A row-major into a new
// intermediate (lowered as a blocked transpose, transpose.h), and the matmul reads that.
// (B is read by rows or by columns; Inductor itself copies a B with no unit stride.)
// Applied to mm, bmm and addmm nodes before fusion; the report lists each copy
// (`operand_copies`: the matmul node, the copy node, the new buffer).
#include <vector>

#include "spyre/compiler/column_reduction.h"
#include "spyre/compiler/ir.h"

namespace spyre::compiler {

// Rewrites `g` in place (each copy node comes just before its matmul); returns what it
// rewrote, in node order, as {node: the matmul, copy_node, buffer}.
std::vector<ColumnReduction> copy_transposed_matmul_a(ir::Graph& g);

}  // namespace spyre::compiler
