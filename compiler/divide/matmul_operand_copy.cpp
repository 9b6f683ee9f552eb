// A row-major copy of a matmul's column-major A operand (matmul_operand_copy.h).
#include "spyre/compiler/matmul_operand_copy.h"

#include <string>

#include "spyre/compiler/graph_edit.h"

namespace spyre::compiler {
namespace {

bool is_matmul(const ir::Node& n) {
  return n.kind == "extern" &&
         (n.kernel == "extern_kernels.mm" || n.kernel == "extern_kernels.bmm" ||
          n.kernel == "extern_kernels.addmm");
}

// Stride of dim `d` from the end, 0 for a dim of size 1 (any stride reads it the same).
int64_t stride_from_end(const ir::TensorView& t, size_t d) {
  const size_t i = t.size.size() - 1 - d;
  return t.size[i] == 1 ? 0 : t.stride[i];
}

// A is read row by row: its column stride must be 1.
bool a_needs_copy(const ir::TensorView& t) {
  if (t.size.size() < 2) return false;
  const int64_t s1 = stride_from_end(t, 0);
  return s1 != 1 && s1 != 0;
}

}  // namespace

std::vector<ColumnReduction> copy_transposed_matmul_a(ir::Graph& g) {
  std::vector<ColumnReduction> done;
  graph_edit::Names names(g);
  std::vector<ir::Node> out;
  for (auto& n : g.nodes) {
    if (!is_matmul(n)) {
      out.push_back(std::move(n));
      continue;
    }
    const size_t ia = n.kernel == "extern_kernels.addmm" ? 1 : 0;
    if (ia < n.inputs.size() && !n.inputs[ia].buffer.empty() && a_needs_copy(n.inputs[ia])) {
      ir::TensorView& t = n.inputs[ia];
      const ColumnReduction rec{
          n.name, names.node(n.name + "_a_copy"), names.buffer(n.name + "_a_rows"), {}, {}};
      const auto stride = graph_edit::add_intermediate(g, rec.buffer, t.dtype, t.size);
      out.push_back(graph_edit::copy_node(n, rec.copy_node, t, {}, rec.buffer, stride));
      t.buffer = rec.buffer, t.stride = stride, t.offset = 0;
      done.push_back(rec);
    }
    out.push_back(std::move(n));
  }
  g.nodes = std::move(out);
  return done;
}

}  // namespace spyre::compiler
