// Pure layout copies as blocked 2-D transposes (transpose.h).
//
// The loop lowering of a copy whose source and destination are contiguous along different
// dimensions moves one side element by element (one DMA request per element: resnet_block's
// weight and input re-layouts took 80 % of its cycles). Here the copy is seen as a batch of
// [P, Q] -> [Q, P] transposes. A tile is (nb batch elements, tp of P, tq of Q): one DMA load
// brings tp runs of tq source elements (a whole tile when Q is not cut), one SFP copy per batch
// element writes it transposed into a second slot (the SFP reads its operand with row stride 1
// and column stride tq: strides are free on the SFP), one DMA store writes tq runs of tp
// destination elements. Tiles alternate between the corelets and cycle through four slot pairs,
// so loads, copies and stores of consecutive tiles overlap (the stream derives the handshakes).
#include "spyre/compiler/transpose.h"

#include <algorithm>
#include <functional>

#include "spyre/compiler/cost.h"
#include "spyre/compiler/tile_program.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

struct CopyDim {
  int64_t size, a, b;  // extent, source stride, destination stride (elements)
};

bool plain_dtype(isa::DType t) {
  // Values pass the SFP as doubles: 64-bit integers would lose bits; sub-byte types have no
  // byte address per element.
  return t != isa::DType::I64 && isa::dtype_bits(t) >= 8;
}

// The blocking of one copy: tile extents and the tile list order (batch group, p, q).
struct Blocking {
  int64_t tp = 1, tq = 1, nb = 1;  // nb: elements of the innermost batch dim per tile
  int64_t batch_groups = 1, tiles = 0;
};

Blocking choose_blocking(const LayoutCopy& c, const arch::ArchConfig& cfg, int64_t lx_budget) {
  const int64_t ess = isa::dtype_size_bytes(c.sdt), esd = isa::dtype_size_bytes(c.ddt);
  // Four slot pairs; each slot at most 128 KiB of the wider type and the whole fits LX (a
  // [4096, 1024] fp16 transpose on "spyre": 32 KiB slots 174 us, 128 KiB 162 us).
  int64_t elems = 131072 / std::max(ess, esd);
  while (elems > 64 && 4 * (round_up(elems * ess, 128) + round_up(elems * esd, 128)) > lx_budget)
    elems /= 2;
  const int64_t inner_b = c.bsize.empty() ? 1 : c.bsize.back();
  const int64_t outer_b = c.bsize.empty() ? 1 : [&] {
    int64_t o = 1;
    for (size_t i = 0; i + 1 < c.bsize.size(); ++i) o *= c.bsize[i];
    return o;
  }();
  Blocking b;
  // 256 rows of P: runs of 512 B fp16 on the destination side (128 rows: the [2048, 8192]
  // transpose 869 us, 256: 677 us; 512: 678 us).
  b.tp = std::min<int64_t>(c.P, 256);
  b.tq = std::min<int64_t>(c.Q, std::max<int64_t>(1, elems / b.tp));
  if (b.tq == c.Q && b.tp == c.P) b.nb = std::clamp<int64_t>(elems / (c.P * c.Q), 1, inner_b);
  // Runs of at least one 128 B stick on both sides when the shape allows it.
  const int64_t tq_min = std::min(c.Q, ceil_div(cfg.stick_bytes, ess));
  const int64_t tp_min = std::min(c.P, ceil_div(cfg.stick_bytes, esd));
  auto count = [&]() {
    b.batch_groups = outer_b * ceil_div(inner_b, b.nb);
    return b.batch_groups * ceil_div(c.P, b.tp) * ceil_div(c.Q, b.tq);
  };
  // Two tiles per core (one per corelet) when the copy is large enough.
  const int64_t want = cfg.cores * std::max<int64_t>(1, cfg.corelets);
  while (count() < want) {
    if (b.nb > 1)
      b.nb = ceil_div(b.nb, 2);
    else if (b.tq > tq_min && b.tq >= b.tp)
      b.tq = std::max(tq_min, ceil_div(b.tq, 2));
    else if (b.tp > tp_min)
      b.tp = std::max(tp_min, ceil_div(b.tp, 2));
    else if (b.tq > tq_min)
      b.tq = std::max(tq_min, ceil_div(b.tq, 2));
    else
      break;
  }
  b.tiles = count();
  return b;
}

