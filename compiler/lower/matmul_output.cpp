// A matmul core's output side (matmul_emit.h): alpha / beta and the epilogue's constants once,
// the bias and epilogue inputs with an output tile's first K step, and after its last one
// alpha, bias, the conversion, the store and the fused pointwise ops (run by the owner of the
// block, the last core of its K chain).
#include "matmul_emit.h"
#include "sfp_emit.h"

namespace spyre::compiler {

void MatmulCoreEmitter::emit_constants() {
  if (!owner_) return;
  const isa::DType f32 = isa::DType::F32;
  if (p_.alpha_at >= 0) em_.fill(0, Tile{p_.alpha_at, 0, 0, f32}, 1, 1, p_.alpha);
  if (p_.beta_at >= 0) em_.fill(0, Tile{p_.beta_at, 0, 0, f32}, 1, 1, p_.beta);
  if (!p_.ep) return;
  for (const auto& op : p_.ep->p.ops)
    if (op.dst >= 0 && p_.ep->is_const[static_cast<size_t>(op.dst)]) ep_op(op, 0, 0, 0, 1, 1);
}

Tile MatmulCoreEmitter::ep_tile(int v, int cl, int64_t h0, int par) const {
  const Epilogue& ep = *p_.ep;
  const int64_t tm = p_.grid.tm, tn = p_.grid.tn;
  const TVal& tv = ep.p.vals[static_cast<size_t>(v)];
  if (ep.is_const[static_cast<size_t>(v)])
    return Tile{p_.ep_const[static_cast<size_t>(v)], 0, 0, tv.dt};
  const int sl = ep.slot[static_cast<size_t>(v)];
  if (sl < 0) {  // the matmul's output tile
    if (p_.out_f32)
      return Tile{p_.C_slot[static_cast<size_t>(par)] + h0 * tn * 4, tn, 1, isa::DType::F32};
    return Tile{p_.O_slot[static_cast<size_t>(par)] + h0 * tn * p_.esO, tn, 1, p_.O.dt};
  }
  const int64_t row = tv.r ? h0 : tm + cl;
  return Tile{p_.ep_slot[static_cast<size_t>(sl)][static_cast<size_t>(par)] + row * tn * 4,
              tv.r ? tn : 0, tv.c ? 1 : 0, tv.dt};
}

// One SFP op of the epilogue on corelet cl's nr x nt part of a tile.
void MatmulCoreEmitter::ep_op(const TOp& op, int cl, int64_t h0, int par, int64_t nr, int64_t nt) {
  const TVal& d = p_.ep->p.vals[static_cast<size_t>(op.dst)];
  const int64_t rows = d.r ? nr : 1, cols = d.c ? nt : 1;
  const Tile dst = ep_tile(op.dst, cl, h0, par);
  auto src = [&](size_t j) { return ep_tile(op.src[j], cl, h0, par); };
  emit_elementwise(em_, cl, op, dst, src, rows, cols);
}

// DMA of an epilogue access for corelet cl's rows [h0, h0 + nr) of a tile at (m0, n0).
void MatmulCoreEmitter::ep_dma(int acc, int v, int cl, int64_t m0, int64_t n0, int64_t h0, int par,
                               int64_t nr, int64_t nt, bool store) {
  const Epilogue& ep = *p_.ep;
  const TileAccess& ta = ep.acc[static_cast<size_t>(acc)];
  const TVal& tv = ep.p.vals[static_cast<size_t>(v)];
  const int64_t es = isa::dtype_size_bytes(tv.dt), tn = p_.grid.tn;
  const int64_t rows = tv.r ? nr : 1, cols = tv.c ? nt : 1;
  const std::string& buf = ep.p.accesses[static_cast<size_t>(acc)].buffer;
  const uint64_t dram = k_.dram_addr(buf, ta.offset + (m0 + h0) * ta.rs + n0 * ta.cs);
  const Tile lx = ep_tile(v, cl, h0, par);
  const DmaShape sh =
      rows == 1 ? DmaShape{cols * es} : DmaShape{cols * es, rows, ta.rs * es, tn * es};
  if (store)
    em_.store(lx.addr, dram, sh);
  else
    em_.load(dram, lx.addr, sh);
}

// With an output tile's first K step (owner only): the epilogue's inputs and the bias.
void MatmulCoreEmitter::emit_output_loads(const MatmulStep& s) {
  const int64_t mt = s.m1 - s.m0, nt = s.n1 - s.n0, tn = p_.grid.tn;
  const int cp = static_cast<int>(s.ctile % p_.cs);
  if (p_.ep) {
    auto halves = split_rows(mt);
    for (const auto& op : p_.ep->p.ops) {
      if (op.kind != TOp::Load || p_.ep->slot[static_cast<size_t>(op.dst)] < 0) continue;
      if (p_.ep->is_const[static_cast<size_t>(op.dst)]) continue;
      for (int cl = 0; cl < 2; ++cl) {
        auto [h0, h1] = halves[static_cast<size_t>(cl)];
        if (h1 > h0) ep_dma(op.access, op.dst, cl, s.m0, s.n0, h0, cp, h1 - h0, nt, false);
      }
    }
  }
  if (p_.is_addmm) {
    const int64_t brows = p_.bias_rows ? mt : 1, bcols = p_.bias_scalar ? 1 : nt;
    const int64_t es = p_.esBias;
    em_.load(addr(p_.bias, 0, p_.bias_rows ? s.m0 : 0, p_.bias_scalar ? 0 : s.n0),
             p_.bias16[static_cast<size_t>(cp)],
             DmaShape{bcols * es, brows, p_.bias.s0 * es, tn * es});
  }
}

void MatmulCoreEmitter::emit_epilogue(const MatmulStep& s) {
  const isa::DType f32 = isa::DType::F32;
  const int64_t mt = s.m1 - s.m0, nt = s.n1 - s.n0, tn = p_.grid.tn;
  const int64_t esO = p_.esO, esBias = p_.esBias;
  const auto cp = static_cast<size_t>(s.ctile % p_.cs);
  auto halves = split_rows(mt);
  for (int cl = 0; cl < 2; ++cl) {
    auto [h0, h1] = halves[static_cast<size_t>(cl)];
    const int64_t nr = h1 - h0;
    if (nr <= 0) continue;
    Tile acc{p_.C_slot[cp] + h0 * tn * 4, tn, 1, f32};
    if (p_.alpha_at >= 0)
      em_.bin(cl, sfp_fn("mul"), acc, acc, Tile{p_.alpha_at, 0, 0, f32}, nr, nt);
    if (p_.is_addmm) {
      const int64_t brows = p_.bias_rows ? nr : 1, bcols = p_.bias_scalar ? 1 : nt;
      const int64_t r0 = p_.bias_rows ? h0 : 0;
      Tile b16{p_.bias16[cp] + r0 * tn * esBias, tn, 1, p_.bias.dt};
      Tile b32{p_.bias32[cp][static_cast<size_t>(cl)], tn, 1, f32};
      if (p_.bias.dt != f32)
        em_.cvt(cl, b32, b16, brows, bcols);
      else
        em_.un(cl, sfp_fn("copy"), b32, b16, brows, bcols);
      if (p_.beta_at >= 0)
        em_.bin(cl, sfp_fn("mul"), b32, b32, Tile{p_.beta_at, 0, 0, f32}, brows, bcols);
      Tile bop{b32.addr, p_.bias_rows ? tn : 0, p_.bias_scalar ? 0 : 1, f32};
      em_.bin(cl, sfp_fn("add"), acc, acc, bop, nr, nt);
    }
    if (p_.out_lx >= 0) {  // into the core's rows of the LX slot, then DRAM if planned
      const int64_t M = p_.O.rows, N = p_.O.cols;
      const int64_t row = s.b * M + s.m0 + h0 - (w_.b0 * M + w_.m0);
      const Tile dst{p_.out_lx + (row * N + s.n0) * esO, N, 1, p_.O.dt};
      if (p_.out_f32)
        em_.un(cl, sfp_fn("copy"), dst, acc, nr, nt);
      else
        em_.cvt(cl, dst, acc, nr, nt);
      if (p_.out_dram)
        em_.store(dst.addr, addr(p_.O, s.b, s.m0 + h0, s.n0),
                  DmaShape{nt * esO, nr, p_.O.s0 * esO, N * esO});
      continue;  // no epilogue (matmul.cpp keeps no output with one in LX)
    }
    int64_t src = acc.addr;
    if (!p_.out_f32) {
      Tile out{p_.O_slot[cp] + h0 * tn * esO, tn, 1, p_.O.dt};
      em_.cvt(cl, out, acc, nr, nt);
      src = out.addr;
    }
    const int64_t es_src = !p_.out_f32 ? esO : 4;
    if (k_.store_output)
      em_.store(src, addr(p_.O, s.b, s.m0 + h0, s.n0),
                DmaShape{nt * esO, nr, p_.O.s0 * esO, tn * es_src});
    if (!p_.ep) continue;
    const int par = static_cast<int>(cp);
    for (const auto& op : p_.ep->p.ops) {
      if (op.kind == TOp::Load) continue;
      if (op.kind == TOp::Store) {
        ep_dma(op.access, op.src[0], cl, s.m0, s.n0, h0, par, nr, nt, true);
        continue;
      }
      if (!p_.ep->is_const[static_cast<size_t>(op.dst)]) ep_op(op, cl, h0, par, nr, nt);
    }
  }
}

}  // namespace spyre::compiler
