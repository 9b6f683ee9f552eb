// Row-major copies around a selection whose dim its tensors do not walk as rows (select.h).
#include <map>
#include <string>

#include "spyre/compiler/column_reduction.h"
#include "spyre/compiler/graph_edit.h"
#include "spyre/compiler/select.h"

namespace spyre::compiler {
namespace {

// Where each overload keeps its `dim` argument: the position among the non-tensor arguments
// (constant_args) and its keyword name (median.default has none: it selects over everything).
const std::map<std::string, size_t>& dim_positions() {
  static const std::map<std::string, size_t> m = {{"aten.topk.default", 1},
                                                  {"aten.sort.default", 0},
                                                  {"aten.sort.stable", 1},
                                                  {"aten.kthvalue.default", 1},
                                                  {"aten.median.dim", 0}};
  return m;
}

// The node's dim argument (where it is, and its value; -1 when not given).
nlohmann::json* dim_arg(ir::Node& n) {
  if (n.kwargs.is_object() && n.kwargs.contains("dim")) return &n.kwargs["dim"];
  const size_t pos = dim_positions().at(n.op_overload);
  if (n.constant_args.is_array() && pos < n.constant_args.size()) return &n.constant_args[pos];
  return nullptr;
}

}  // namespace

std::vector<ColumnReduction> copy_select_operands(ir::Graph& g) {
  std::vector<ColumnReduction> done;
  graph_edit::Names names(g);
  std::vector<ir::Node> out;
  std::map<std::string, std::vector<ir::Node>> after;  // tuple buffer -> copies back
  for (auto& n : g.nodes) {
    if (n.kind == "fallback" && n.kernel == "MultiOutput") {
      out.push_back(std::move(n));
      continue;
    }
    const bool select = n.kind == "fallback" && dim_positions().count(n.op_overload) &&
                        n.inputs.size() == 1 && n.outputs.size() == 1;
    nlohmann::json* arg = select ? dim_arg(n) : nullptr;
    if (!select || (arg && !arg->is_number_integer())) {
      out.push_back(std::move(n));
      continue;
    }
    ir::TensorView& in = n.inputs[0];
    const auto rank = static_cast<int64_t>(in.size.size());
    int64_t dim = arg ? arg->get<int64_t>() : -1;
    if (dim < 0) dim += rank;
    if (rank < 2 || dim < 0 || dim >= rank) {
      out.push_back(std::move(n));
      continue;
    }
    // The outputs that keep the dim (MultiOutput nodes of the tuple, same rank).
    std::vector<ir::Node*> kept;
    bool walks = select_rows_collapse(in.size, in.stride, dim);
    for (auto& m : g.nodes)
      if (m.kernel == "MultiOutput" && !m.inputs.empty() && m.inputs[0].buffer == n.outputs[0] &&
          static_cast<int64_t>(m.layout.size.size()) == rank) {
        kept.push_back(&m);
        walks = walks && select_rows_collapse(m.layout.size, m.layout.stride, dim);
      }
    bool offsets = true;  // an output view at an offset stays as it is (refused by the lowering)
    for (const ir::Node* m : kept) offsets = offsets && m->layout.offset == 0;
    if (walks || !offsets) {
      out.push_back(std::move(n));
      continue;
    }
    std::vector<size_t> perm;  // every other dim in order, then the selected one
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim) perm.push_back(static_cast<size_t>(d));
    perm.push_back(static_cast<size_t>(dim));
    auto permuted = [&](const std::vector<int64_t>& v) {
      std::vector<int64_t> p;
      for (size_t d : perm) p.push_back(v[d]);
      return p;
    };

    const ColumnReduction rec{
        n.name, names.node(n.name + "_in_copy"), names.buffer(n.name + "_in_rows"), {}, {}};
    const auto stride = graph_edit::add_intermediate(g, rec.buffer, in.dtype, permuted(in.size));
    out.push_back(graph_edit::copy_node(n, rec.copy_node, in, perm, rec.buffer, stride));
    done.push_back(rec);
    in.buffer = rec.buffer, in.size = permuted(in.size), in.stride = stride, in.offset = 0;
    if (arg)
      *arg = rank - 1;
    else
      n.kwargs["dim"] = rank - 1;

    for (ir::Node* m : kept) {  // written in the permuted order, then copied back
      const std::string orig = m->outputs.at(0);
      const ir::TensorView layout = m->layout;
      const ColumnReduction back{
          n.name, names.node(orig + "_copy_back"), names.buffer(orig + "_rows"), {}, {}};
      ir::TensorView t = layout;
      t.buffer = back.buffer, t.size = permuted(layout.size);
      t.stride = graph_edit::add_intermediate(g, back.buffer, layout.dtype, t.size);
      m->outputs[0] = back.buffer;
      m->layout = t;
      after[n.outputs[0]].push_back(
          graph_edit::copy_node(n, back.copy_node, t, {}, orig, permuted(layout.stride)));
      done.push_back(back);
    }
    out.push_back(std::move(n));
  }
  // The copies back come after the last MultiOutput of their tuple.
  std::vector<ir::Node> ordered;
  for (size_t i = 0; i < out.size(); ++i) {
    ordered.push_back(std::move(out[i]));
    const ir::Node& m = ordered.back();
    if (m.kernel != "MultiOutput" || m.inputs.empty()) continue;
    const std::string tuple = m.inputs[0].buffer;
    const bool last = i + 1 == out.size() || out[i + 1].kernel != "MultiOutput" ||
                      out[i + 1].inputs.empty() || out[i + 1].inputs[0].buffer != tuple;
    if (last && after.count(tuple)) {
      for (auto& c : after[tuple]) ordered.push_back(std::move(c));
      after.erase(tuple);
    }
  }
  g.nodes = std::move(ordered);
  return done;
}

}  // namespace spyre::compiler
