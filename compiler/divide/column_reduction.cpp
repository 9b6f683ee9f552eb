// Column reductions through a transposed copy (column_reduction.h).
#include "spyre/compiler/column_reduction.h"

#include "spyre/compiler/graph_edit.h"

namespace spyre::compiler {

nlohmann::json ColumnReduction::to_json() const {
  return {{"node", node}, {"copy_node", copy_node}, {"buffer", buffer}};
}

std::vector<ColumnReduction> transpose_column_reductions(ir::Graph& g) {
  std::vector<ColumnReduction> done;
  graph_edit::Names names(g);
  std::vector<ir::Node> out;
  for (auto& n : g.nodes) {
    ir::Op* load = nullptr;
    int loads = 0, others = 0;
    for (auto& op : n.body) {
      if (op.op == "load")
        ++loads, load = &op;
      else if (op.op != "reduction" && op.op != "store_reduction" && op.op != "to_dtype")
        ++others;
    }
    const bool shape = n.kind == "reduction" && n.vars.size() == 1 && n.reduce_vars.size() == 1 &&
                       loads == 1 && others == 0 && graph_edit::indices_affine(n.body) &&
                       load->index && load->dtype;
    const std::string x = shape ? n.vars[0] : "", r = shape ? n.reduce_vars[0] : "";
    const int64_t X = shape ? n.sizes[0] : 0, R = shape ? n.reduce_sizes[0] : 0;
    if (!shape || load->index->affine->coeff(x) != 1 || load->index->affine->coeff(r) <= 1 ||
        R < 64 || X < 8) {
      out.push_back(std::move(n));
      continue;
    }
    ColumnReduction rec;
    rec.node = n.name;
    rec.buffer = names.buffer(n.name + "_columns");
    rec.copy_node = names.node(n.name + "_transpose");

    graph_edit::add_intermediate(g, rec.buffer, *load->dtype, {X, R});

    // The copy: t[x, r] = source at the load's own index, over (x0 = x, x1 = r).
    ir::Node c;
    c.name = rec.copy_node;
    c.kind = "pointwise";
    c.outputs = {rec.buffer};
    c.origins = n.origins;
    c.aten = n.aten;
    c.source = n.source;
    c.vars = {"x0", "x1"};
    c.sizes = {X, R};
    ir::Op ld = *load;
    ir::Affine src = *load->index->affine;
    ir::Affine at;
    at.offset = src.offset;
    at.coeffs = {{"x0", src.coeff(x)}, {"x1", src.coeff(r)}};
    ld.index = graph_edit::index_of(at);
    ir::Op st;
    st.op = "store";
    st.args = {ld.id};
    st.buffer = rec.buffer;
    ir::Affine dst;
    dst.coeffs = {{"x0", R}, {"x1", 1}};
    st.index = graph_edit::index_of(dst);
    c.body = {ld, st};
    out.push_back(std::move(c));

    // The reduction reads t row by row.
    load->buffer = rec.buffer;
    ir::Affine rows;
    rows.coeffs = {{x, R}, {r, 1}};
    load->index = graph_edit::index_of(rows);
    out.push_back(std::move(n));
    done.push_back(rec);
  }
  g.nodes = std::move(out);
  return done;
}

}  // namespace spyre::compiler
