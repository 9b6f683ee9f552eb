// Merging loop nodes into one synthetic IR node (see fuse.h).
#include <algorithm>
#include <map>
#include <sstream>

#include "spyre/compiler/fuse.h"

namespace spyre::compiler {
namespace {

bool is_loop(const ir::Node& n) { return n.kind == "pointwise" || n.kind == "reduction"; }

std::vector<int64_t> space_of(const ir::Node& n) {
  std::vector<int64_t> s = n.sizes;
  s.insert(s.end(), n.reduce_sizes.begin(), n.reduce_sizes.end());
  return s;
}

std::string dims(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// The index's text rebuilt from its affine form in the group's variable order, so that equal
// indices of different members compare (and share a load) as equal strings.
std::string canonical_expr(const ir::Affine& a, const std::vector<std::string>& order) {
  std::ostringstream os;
  bool first = true;
  for (const auto& v : order) {
    const int64_t c = a.coeff(v);
    if (c == 0) continue;
    if (!first) os << " + ";
    first = false;
    if (c != 1) os << c << "*";
    os << v;
  }
  if (a.offset != 0 || first) os << (first ? "" : " + ") << a.offset;
  return os.str();
}

bool same_index(const ir::Affine& a, const ir::Affine& b, const std::vector<std::string>& order) {
  if (a.offset != b.offset) return false;
  for (const auto& v : order)
    if (a.coeff(v) != b.coeff(v)) return false;
  return true;
}

}  // namespace

std::shared_ptr<const ir::Node> merge_loop_nodes(const ir::Graph& g,
                                                 const std::vector<const ir::Node*>& members,
                                                 const std::set<std::string>& keep,
                                                 std::string* why) {
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return nullptr;
  };
  if (members.empty()) return fail("no nodes");
  const ir::Node* lead = members[0];
  for (const auto* m : members) {
    if (!is_loop(*m)) return fail("node " + m->name + " is not a pointwise or reduction node");
    if (m->kind == "reduction" && lead->kind != "reduction") lead = m;
  }
  auto out = std::make_shared<ir::Node>();
  ir::Node& n = *out;
  n.kind = lead->kind;
  n.vars = lead->vars;
  n.sizes = lead->sizes;
  n.reduce_vars = lead->reduce_vars;
  n.reduce_sizes = lead->reduce_sizes;
  n.reduction_type = lead->reduction_type;
  std::vector<std::string> order = n.vars;
  order.insert(order.end(), n.reduce_vars.begin(), n.reduce_vars.end());
  const std::vector<int64_t> space = space_of(n);

  struct Stored {
    std::string value;  // the (renamed) SSA value stored
    ir::Affine index;
  };
  std::map<std::string, Stored> stored;      // buffer -> what the group stored there
  std::map<std::string, std::string> alias;  // renamed id -> the id it duplicates
  std::map<std::string, std::string> cse;    // op key -> id
  std::set<std::string> kept_outputs;
  auto resolve = [&](const std::string& a) {
    if (auto it = alias.find(a); it != alias.end()) return it->second;
    const auto dot = a.rfind('.');
    if (dot != std::string::npos)
      if (auto it = alias.find(a.substr(0, dot)); it != alias.end())
        return it->second + a.substr(dot);
    return a;
  };

  for (size_t mi = 0; mi < members.size(); ++mi) {
    const ir::Node& m = *members[mi];
    if (space_of(m) != space)
      return fail("iteration spaces differ: " + m.name + " " + dims(space_of(m)) + ", " +
                  lead->name + " " + dims(space));
    if (m.kind == "reduction" && m.vars.size() != n.vars.size())
      return fail("reductions over different variables: " + m.name + ", " + lead->name);
    std::map<std::string, std::string> rename;  // member var -> group var
    std::vector<std::string> mv = m.vars;
    mv.insert(mv.end(), m.reduce_vars.begin(), m.reduce_vars.end());
    for (size_t i = 0; i < mv.size(); ++i) rename[mv[i]] = order[i];
    const std::string tag = "m" + std::to_string(mi) + "_";

    for (const auto& op0 : m.body) {
      if (!op0.body.empty()) return fail("node " + m.name + " has a masked sub-block");
      ir::Op op = op0;
      if (!op.id.empty()) op.id = tag + op.id;
      for (auto& a : op.args) a = resolve(tag + a);
      if (op.index) {
        if (!op.index->affine)
          return fail("node " + m.name + ": index '" + op.index->expr + "' is not affine");
        ir::Affine af;
        af.offset = op.index->affine->offset;
        for (const auto& [v, c] : op.index->affine->coeffs)
          if (c != 0) af.coeffs[rename.count(v) ? rename[v] : v] = c;
        op.index->affine = af;
        op.index->expr = canonical_expr(af, order);
      }
      const bool is_store = op.op == "store" || op.op == "store_reduction";
      if (op.op == "load") {
        const ir::Buffer& sb = g.storage_of(op.buffer);
        auto it = stored.find(sb.name);
        if (it != stored.end()) {
          if (op.buffer != sb.name)
            return fail(m.name + " reads a view of " + sb.name + ", written in the group");
          if (!same_index(*op.index->affine, it->second.index, order))
            return fail(m.name + " reads " + sb.name + " at '" + op.index->expr +
                        "', written at '" + canonical_expr(it->second.index, order) + "'");
          ir::Op cv;
          cv.id = op.id;
          cv.op = "to_dtype";
          cv.args = {it->second.value};
          cv.dtype = sb.dtype;
          op = cv;
        }
      }
      if (is_store) {
        const ir::Buffer& sb = g.storage_of(op.buffer);
        if (op.buffer != sb.name) return fail(m.name + " stores into a view of " + sb.name);
        stored[sb.name] = {op.args.at(0), *op.index->affine};
        if (!keep.count(sb.name)) continue;  // lives only in LX
        kept_outputs.insert(sb.name);
        n.body.push_back(op);
        continue;
      }
      // Common subexpressions: an op equal to an earlier one (same operands) is that one.
      std::ostringstream key;
      key << op.op << "|" << (op.dtype ? isa::dtype_name(*op.dtype) : "") << "|" << op.buffer << "|"
          << (op.index ? op.index->expr : "") << "|" << op.value.dump() << "|" << op.reduction_type
          << "|" << op.outputs << "|" << op.mode;
      for (const auto& a : op.args) key << "|" << a;
      if (auto it = cse.find(key.str()); it != cse.end()) {
        alias[op.id] = it->second;
        continue;
      }
      cse[key.str()] = op.id;
      n.body.push_back(op);
    }
    for (const auto& o : m.outputs)
      if (kept_outputs.count(g.storage_of(o).name)) n.outputs.push_back(o);
    n.origins.insert(n.origins.end(), m.origins.begin(), m.origins.end());
    for (const auto& a : m.aten)
      if (std::find(n.aten.begin(), n.aten.end(), a) == n.aten.end()) n.aten.push_back(a);
    if (n.source.empty()) n.source = m.source;
    n.name += (mi ? "+" : "") + m.name;
  }
  if (n.outputs.empty()) return fail("the group stores nothing");
  return out;
}

}  // namespace spyre::compiler
