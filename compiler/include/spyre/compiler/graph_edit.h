#pragma once
// Helpers of the passes that rewrite the IR graph before fusion (split_reduction.h,
// ibm_schedule.h): fresh names, affine index text, row-major strides.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "spyre/compiler/ir.h"

namespace spyre::compiler::graph_edit {

// `base`, or `base1`, `base2`, ... : the first that is not in `taken`.
inline std::string unique(const std::string& base, const std::set<std::string>& taken) {
  std::string s = base;
  for (int i = 1; taken.count(s); ++i) s = base + std::to_string(i);
  return s;
}

// `512*x0 + x1` (+ offset), as the capture writes affine indices.
inline std::string affine_text(const ir::Affine& a) {
  std::string s;
  for (const auto& [var, c] : a.coeffs) {
    if (c == 0) continue;
    if (!s.empty()) s += " + ";
    s += (c == 1 ? "" : std::to_string(c) + "*") + var;
  }
  if (a.offset != 0 || s.empty()) s += (s.empty() ? "" : " + ") + std::to_string(a.offset);
  return s;
}

inline ir::Index index_of(const ir::Affine& a) { return ir::Index{affine_text(a), a}; }

// Fresh buffer and node names for a pass that adds both to `g`.
class Names {
 public:
  explicit Names(const ir::Graph& g) {
    for (const auto& b : g.buffers) buffers_.insert(b.name);
    for (const auto& n : g.nodes) nodes_.insert(n.name);
  }
  std::string buffer(const std::string& base) { return take(base, buffers_); }
  std::string node(const std::string& base) { return take(base, nodes_); }

 private:
  static std::string take(const std::string& base, std::set<std::string>& taken) {
    std::string s = unique(base, taken);
    taken.insert(s);
    return s;
  }
  std::set<std::string> buffers_, nodes_;
};

// Every op has an affine index (or none), and there are no masked sub-blocks or indirect
// indexing: what the rewriting passes handle.
inline bool indices_affine(const std::vector<ir::Op>& body) {
  for (const auto& op : body) {
    if (!op.body.empty() || op.op == "indirect_indexing") return false;
    if (op.index && !op.index->affine) return false;
  }
  return true;
}

// The row-major strides of `sizes`, each times `inner`.
inline std::vector<int64_t> contiguous(const std::vector<int64_t>& sizes, int64_t inner) {
  std::vector<int64_t> st(sizes.size());
  int64_t s = inner;
  for (size_t i = sizes.size(); i-- > 0;) {
    st[i] = s;
    s *= sizes[i];
  }
  return st;
}

// Appends a new row-major intermediate buffer `name` of `size` to `g`; returns its strides.
inline std::vector<int64_t> add_intermediate(ir::Graph& g, const std::string& name, isa::DType dt,
                                             const std::vector<int64_t>& size) {
  ir::Buffer b;
  b.name = name;
  b.kind = "intermediate";
  b.dtype = dt;
  b.size = size;
  b.stride = contiguous(size, 1);
  g.buffers.push_back(b);
  return b.stride;
}

// A pointwise node `name` (attributed to `like`'s origins and source) copying `src` into buffer
// `dst` with strides `dst_stride`: over `src`'s dims in the order `perm` (empty: as they are),
// dst[x0, x1, ...] = src at dims perm[0], perm[1], ... .
inline ir::Node copy_node(const ir::Node& like, const std::string& name, const ir::TensorView& src,
                          const std::vector<size_t>& perm, const std::string& dst,
                          const std::vector<int64_t>& dst_stride) {
  ir::Node c;
  c.name = name;
  c.kind = "pointwise";
  c.outputs = {dst};
  c.origins = like.origins;
  c.aten = like.aten;
  c.source = like.source;
  ir::Affine from, to;
  from.offset = src.offset;
  for (size_t i = 0; i < src.size.size(); ++i) {
    const size_t d = perm.empty() ? i : perm[i];
    const std::string v = "x" + std::to_string(i);
    c.vars.push_back(v);
    c.sizes.push_back(src.size[d]);
    from.coeffs[v] = src.stride[d];
    to.coeffs[v] = dst_stride[i];
  }
  ir::Op ld;
  ld.id = "v0", ld.op = "load", ld.buffer = src.buffer, ld.dtype = src.dtype;
  ld.index = index_of(from);
  ir::Op st;
  st.op = "store", st.args = {"v0"}, st.buffer = dst;
  st.index = index_of(to);
  c.body = {ld, st};
  return c;
}

}  // namespace spyre::compiler::graph_edit
