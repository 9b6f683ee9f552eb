// Mapping a pointwise node onto a matmul's output tiles (epilogue.h).
#include "spyre/compiler/epilogue.h"

#include <algorithm>
#include <map>

#include "spyre/error.h"

namespace spyre::compiler {
namespace {

struct D {
  int64_t size;
  std::vector<int64_t> coeff;  // per access
};

// Merges dims (outermost first) into one stride per access; false when some access is not
// contiguous across them.
bool merge(const std::vector<D>& ds, size_t na, std::vector<int64_t>& stride) {
  stride.assign(na, 0);
  if (ds.empty()) return true;
  for (size_t a = 0; a < na; ++a) {
    for (size_t i = 0; i + 1 < ds.size(); ++i)
      if (ds[i].coeff[a] != ds[i + 1].coeff[a] * ds[i + 1].size) return false;
    stride[a] = ds.back().coeff[a];
  }
  return true;
}

}  // namespace

Epilogue plan_epilogue(const ir::Graph& g, const ir::Node& ep, const std::string& out_buffer,
                       int64_t M, int64_t N, const arch::ArchConfig& cfg,
                       const std::string& where) {
  if (ep.kind != "pointwise") throw Error(where, "epilogue " + ep.name + " is not pointwise");
  const std::string out = g.storage_of(out_buffer).name;
  // Accesses in body order.
  std::vector<const ir::Op*> ops;
  for (const auto& op : ep.body)
    if (op.index) {
      if (!op.index->affine)
        throw Error(where, "epilogue index '" + op.index->expr + "' is not affine");
      ops.push_back(&op);
    }
  const size_t na = ops.size();
  std::vector<D> dims;
  for (size_t v = 0; v < ep.vars.size(); ++v) {
    if (ep.sizes[v] == 1) continue;
    D d{ep.sizes[v], {}};
    for (const auto* op : ops) d.coeff.push_back(op->index->affine->coeff(ep.vars[v]));
    dims.push_back(d);
  }
  // Every load of the output reads element p at flat iteration p.
  int64_t flat = 1;
  for (size_t v = dims.size(); v-- > 0;) {
    for (size_t a = 0; a < na; ++a)
      if (g.storage_of(ops[a]->buffer).name == out) {
        if (ops[a]->op != "load") throw Error(where, "epilogue stores into the matmul's output");
        if (dims[v].coeff[a] != flat || ops[a]->index->affine->offset != 0)
          throw Error(where, "epilogue reads " + out + " at '" + ops[a]->index->expr +
                                 "', not element by element in output order");
      }
    flat *= dims[v].size;
  }
  if (flat != M * N)
    throw Error(where, "epilogue iterates over " + std::to_string(flat) +
                           " elements, the output has " + std::to_string(M * N));
  // Cut the dims at the row boundary (product of the inner ones == N), splitting one if needed.
  std::vector<D> rows, cols;
  int64_t inner = 1;
  size_t v = dims.size();
  while (v > 0 && inner * dims[v - 1].size <= N) inner *= dims[--v].size;
  if (inner != N) {
    if (v == 0 || N % inner != 0 || dims[v - 1].size % (N / inner) != 0)
      throw Error(where,
                  "epilogue's iteration space does not split into the output's rows and cols");
    const int64_t b = N / inner;
    D lo{b, dims[v - 1].coeff}, hi{dims[v - 1].size / b, {}};
    for (auto c : dims[v - 1].coeff) hi.coeff.push_back(c * b);
    dims[v - 1] = lo;
    dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(v - 1), hi);
  }
  rows.assign(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(v));
  cols.assign(dims.begin() + static_cast<std::ptrdiff_t>(v), dims.end());
  std::vector<int64_t> rs, cs;
  if (!merge(rows, na, rs) || !merge(cols, na, cs))
    throw Error(where, "an epilogue access is not affine in the output's (row, col)");

  // The node again, over (i, j).
  ir::Node t = ep;
  t.vars = {"i", "j"};
  t.sizes = {M, N};
  std::map<std::string, TileAccess> by_expr;
  size_t a = 0;
  for (auto& op : t.body) {
    if (!op.index) continue;
    TileAccess ta{op.index->affine->offset, rs[a], cs[a]};
    ++a;
    if (ta.cs != 0 && ta.cs != 1)
      throw Error(where, "epilogue access of " + op.buffer + " with column stride " +
                             std::to_string(ta.cs));
    ir::Affine af;
    af.offset = ta.offset;
    af.coeffs = {{"i", ta.rs}, {"j", ta.cs}};
    op.index = ir::Index{std::to_string(ta.offset) + "+" + std::to_string(ta.rs) + "*i+" +
                             std::to_string(ta.cs) + "*j",
                         af};
    ta.offset += storage_offset(g, op.buffer);  // a view's (e.g. a cat part's) start
    by_expr[op.buffer + "|" + op.index->expr] = ta;
  }
  Epilogue e;
  e.out_storage = out;
  e.p = build_tile_program(g, t, cfg, where, true);
  for (const auto& m : e.p.accesses) e.acc.push_back(by_expr.at(m.buffer + "|" + m.expr));

  // Constants, and LX slots by liveness (loads live from the start: they are prefetched).
  const auto& P = e.p;
  e.is_const.assign(P.vals.size(), false);
  e.slot.assign(P.vals.size(), -1);
  std::vector<int64_t> def(P.vals.size(), -2), last(P.vals.size(), -2);
  for (size_t i = 0; i < P.ops.size(); ++i) {
    const TOp& op = P.ops[i];
    if (op.kind == TOp::Reduce)
      throw Error(where, "a reduction in a matmul epilogue is not supported");
    if (op.kind == TOp::Iota)
      throw Error(where, "index_expr in a matmul epilogue is not supported yet");
    const auto pos = static_cast<int64_t>(i);
    for (int s : op.src) last[static_cast<size_t>(s)] = pos;
    if (op.dst < 0) continue;
    const auto d = static_cast<size_t>(op.dst);
    if (op.kind == TOp::Fill) {
      e.is_const[d] = true;
    } else if (op.kind != TOp::Load) {
      bool all = !op.src.empty();
      for (int s : op.src) all = all && e.is_const[static_cast<size_t>(s)];
      e.is_const[d] = all;
    }
    def[d] = op.kind == TOp::Load ? -1 : pos;
  }
  std::vector<int64_t> slot_free_after;  // per slot: last use of its current value
  for (size_t i = 0; i < P.ops.size(); ++i) {
    const TOp& op = P.ops[i];
    if (op.dst < 0) continue;
    const auto d = static_cast<size_t>(op.dst);
    if (e.is_const[d]) continue;
    if (op.kind == TOp::Load && P.accesses[static_cast<size_t>(op.access)].buffer == out) continue;
    int s = -1;
    for (size_t k = 0; k < slot_free_after.size(); ++k)
      if (slot_free_after[k] < def[d]) {
        s = static_cast<int>(k);
        break;
      }
    if (s < 0) {
      s = static_cast<int>(slot_free_after.size());
      slot_free_after.push_back(0);
    }
    slot_free_after[static_cast<size_t>(s)] = std::max(last[d], def[d]);
    e.slot[d] = s;
  }
  e.slots = static_cast<int>(slot_free_after.size());
  return e;
}

}  // namespace spyre::compiler