// The reps level of a DMA becomes its rows level (the rows level is gone: one row, or folded).
void lift_reps(DmaShape& s) {
  s.rows = s.reps;
  s.dram_stride = s.dram_rep;
  s.lx_stride = s.lx_rep;
  s.reps = 1;
  s.dram_rep = s.lx_rep = 0;
}

// Folds contiguous levels of a DMA (rows that follow each other on both sides) into longer runs.
DmaShape compact(DmaShape s) {
  if (s.reps > 1 && s.rows == 1) lift_reps(s);
  for (int level = 0; level < 2; ++level) {
    if (s.rows <= 1 || s.dram_stride != s.bytes || s.lx_stride != s.bytes) break;
    s.bytes *= s.rows;
    s.rows = 1;
    lift_reps(s);
  }
  if (s.rows == 1) s.dram_stride = s.lx_stride = 0;
  return s;
}

void emit_transpose(Kernel& k, const LayoutCopy& c, const Blocking& bl) {
  const arch::ArchConfig& cfg = k.cfg;
  const int64_t ess = isa::dtype_size_bytes(c.sdt), esd = isa::dtype_size_bytes(c.ddt);
  const int64_t cap = bl.nb * bl.tp * bl.tq;
  constexpr int kSets = 4;
  int64_t in_slot[kSets], out_slot[kSets];
  for (int s = 0; s < kSets; ++s) {
    in_slot[s] = k.lx.alloc("in" + std::to_string(s), cap * ess);
    out_slot[s] = k.lx.alloc("out" + std::to_string(s), cap * esd);
  }
  const int64_t inner_b = c.bsize.empty() ? 1 : c.bsize.back();
  const int64_t nbg = ceil_div(inner_b, bl.nb), npb = ceil_div(c.P, bl.tp),
                nqb = ceil_div(c.Q, bl.tq);
  const int64_t T = bl.tiles, cores_used = std::min<int64_t>(cfg.cores, T);
  const bool cvt = c.sdt != c.ddt;
  const int corelets = std::max<int>(1, static_cast<int>(std::min<int64_t>(cfg.corelets, 2)));
  for (int64_t core = 0; core < cores_used; ++core) {
    Emitter em = k.emitter(core);
    // Core c takes tiles c, c + cores, ...: the cores' tiles of one step are consecutive.
    for (int64_t t = core, step = 0; t < T; t += cores_used, ++step) {
      // Tile t -> (outer batch index, inner batch group, p block, q block), the p block skewed
      // by the q block: consecutive tiles differ in both, so the runs the cores load together
      // (source columns q) and store together (destination columns p) start on different
      // DRAM channels (a run of one stick at a power-of-two row stride stays on the channels
      // of its column: 2048 x 8192 fp16 with unskewed blocks kept 2 of 16 channels busy).
      int64_t r = t;
      const int64_t qb = r % nqb;
      r /= nqb;
      const int64_t pb = (r % npb + qb) % npb;
      r /= npb;
      const int64_t ib = r % nbg, ob = r / nbg;
      int64_t so = c.src_off, dof = c.dst_off, rest = ob;
      for (size_t i = c.bsize.size() - (c.bsize.empty() ? 0 : 1); i-- > 0;) {
        const int64_t idx = rest % c.bsize[i];
        rest /= c.bsize[i];
        so += idx * c.src_b[i];
        dof += idx * c.dst_b[i];
      }
      const int64_t b0 = ib * bl.nb, nb = std::min(bl.nb, inner_b - b0);
      const int64_t p0 = pb * bl.tp, np = std::min(bl.tp, c.P - p0);
      const int64_t q0 = qb * bl.tq, nq = std::min(bl.tq, c.Q - q0);
      const int64_t sb = c.bsize.empty() ? 0 : c.src_b.back();
      const int64_t db = c.bsize.empty() ? 0 : c.dst_b.back();
      so += b0 * sb + p0 * c.src_p + q0;
      dof += b0 * db + p0 + q0 * c.dst_q;
      const int set = static_cast<int>(step % kSets);
      const int cl = static_cast<int>(step % corelets);
      const int64_t in = in_slot[set], out = out_slot[set];
      // LX: the in slot holds [nb][np][nq] (source order), the out slot [nb][nq][np].
      em.load(
          k.dram_addr(c.src, so), in,
          compact(DmaShape{nq * ess, np, c.src_p * ess, nq * ess, nb, sb * ess, np * nq * ess}));
      for (int64_t j = 0; j < nb; ++j) {
        const Tile src{in + j * np * nq * ess, 1, nq, c.sdt};
        const Tile dst{out + j * np * nq * esd, np, 1, c.ddt};
        if (cvt)
          em.cvt(cl, dst, src, nq, np);
        else
          em.un(cl, sfp_fn("copy"), dst, src, nq, np);
      }
      em.store(
          out, k.dram_addr(c.dst, dof),
          compact(DmaShape{np * esd, nq, c.dst_q * esd, np * esd, nb, db * esd, np * nq * esd}));
    }
  }
}

