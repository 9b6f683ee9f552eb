// Mapping a pointwise node onto a matmul's output tiles (epilogue.h).
#include "spyre/compiler/epilogue.h"

#include <algorithm>
#include <map>

#include "sfp_emit.h"
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

namespace {

int64_t round_up128(int64_t b) { return (b + 127) / 128 * 128; }

Tile ep_tile(const EpilogueLx& e, int v, int cl, int64_t h0, int par) {
  const Epilogue& ep = *e.ep;
  const auto vi = static_cast<size_t>(v);
  const TVal& tv = ep.p.vals[vi];
  if (ep.is_const[vi]) return Tile{e.konst[vi], 0, 0, tv.dt};
  const int sl = ep.slot[vi];
  if (sl < 0) return e.out[static_cast<size_t>(par)].at(h0, 0);  // the producer's output tile
  const int64_t row = tv.r ? h0 : e.tm + cl;
  return Tile{e.slot[static_cast<size_t>(sl)][static_cast<size_t>(par)] + row * e.tn * 4,
              tv.r ? e.tn : 0, tv.c ? 1 : 0, tv.dt};
}

void ep_op(Emitter& em, const EpilogueLx& e, const TOp& op, int cl, int64_t h0, int par, int64_t nr,
           int64_t nt) {
  const TVal& d = e.ep->p.vals[static_cast<size_t>(op.dst)];
  const int64_t rows = d.r ? nr : 1, cols = d.c ? nt : 1;
  const Tile dst = ep_tile(e, op.dst, cl, h0, par);
  auto src = [&](size_t j) { return ep_tile(e, op.src[j], cl, h0, par); };
  emit_elementwise(em, cl, op, dst, src, rows, cols);
}

void ep_dma(const Kernel& k, Emitter& em, const EpilogueLx& e, int acc, int v, int cl, int64_t m0,
            int64_t n0, int64_t h0, int par, int64_t nr, int64_t nt, bool store) {
  const Epilogue& ep = *e.ep;
  const TileAccess& ta = ep.acc[static_cast<size_t>(acc)];
  const TVal& tv = ep.p.vals[static_cast<size_t>(v)];
  const int64_t es = isa::dtype_size_bytes(tv.dt);
  const int64_t rows = tv.r ? nr : 1, cols = tv.c ? nt : 1;
  const std::string& buf = ep.p.accesses[static_cast<size_t>(acc)].buffer;
  const uint64_t dram = k.dram_addr(buf, ta.offset + (m0 + h0) * ta.rs + n0 * ta.cs);
  const Tile lx = ep_tile(e, v, cl, h0, par);
  const DmaShape sh =
      rows == 1 ? DmaShape{cols * es} : DmaShape{cols * es, rows, ta.rs * es, lx.rs * es};
  if (store)
    em.store(lx.addr, dram, sh);
  else
    em.load(dram, lx.addr, sh);
}

}  // namespace

int64_t epilogue_lx_bytes(const Epilogue& ep, int64_t tm, int64_t tn) {
  return 2 * ep.slots * round_up128((tm + 2) * tn * 4) +
         static_cast<int64_t>(ep.p.vals.size()) * 128;
}

EpilogueLx alloc_epilogue_lx(LxArena& lx, const Epilogue& ep, int64_t tm, int64_t tn,
                             const std::array<Tile, 2>& out) {
  EpilogueLx e;
  e.ep = &ep;
  e.tm = tm;
  e.tn = tn;
  e.out = out;
  for (int s = 0; s < ep.slots; ++s) {
    e.slot.push_back({0, 0});
    for (int par = 0; par < 2; ++par)
      e.slot.back()[static_cast<size_t>(par)] =
          lx.alloc("epi" + std::to_string(s) + "_" + std::to_string(par), (tm + 2) * tn * 4);
  }
  for (size_t v = 0; v < ep.p.vals.size(); ++v)
    e.konst.push_back(ep.is_const[v] ? lx.alloc("epi_const_v" + std::to_string(v), 4) : -1);
  return e;
}

void emit_epilogue_constants(Emitter& em, const EpilogueLx& e) {
  for (const auto& op : e.ep->p.ops)
    if (op.dst >= 0 && e.ep->is_const[static_cast<size_t>(op.dst)]) ep_op(em, e, op, 0, 0, 0, 1, 1);
}

void emit_epilogue_loads(const Kernel& k, Emitter& em, const EpilogueLx& e, int par, int cl,
                         int64_t m0, int64_t n0, int64_t h0, int64_t nr, int64_t nt) {
  for (const auto& op : e.ep->p.ops) {
    if (op.kind != TOp::Load) continue;
    const auto d = static_cast<size_t>(op.dst);
    if (e.ep->slot[d] < 0 || e.ep->is_const[d]) continue;
    ep_dma(k, em, e, op.access, op.dst, cl, m0, n0, h0, par, nr, nt, false);
  }
}

void emit_epilogue_ops(const Kernel& k, Emitter& em, const EpilogueLx& e, int par, int cl,
                       int64_t m0, int64_t n0, int64_t h0, int64_t nr, int64_t nt) {
  for (const auto& op : e.ep->p.ops) {
    if (op.kind == TOp::Load) continue;
    if (op.kind == TOp::Store) {
      ep_dma(k, em, e, op.access, op.src[0], cl, m0, n0, h0, par, nr, nt, true);
      continue;
    }
    if (!e.ep->is_const[static_cast<size_t>(op.dst)]) ep_op(em, e, op, cl, h0, par, nr, nt);
  }
}

}  // namespace spyre::compiler
