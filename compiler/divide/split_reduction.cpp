// Split reductions (split_reduction.h): a reduction over few rows becomes a partial reduction
// over P chunks of its axis plus a final reduction over the partials.
#include "spyre/compiler/split_reduction.h"

#include <set>

#include "spyre/compiler/graph_edit.h"

namespace spyre::compiler {

using graph_edit::contiguous;
using graph_edit::index_of;
using graph_edit::indices_affine;
using graph_edit::unique;

namespace {

bool splittable_type(const std::string& rt) {
  static const std::set<std::string> kinds = {"sum", "max", "min", "prod", "any"};
  return kinds.count(rt) > 0;
}

}  // namespace

nlohmann::json SplitReduction::to_json() const {
  return {{"node", node},
          {"partial_node", partial_node},
          {"partial_buffer", partial_buffer},
          {"rows", rows},
          {"axis", axis},
          {"parts", parts},
          {"chunk", axis / parts}};
}

std::vector<SplitReduction> split_reductions(ir::Graph& g, const arch::ArchConfig& cfg,
                                             const SplitReductionOptions& opts) {
  std::vector<SplitReduction> done;
  if (!opts.enabled) return done;
  const int64_t workers = cfg.cores * cfg.corelets;
  graph_edit::Names names(g);
  std::vector<ir::Node> out;
  for (auto& n : g.nodes) {
    int64_t rows = 1;
    for (auto s : n.sizes) rows *= s;
    const ir::Op* red = nullptr;
    const ir::Op* store = nullptr;
    int reductions = 0, stores = 0;
    for (const auto& op : n.body) {
      if (op.op == "reduction") ++reductions, red = &op;
      if (op.op == "store_reduction") ++stores, store = &op;
    }
    bool ok = n.kind == "reduction" && n.reduce_vars.size() == 1 && reductions == 1 &&
              stores == 1 && splittable_type(red->reduction_type) && store->args.size() == 1 &&
              store->args[0] == red->id && red->outputs == 1 && indices_affine(n.body) &&
              rows >= 1 && rows < workers;
    const int64_t axis = ok ? n.reduce_sizes[0] : 0;
    int64_t parts = 1;
    for (int64_t c : kChunks)
      if (ok && axis % c == 0 && axis / c >= 2 && rows * (axis / c) >= workers) {
        parts = axis / c;
        break;
      }
    if (!ok || parts < 2) {
      out.push_back(std::move(n));
      continue;
    }
    const std::string r = n.reduce_vars[0];
    std::set<std::string> vars(n.vars.begin(), n.vars.end());
    vars.insert(r);
    const std::string xs = unique("x_split", vars);
    const int64_t chunk = axis / parts;
    const isa::DType out_dt = red->dtype.value_or(isa::DType::F32);
    const bool is_float = out_dt == isa::DType::F16 || out_dt == isa::DType::BF16 ||
                          out_dt == isa::DType::F32 || out_dt == isa::DType::F8E4M3;
    const isa::DType part_dt = is_float ? isa::DType::F32 : out_dt;

    SplitReduction rec;
    rec.node = n.name;
    rec.partial_node = names.node(n.name + "_part");
    rec.partial_buffer = names.buffer(store->buffer + "_partials");
    rec.rows = rows;
    rec.axis = axis;
    rec.parts = parts;

    std::vector<int64_t> partial_size = n.sizes;
    partial_size.push_back(parts);
    graph_edit::add_intermediate(g, rec.partial_buffer, part_dt, partial_size);

    // The partial node: every index's r -> xs * chunk + r; the reduction in the partials'
    // dtype, stored at [rows..., xs].
    ir::Node a = n;
    a.name = rec.partial_node;
    a.outputs = {rec.partial_buffer};
    a.vars.push_back(xs);
    a.sizes.push_back(parts);
    a.reduce_sizes = {chunk};
    const std::vector<int64_t> pst = contiguous(n.sizes, parts);
    for (auto& op : a.body) {
      if (op.index) {
        ir::Affine af = *op.index->affine;
        if (af.coeff(r) != 0) af.coeffs[xs] = af.coeff(r) * chunk;
        op.index = index_of(af);
      }
      if (op.op == "reduction") op.dtype = part_dt;
      if (op.op == "store_reduction") {
        op.buffer = rec.partial_buffer;
        ir::Affine af;
        for (size_t i = 0; i < n.vars.size(); ++i) af.coeffs[n.vars[i]] = pst[i];
        af.coeffs[xs] = 1;
        op.index = index_of(af);
      }
    }
    // The final node: load the partials, reduce them, store as the original did.
    ir::Node b = n;
    b.reduce_sizes = {parts};
    ir::Op load;
    load.id = unique("v_partial", [&] {
      std::set<std::string> ids;
      for (const auto& op : n.body) ids.insert(op.id);
      return ids;
    }());
    load.op = "load";
    load.buffer = rec.partial_buffer;
    load.dtype = part_dt;
    ir::Affine lf;
    for (size_t i = 0; i < n.vars.size(); ++i) lf.coeffs[n.vars[i]] = pst[i];
    lf.coeffs[r] = 1;
    load.index = index_of(lf);
    ir::Op reduce = *red;
    reduce.args = {load.id};
    b.body = {load, reduce, *store};
    out.push_back(std::move(a));
    out.push_back(std::move(b));
    done.push_back(rec);
  }
  g.nodes = std::move(out);
  return done;
}

}  // namespace spyre::compiler