KernelPrediction trial(Kernel& k, const std::function<void(Kernel&)>& lower) {
  std::vector<CoreStream> scratch(k.cores.size());
  Kernel t{k.ctx, k.g, k.node, k.cfg, k.dram, k.id, scratch, k.new_arena()};
  lower(t);
  if (t.lx.used_bytes() > k.cfg.lx_usable_bytes())
    throw Error(ir::describe(k.node), "working set does not fit LX");
  std::vector<std::vector<isa::Instr>> slices;
  for (auto& s : scratch) {
    s.barrier(0);
    slices.push_back(s.instrs());
  }
  return predict_kernel(k.ctx, slices, k.cfg);
}

}  // namespace

std::optional<LayoutCopy> match_layout_copy(const ir::Graph& g, const ir::Node& n) {
  if (n.kind != "pointwise" || !n.reduce_vars.empty()) return std::nullopt;
  const ir::Op *ld = nullptr, *st = nullptr, *cv = nullptr;
  for (const auto& op : n.body) {
    if (!op.body.empty()) return std::nullopt;  // masked sub-block
    if (op.op == "load" && !ld)
      ld = &op;
    else if (op.op == "to_dtype" && !cv)
      cv = &op;
    else if (op.op == "store" && !st)
      st = &op;
    else
      return std::nullopt;
  }
  if (!ld || !st || !ld->index || !st->index || !ld->index->affine || !st->index->affine ||
      !st->mode.empty())
    return std::nullopt;
  // The stored value is the load, or its one conversion.
  if (cv && (cv->args.size() != 1 || cv->args[0] != ld->id || !cv->dtype)) return std::nullopt;
  if (st->args.size() != 1 || st->args[0] != (cv ? cv->id : ld->id)) return std::nullopt;
  LayoutCopy c;
  c.src = ld->buffer;
  c.dst = st->buffer;
  c.sdt = g.buffer(ld->buffer).dtype;
  c.ddt = g.buffer(st->buffer).dtype;
  // At most one rounding on the way: load dtype -> (to_dtype) -> stored dtype.
  if (cv && *cv->dtype != c.sdt && *cv->dtype != c.ddt) return std::nullopt;
  if (!plain_dtype(c.sdt) || !plain_dtype(c.ddt)) return std::nullopt;
  if (g.storage_of(c.src).name == g.storage_of(c.dst).name) return std::nullopt;
  const ir::Affine &la = *ld->index->affine, &sa = *st->index->affine;
  c.src_off = la.offset + storage_offset(g, c.src);
  c.dst_off = sa.offset + storage_offset(g, c.dst);
  std::vector<CopyDim> dims;
  for (size_t v = 0; v < n.vars.size(); ++v) {
    if (n.sizes[v] == 1) continue;
    const CopyDim d{n.sizes[v], la.coeff(n.vars[v]), sa.coeff(n.vars[v])};
    if (d.a <= 0 || d.b <= 0) return std::nullopt;  // broadcasts, flips
    dims.push_back(d);
  }
  auto find = [&](bool src) {
    for (size_t i = 0; i < dims.size(); ++i)
      if ((src ? dims[i].a : dims[i].b) == 1) return i;
    return dims.size();
  };
  const size_t qi = find(true), pi = find(false);
  if (qi == dims.size() || pi == dims.size() || qi == pi) return std::nullopt;
  // Merge outer dims into q (contiguous after it on both sides) and into p.
  std::vector<bool> used(dims.size(), false);
  used[qi] = used[pi] = true;
  c.Q = dims[qi].size;
  c.dst_q = dims[qi].b;
  c.P = dims[pi].size;
  c.src_p = dims[pi].a;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (used[i]) continue;
      if (dims[i].a == c.Q && dims[i].b == c.dst_q * c.Q) {
        c.Q *= dims[i].size;
      } else if (dims[i].b == c.P && dims[i].a == c.src_p * c.P) {
        c.P *= dims[i].size;
      } else {
        continue;
      }
      used[i] = grew = true;
    }
  }
  // The rest are batch dims, the one with the smallest source stride innermost (a tile holds
  // several of its elements when a whole [P, Q] block is small).
  std::vector<CopyDim> batch;
  for (size_t i = 0; i < dims.size(); ++i)
    if (!used[i]) batch.push_back(dims[i]);
  std::stable_sort(batch.begin(), batch.end(),
                   [](const CopyDim& x, const CopyDim& y) { return x.a > y.a; });
  for (const auto& d : batch) {
    c.bsize.push_back(d.size);
    c.src_b.push_back(d.a);
    c.dst_b.push_back(d.b);
  }
  return c;
}

