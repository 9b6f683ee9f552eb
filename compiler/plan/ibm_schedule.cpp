// IBM's schedule (ibm_schedule.h): every op of a pointwise kernel as its own step through
// memory.
#include "spyre/compiler/ibm_schedule.h"

#include <functional>
#include <map>
#include <set>

#include "spyre/compiler/graph_edit.h"

namespace spyre::compiler {
namespace {

// Ops that ride with the op using them rather than being a step of their own.
bool rides_along(const std::string& op) {
  return op == "load" || op == "constant" || op == "index_expr" || op == "to_dtype";
}

bool is_store(const std::string& op) { return op == "store" || op == "store_reduction"; }

}  // namespace

nlohmann::json OpSplit::to_json() const {
  return {{"node", node}, {"nodes", nodes}, {"buffers", buffers}};
}

std::vector<OpSplit> split_ops_through_dram(ir::Graph& g) {
  std::vector<OpSplit> done;
  graph_edit::Names names(g);
  std::vector<ir::Node> out;
  for (auto& n : g.nodes) {
    if (n.kind != "pointwise" || n.one_op || !graph_edit::indices_affine(n.body)) {
      out.push_back(std::move(n));
      continue;
    }
    std::map<std::string, size_t> at;  // value id -> body position
    for (size_t i = 0; i < n.body.size(); ++i)
      if (!n.body[i].id.empty()) at[n.body[i].id] = i;
    // The computing op a value comes from, through dtype conversions ("" for loads etc.).
    auto source = [&](std::string id) {
      for (;;) {
        auto it = at.find(id);
        if (it == at.end()) return std::string();
        const ir::Op& op = n.body[it->second];
        if (op.op == "to_dtype" && op.args.size() == 1) {
          id = op.args[0];
          continue;
        }
        return rides_along(op.op) ? std::string() : id;
      }
    };
    // Cuts: computing ops whose value another computing op uses.
    std::set<std::string> cuts;
    bool typed = true;
    for (const auto& op : n.body) {
      if (rides_along(op.op) || is_store(op.op)) continue;
      for (const auto& a : op.args) {
        const std::string src = source(a);
        if (src.empty()) continue;
        cuts.insert(src);
        if (!n.body[at[src]].dtype) typed = false;
      }
    }
    if (cuts.empty() || !typed) {
      out.push_back(std::move(n));
      continue;
    }
    ir::Affine row_major;
    const std::vector<int64_t> st = graph_edit::contiguous(n.sizes, 1);
    for (size_t i = 0; i < n.vars.size(); ++i) row_major.coeffs[n.vars[i]] = st[i];
    std::map<std::string, std::string> buffer_of;  // cut value id -> its buffer
    OpSplit rec;
    rec.node = n.name;
    // The ops a step needs: everything its roots use, back to the loads, with earlier cuts
    // read from their buffers.
    auto step_body = [&](const std::vector<std::string>& roots, const std::string& self,
                         bool keep_stores) {
      std::set<std::string> need;
      std::vector<std::string> stack = roots;
      while (!stack.empty()) {
        const std::string id = stack.back();
        stack.pop_back();
        if (!need.insert(id).second) continue;
        if (id != self && cuts.count(id)) continue;  // loaded, not recomputed
        auto it = at.find(id);
        if (it == at.end()) continue;
        for (const auto& a : n.body[it->second].args) stack.push_back(a);
      }
      std::vector<ir::Op> body;
      for (const auto& op : n.body) {
        if (is_store(op.op)) {
          if (keep_stores) body.push_back(op);
          continue;
        }
        if (!need.count(op.id)) continue;
        if (op.id != self && cuts.count(op.id)) {
          ir::Op load;
          load.id = op.id;
          load.op = "load";
          load.buffer = buffer_of.at(op.id);
          load.dtype = op.dtype;
          load.index = graph_edit::index_of(row_major);
          body.push_back(load);
          continue;
        }
        body.push_back(op);
      }
      return body;
    };
    int k = 0;
    for (const auto& op : n.body) {
      if (!cuts.count(op.id)) continue;
      ir::Buffer b;
      b.name = names.buffer(n.name + "_step" + std::to_string(k));
      b.kind = "intermediate";
      b.dtype = *op.dtype;
      b.size = n.sizes;
      b.stride = st;
      g.buffers.push_back(b);
      ir::Node s = n;
      s.name = names.node(n.name + "_" + std::to_string(k));
      s.outputs = {b.name};
      s.keep_space = n.vars.size() == 2;
      s.body = step_body({op.id}, op.id, false);
      ir::Op store;
      store.op = "store";
      store.args = {op.id};
      store.buffer = b.name;
      store.index = graph_edit::index_of(row_major);
      s.body.push_back(store);
      buffer_of[op.id] = b.name;
      rec.nodes.push_back(s.name);
      rec.buffers.push_back(b.name);
      out.push_back(std::move(s));
      ++k;
    }
    std::vector<std::string> roots;
    for (const auto& op : n.body)
      if (is_store(op.op)) roots.insert(roots.end(), op.args.begin(), op.args.end());
    n.body = step_body(roots, "", true);
    n.keep_space = n.vars.size() == 2;
    rec.nodes.push_back(n.name);
    out.push_back(std::move(n));
    done.push_back(std::move(rec));
  }
  g.nodes = std::move(out);
  return done;
}

std::vector<std::string> store_at_device_dtype(ir::Graph& g) {
  // The graph's one 16-bit floating-point type, from what the user's tensors are.
  std::set<isa::DType> user;
  for (const auto& b : g.buffers) {
    const bool floating =
        b.dtype == isa::DType::F16 || b.dtype == isa::DType::BF16 || b.dtype == isa::DType::F32;
    if (floating && !b.tuple && b.kind != "intermediate" && b.kind != "view") user.insert(b.dtype);
  }
  if (user.size() != 1 || *user.begin() == isa::DType::F32) return {};
  const isa::DType device = *user.begin();
  // Kept fp32: what an extern or a view touches or a masked sub-block reads; accumulations,
  // whose magnitude the inputs do not bound (a sum's or a Welford M2's store_reduction, row
  // adds' partials); they are a value or a few per row.
  std::set<std::string> keep;
  for (const auto& b : g.buffers)
    if (!b.view_of.empty()) keep.insert(b.view_of);
  std::function<void(const std::vector<ir::Op>&, bool)> walk = [&](const auto& body, bool sub) {
    for (const auto& op : body) {
      if (sub && !op.buffer.empty()) keep.insert(op.buffer);
      walk(op.body, true);
    }
  };
  for (const auto& n : g.nodes) {
    if (n.one_op) keep.insert(n.outputs.begin(), n.outputs.end());
    if (n.kind == "pointwise" || n.kind == "reduction") {
      walk(n.body, false);
      std::string type;
      for (const auto& op : n.body)
        if (op.op == "reduction") type = op.reduction_type;
      for (const auto& op : n.body)
        if (op.op == "store_reduction" && type != "max" && type != "min" && type != "any")
          keep.insert(op.buffer);
      continue;
    }
    for (const auto& v : n.inputs) keep.insert(v.buffer);
    keep.insert(n.outputs.begin(), n.outputs.end());
  }
  std::set<std::string> retyped;
  std::vector<std::string> names;
  for (auto& b : g.buffers) {
    if (b.kind != "intermediate" || b.dtype != isa::DType::F32 || keep.count(b.name)) continue;
    b.dtype = device;
    retyped.insert(b.name);
    names.push_back(b.name);
  }
  // Loads read the stored type and the ops convert (tile_program.cpp); stores convert to it.
  for (auto& n : g.nodes)
    for (auto& op : n.body)
      if (op.op == "load" && retyped.count(op.buffer)) op.dtype = device;
  return names;
}

}  // namespace spyre::compiler