bool lower_layout_copy(Kernel& k) {
  const LayoutCopyMode mode = k.ctx.layout_copy;
  if (mode == LayoutCopyMode::Loops) return false;
  const auto c = match_layout_copy(k.g, k.node);
  if (!c) return false;
  const Blocking bl = choose_blocking(*c, k.cfg, k.lx_budget());
  nlohmann::json rep = {
      {"P", c->P},         {"Q", c->Q},
      {"batch", c->bsize}, {"tp", bl.tp},
      {"tq", bl.tq},       {"nb", bl.nb},
      {"tiles", bl.tiles}, {"mode", mode == LayoutCopyMode::Auto ? "auto" : "forced"}};
  bool use = true;
  if (mode == LayoutCopyMode::Auto) {
    const KernelPrediction tr = trial(k, [&](Kernel& t) { emit_transpose(t, *c, bl); });
    rep["predicted_transpose"] = tr.cycles;
    try {
      const KernelPrediction lp = trial(k, [](Kernel& t) { lower_loops(t); });
      rep["predicted_loops"] = lp.cycles;
      use = tr.cycles < lp.cycles || (tr.cycles == lp.cycles && tr.dram_bytes < lp.dram_bytes);
    } catch (const Error& e) {
      rep["predicted_loops"] = std::string("cannot lower: ") + e.what();
    }
  }
  rep["lowering"] = use ? "blocked transpose" : "loops";
  if (use) {
    emit_transpose(k, *c, bl);
    k.report["unit"] = "sfp";
    k.report["split"] = {{"tiles", bl.tiles},
                         {"cores_used", std::min<int64_t>(k.cfg.cores, bl.tiles)}};
  } else {
    lower_loops(k);
  }
  k.report["layout_copy"] = rep;
  return true;
}

}  // namespace spyre::compiler
