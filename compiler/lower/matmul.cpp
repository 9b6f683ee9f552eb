// extern_kernels.mm / addmm / bmm on the PT arrays.
//
// Each core owns whole output blocks (divide.h). Inside a block the output is cut into
// tm x tn tiles and K into tk steps. A and B tiles go to ping-pong LX slots, so the load of the
// next step overlaps the matmul of this one; the fp32 accumulator and the output tile also
// alternate, so one tile's epilogue and store overlap the next tile's matmuls. The tile's rows
// are split between the corelets: pt0/sfp0 take the first half, pt1/sfp1 the rest. Ordering
// between queues comes from the LX ranges each instruction touches (stream.h).
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "spyre/compiler/divide.h"
#include "spyre/compiler/epilogue.h"
#include "spyre/compiler/kernel.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

// An operand as the kernel sees it: element (b, i, j) at storage offset
// off + b*sb + i*s0 + j*s1 of `buffer`.
struct Mat {
  std::string buffer;
  isa::DType dt = isa::DType::F16;
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t off = 0, sb = 0, s0 = 0, s1 = 0;
};

Mat mat_of(const ir::TensorView& v, const std::string& buffer, bool batched) {
  Mat m;
  m.buffer = buffer;
  m.dt = v.dtype;
  m.off = v.offset;
  const size_t d = v.size.size();
  if (batched && d == 3) {
    m.batch = v.size[0];
    m.sb = v.stride[0];
  }
  if (d >= 2) {
    m.rows = v.size[d - 2];
    m.cols = v.size[d - 1];
    m.s0 = v.size[d - 2] == 1 ? 0 : v.stride[d - 2];
    m.s1 = v.size[d - 1] == 1 ? 0 : v.stride[d - 1];
  } else if (d == 1) {
    m.rows = 1;
    m.cols = v.size[0];
    m.s1 = v.size[0] == 1 ? 0 : v.stride[0];
  } else {
    m.rows = m.cols = 1;
  }
  return m;
}

double kwarg(const ir::Node& n, const char* key, double def) {
  if (!n.kwargs.is_object() || !n.kwargs.contains(key)) return def;
  const auto& v = n.kwargs.at(key);
  return v.is_number() ? v.get<double>() : def;
}

struct Tiles {
  int64_t tm = 0, tn = 0, tk = 0;
};

struct Block {
  int64_t b, m0, m1, n0, n1;
};

struct Step {
  int64_t blk, m0, m1, n0, n1, k0, k1;
  bool first_k, last_k;
  int a_slot = 0, b_slot = 0, c_slot = 0;
  bool load_a = false, load_b = false;
};

}  // namespace

void lower_matmul(Kernel& k) {
  const ir::Node& n = k.node;
  const arch::ArchConfig& cfg = k.cfg;
  const bool is_bmm = n.kernel == "extern_kernels.bmm";
  const bool is_addmm = n.kernel == "extern_kernels.addmm";
  const size_t want = is_addmm ? 3 : 2;
  if (n.inputs.size() != want)
    k.unsupported(n.kernel + " with " + std::to_string(n.inputs.size()) + " tensor inputs");
  if (n.outputs.size() != 1)
    k.unsupported("matmul with " + std::to_string(n.outputs.size()) + " outputs");
  const size_t ia = is_addmm ? 1 : 0;
  Mat A = mat_of(n.inputs[ia], n.inputs[ia].buffer, is_bmm);
  Mat B = mat_of(n.inputs[ia + 1], n.inputs[ia + 1].buffer, is_bmm);
  Mat O = mat_of(n.layout, n.outputs[0], is_bmm);
  const int64_t M = A.rows, K = A.cols, N = B.cols, Bt = A.batch;
  if (B.rows != K || O.rows != M || O.cols != N || B.batch != Bt)
    k.unsupported("inconsistent matmul shapes");
  if (A.dt != B.dt) k.unsupported("matmul operands of different dtypes");
  if (A.s1 != 1 && K > 1)
    k.unsupported("A operand with column stride " + std::to_string(A.s1) +
                  " (transposed A is not supported yet)");
  const bool trans_b = !(B.s1 == 1 || N == 1) && (B.s0 == 1 || K == 1);
  if (!(B.s1 == 1 || N == 1) && !trans_b)
    k.unsupported("B operand with strides (" + std::to_string(B.s0) + ", " + std::to_string(B.s1) +
                  ")");
  if (O.s1 != 1 && N > 1) k.unsupported("output with column stride " + std::to_string(O.s1));
  const double alpha = kwarg(n, "alpha", 1.0), beta = kwarg(n, "beta", 1.0);
  Mat bias;
  if (is_addmm) {
    bias = mat_of(n.inputs[0], n.inputs[0].buffer, false);
    if (bias.cols != N && bias.cols != 1)
      k.unsupported("bias of shape not broadcastable to the output");
    if (bias.s1 != 1 && bias.s1 != 0)
      k.unsupported("bias with column stride " + std::to_string(bias.s1));
    if (bias.s1 == 0 && bias.cols != 1) bias.s1 = 0;
  }
  const int64_t esA = isa::dtype_size_bytes(A.dt), esO = isa::dtype_size_bytes(O.dt);
  const int64_t esBias = is_addmm ? isa::dtype_size_bytes(bias.dt) : 0;
  const bool bias_rows = is_addmm && bias.s0 != 0 && bias.rows > 1;  // bias varies per row
  const bool bias_scalar = is_addmm && bias.s1 == 0;

  // --- fused epilogue (fuse.h): pointwise ops on each output tile
  std::optional<Epilogue> ep;
  if (k.epilogue) {
    if (is_bmm) k.unsupported("a fused epilogue on bmm is not supported yet");
    if (O.off != 0 || (O.s0 != N && M > 1))
      k.unsupported("a fused epilogue needs a contiguous output");
    ep =
        plan_epilogue(k.g, *k.epilogue, n.outputs[0], M, N, cfg, k.g.file + ": " + ir::describe(n));
  }

  // --- work division
  MatmulShape shape{Bt, M, N, K, esA, esA, esO};
  shape.a_contiguous = A.s0 == K;
  shape.b_transposed = trans_b;
  shape.b_contiguous = trans_b ? B.s1 == K : B.s0 == N;
  MatmulGrid grid = choose_matmul_grid(shape, cfg);
  std::vector<Block> blocks;
  for (int64_t b = 0; b < Bt; ++b)
    for (int64_t i = 0; i < grid.gm; ++i)
      for (int64_t j = 0; j < grid.gn; ++j)
        blocks.push_back({b, i * grid.mb, std::min(M, (i + 1) * grid.mb), j * grid.nb,
                          std::min(N, (j + 1) * grid.nb)});

  // --- tiles. The A panel (tm x K) stays in LX for all n tiles of a block (loaded whole when
  // small, else chunk by chunk during the first n tile). B streams through two slots in contiguous
  // chunks: a transposed B (a linear layer's weight, [n, k] in DRAM) in tiles of tn whole rows of
  // K; a row-major B in K steps of tk whole rows of the block's N. Each DMA pays the DRAM latency,
  // so large, contiguous requests matter more than small tiles.
  Tiles t;
  t.tm = std::min<int64_t>(grid.mb, 512);
  auto pipeline_split = [&](int64_t extent, int64_t unit) {  // ~4 steps, multiples of unit
    const int64_t target = extent >= 4 * unit ? 4 : extent >= 2 * unit ? 2 : 1;
    return std::min(extent, round_up(ceil_div(extent, target), unit));
  };
  if (trans_b) {
    // Long K is cut too, so the first matmul starts after a quarter of the first tiles land.
    t.tk = K >= 512 ? std::max<int64_t>(256, round_up(ceil_div(K, 4), 64)) : K;
    t.tn = pipeline_split(grid.nb, cfg.pt_lanes);
  } else {
    t.tn = grid.nb;  // whole rows of the block: a K step is contiguous when the block spans N
    t.tk = pipeline_split(K, 64);
  }
  auto working_set = [&](const Tiles& x) {
    int64_t ws = 2 * round_up(x.tm * K * esA, 128) + 2 * round_up(x.tk * x.tn * esA, 128) +
                 2 * round_up(x.tm * x.tn * 4, 128);
    if (O.dt != isa::DType::F32) ws += 2 * round_up(x.tm * x.tn * esO, 128);
    if (is_addmm)
      ws += 2 * round_up((bias_rows ? x.tm : 1) * x.tn * esBias, 128) +
            4 * round_up((bias_rows ? x.tm : 1) * x.tn * 4, 128) + 256;
    if (ep)
      ws += 2 * ep->slots * round_up((x.tm + 2) * x.tn * 4, 128) +
            static_cast<int64_t>(ep->p.vals.size()) * 128;
    return ws;
  };
  while (working_set(t) > k.lx_budget()) {
    if (2 * t.tm * K * esA > k.lx_budget() / 2 && t.tm > 2 * cfg.pt_rows)
      t.tm = round_up(t.tm / 2, cfg.pt_rows);
    else if (!trans_b && t.tk > 64)
      t.tk = round_up(t.tk / 2, 64);
    else if (t.tn > cfg.pt_lanes)
      t.tn = round_up(t.tn / 2, cfg.pt_lanes);
    else if (trans_b && t.tk > 64)
      t.tk = round_up(t.tk / 2, 64);
    else if (t.tm > 2 * cfg.pt_rows)
      t.tm = round_up(t.tm / 2, cfg.pt_rows);
    else
      throw Error(k.g.file + ": " + ir::describe(n),
                  "working set does not fit LX: " + std::to_string(working_set(t)) + " bytes for " +
                      std::to_string(k.lx_budget()) + " usable");
  }

  // --- LX plan (the same on every core)
  int64_t A_slot[2], B_slot[2], C_slot[2], O_slot[2] = {0, 0}, bias16[2] = {0, 0},
                                           bias32[2][2] = {};
  for (int s = 0; s < 2; ++s) {
    A_slot[s] = k.lx.alloc("A" + std::to_string(s), t.tm * K * esA);
    B_slot[s] = k.lx.alloc("B" + std::to_string(s), t.tk * t.tn * esA);
    C_slot[s] = k.lx.alloc("acc" + std::to_string(s), t.tm * t.tn * 4);
    if (O.dt != isa::DType::F32)
      O_slot[s] = k.lx.alloc("out" + std::to_string(s), t.tm * t.tn * esO);
    if (is_addmm) {
      const int64_t brows = bias_rows ? t.tm : 1;
      bias16[s] = k.lx.alloc("bias" + std::to_string(s), brows * t.tn * esBias);
      for (int cl = 0; cl < 2; ++cl)
        bias32[s][cl] = k.lx.alloc("bias_f32_" + std::to_string(s) + "_cl" + std::to_string(cl),
                                   brows * t.tn * 4);
    }
  }
  std::vector<std::array<int64_t, 2>> ep_slot;
  std::vector<int64_t> ep_const;
  if (ep) {
    for (int s = 0; s < ep->slots; ++s) {
      ep_slot.push_back({});
      for (int par = 0; par < 2; ++par)
        ep_slot.back()[static_cast<size_t>(par)] = k.lx.alloc(
            "epi" + std::to_string(s) + "_" + std::to_string(par), (t.tm + 2) * t.tn * 4);
    }
    for (size_t v = 0; v < ep->p.vals.size(); ++v)
      ep_const.push_back(ep->is_const[v] ? k.lx.alloc("epi_const_v" + std::to_string(v), 4) : -1);
  }
  int64_t alpha_at = -1, beta_at = -1;
  if (alpha != 1.0) alpha_at = k.lx.alloc("alpha", 4);
  if (is_addmm && beta != 1.0) beta_at = k.lx.alloc("beta", 4);

  // A small panel (or one without K steps) is loaded whole: one contiguous DMA beats several
  // short-row ones; a large one is loaded chunk by chunk so the first matmul starts early.
  const bool a_whole = t.tk >= K || t.tm * K * esA <= 64 * 1024;
  auto addr = [&](const Mat& m, int64_t b, int64_t i, int64_t j) {
    return k.dram_addr(m.buffer, m.off + b * m.sb + i * m.s0 + j * m.s1);
  };
  const isa::DType f32 = isa::DType::F32;

  // --- per core
  for (int64_t core = 0; core < cfg.cores; ++core) {
    std::vector<Step> steps;
    for (size_t bi = static_cast<size_t>(core); bi < blocks.size();
         bi += static_cast<size_t>(cfg.cores)) {
      const Block& bl = blocks[bi];
      for (int64_t m0 = bl.m0; m0 < bl.m1; m0 += t.tm)
        for (int64_t n0 = bl.n0; n0 < bl.n1; n0 += t.tn)
          for (int64_t k0 = 0; k0 < K; k0 += t.tk)
            steps.push_back({static_cast<int64_t>(bi), m0, std::min(bl.m1, m0 + t.tm), n0,
                             std::min(bl.n1, n0 + t.tn), k0, std::min(K, k0 + t.tk), k0 == 0,
                             k0 + t.tk >= K});
    }
    if (steps.empty()) continue;
    // Slot assignment: a tile already in a slot is not loaded again. The A panel of an m tile
    // fills chunk by chunk (K steps) during its first n tile and stays for the others.
    std::tuple<int64_t, int64_t> a_key{-1, -1};
    std::set<int64_t> a_chunks;
    std::tuple<int64_t, int64_t, int64_t> b_key{-1, -1, -1};
    int a_slot = 1, b_slot = 1, c_slot = 1;
    for (auto& s : steps) {
      const int64_t b = blocks[static_cast<size_t>(s.blk)].b;
      auto ak = std::make_tuple(b, s.m0);
      auto bk = std::make_tuple(b, s.k0, s.n0);
      if (ak != a_key) a_slot ^= 1, a_key = ak, a_chunks.clear();
      if (a_whole) {
        if (a_chunks.insert(0).second) s.load_a = true;
      } else if (a_chunks.insert(s.k0).second) {
        s.load_a = true;
      }
      if (bk != b_key) b_slot ^= 1, s.load_b = true, b_key = bk;
      if (s.first_k) c_slot ^= 1;
      s.a_slot = a_slot, s.b_slot = b_slot, s.c_slot = c_slot;
    }
    Emitter em = k.emitter(core);
    if (alpha_at >= 0) em.fill(0, Tile{alpha_at, 0, 0, f32}, 1, 1, alpha);
    if (beta_at >= 0) em.fill(0, Tile{beta_at, 0, 0, f32}, 1, 1, beta);
    auto ep_tile = [&](int v, int cl, int64_t h0, int par) {
      const TVal& tv = ep->p.vals[static_cast<size_t>(v)];
      if (ep->is_const[static_cast<size_t>(v)])
        return Tile{ep_const[static_cast<size_t>(v)], 0, 0, tv.dt};
      const int sl = ep->slot[static_cast<size_t>(v)];
      if (sl < 0) {  // the matmul's output tile
        if (O.dt == f32) return Tile{C_slot[par] + h0 * t.tn * 4, t.tn, 1, f32};
        return Tile{O_slot[par] + h0 * t.tn * esO, t.tn, 1, O.dt};
      }
      const int64_t row = tv.r ? h0 : t.tm + cl;
      return Tile{ep_slot[static_cast<size_t>(sl)][static_cast<size_t>(par)] + row * t.tn * 4,
                  tv.r ? t.tn : 0, tv.c ? 1 : 0, tv.dt};
    };
    // One SFP op of the epilogue on `rows` x `cols` of corelet cl's part of a tile.
    auto ep_op = [&](const TOp& op, int cl, int64_t h0, int par, int64_t nr, int64_t nt) {
      const TVal& d = ep->p.vals[static_cast<size_t>(op.dst)];
      const int64_t rows = d.r ? nr : 1, cols = d.c ? nt : 1;
      const Tile dst = ep_tile(op.dst, cl, h0, par);
      auto src = [&](size_t j) { return ep_tile(op.src[j], cl, h0, par); };
      switch (op.kind) {
        case TOp::Unary: em.un(cl, op.fn, dst, src(0), rows, cols); break;
        case TOp::Binary: em.bin(cl, op.fn, dst, src(0), src(1), rows, cols); break;
        case TOp::Select: em.sel(cl, dst, src(0), src(1), src(2), rows, cols); break;
        case TOp::Convert: em.cvt(cl, dst, src(0), rows, cols); break;
        case TOp::Fill: em.fill(cl, dst, rows, cols, op.value); break;
        default: break;
      }
    };
    if (ep)
      for (const auto& op : ep->p.ops)
        if (op.dst >= 0 && ep->is_const[static_cast<size_t>(op.dst)]) ep_op(op, 0, 0, 0, 1, 1);
    // DMA of an epilogue access for corelet cl's rows [h0, h0 + nr) of a tile at (m0, n0).
    auto ep_dma = [&](int acc, int v, int cl, int64_t m0, int64_t n0, int64_t h0, int par,
                      int64_t nr, int64_t nt, bool store) {
      const TileAccess& ta = ep->acc[static_cast<size_t>(acc)];
      const TVal& tv = ep->p.vals[static_cast<size_t>(v)];
      const int64_t es = isa::dtype_size_bytes(tv.dt);
      const int64_t rows = tv.r ? nr : 1, cols = tv.c ? nt : 1;
      const std::string& buf = ep->p.accesses[static_cast<size_t>(acc)].buffer;
      const uint64_t dram = k.dram_addr(buf, ta.offset + (m0 + h0) * ta.rs + n0 * ta.cs);
      const Tile lx = ep_tile(v, cl, h0, par);
      const DmaShape sh =
          rows == 1 ? DmaShape{cols * es} : DmaShape{cols * es, rows, ta.rs * es, t.tn * es};
      if (store)
        em.store(lx.addr, dram, sh);
      else
        em.load(dram, lx.addr, sh);
    };

    auto split_rows = [&](int64_t mt) {  // corelet row split of a tile
      int64_t h = cfg.corelets < 2 ? mt : std::min(mt, round_up(ceil_div(mt, 2), cfg.pt_rows));
      return std::array<std::pair<int64_t, int64_t>, 2>{std::make_pair(int64_t{0}, h),
                                                        std::make_pair(h, mt)};
    };
    auto emit_loads = [&](const Step& s) {
      const int64_t b = blocks[static_cast<size_t>(s.blk)].b;
      const int64_t mt = s.m1 - s.m0, nt = s.n1 - s.n0, kt = s.k1 - s.k0;
      if (s.load_a && a_whole)
        em.load(addr(A, b, s.m0, 0), A_slot[s.a_slot], DmaShape{K * esA, mt, A.s0 * esA, K * esA});
      else if (s.load_a)
        em.load(addr(A, b, s.m0, s.k0), A_slot[s.a_slot] + s.k0 * esA,
                DmaShape{kt * esA, mt, A.s0 * esA, K * esA});
      if (s.load_b) {
        if (trans_b)
          em.load(addr(B, b, s.k0, s.n0), B_slot[s.b_slot],
                  DmaShape{kt * esA, nt, B.s1 * esA, t.tk * esA});
        else
          em.load(addr(B, b, s.k0, s.n0), B_slot[s.b_slot],
                  DmaShape{nt * esA, kt, B.s0 * esA, t.tn * esA});
      }
      if (ep && s.first_k) {
        auto halves = split_rows(mt);
        for (const auto& op : ep->p.ops) {
          if (op.kind != TOp::Load || ep->slot[static_cast<size_t>(op.dst)] < 0) continue;
          if (ep->is_const[static_cast<size_t>(op.dst)]) continue;
          for (int cl = 0; cl < 2; ++cl) {
            auto [h0, h1] = halves[static_cast<size_t>(cl)];
            if (h1 > h0)
              ep_dma(op.access, op.dst, cl, s.m0, s.n0, h0, s.c_slot, h1 - h0, nt, false);
          }
        }
      }
      if (is_addmm && s.first_k) {
        const int64_t brows = bias_rows ? mt : 1, bcols = bias_scalar ? 1 : nt;
        em.load(addr(bias, 0, bias_rows ? s.m0 : 0, bias_scalar ? 0 : s.n0), bias16[s.c_slot],
                DmaShape{bcols * esBias, brows, bias.s0 * esBias, t.tn * esBias});
      }
    };
    auto emit_compute = [&](const Step& s) {
      const int64_t mt = s.m1 - s.m0, nt = s.n1 - s.n0, kt = s.k1 - s.k0;
      auto halves = split_rows(mt);
      for (int cl = 0; cl < 2; ++cl) {
        auto [h0, h1] = halves[static_cast<size_t>(cl)];
        if (h1 <= h0) continue;
        em.mm(cl, A_slot[s.a_slot] + (h0 * K + s.k0) * esA, B_slot[s.b_slot],
              C_slot[s.c_slot] + h0 * t.tn * 4, h1 - h0, nt, kt, K, trans_b ? t.tk : t.tn, t.tn,
              A.dt, !s.first_k, trans_b);
      }
    };
    auto emit_epilogue = [&](const Step& s) {
      const int64_t b = blocks[static_cast<size_t>(s.blk)].b;
      const int64_t mt = s.m1 - s.m0, nt = s.n1 - s.n0;
      auto halves = split_rows(mt);
      for (int cl = 0; cl < 2; ++cl) {
        auto [h0, h1] = halves[static_cast<size_t>(cl)];
        const int64_t nr = h1 - h0;
        if (nr <= 0) continue;
        Tile acc{C_slot[s.c_slot] + h0 * t.tn * 4, t.tn, 1, f32};
        if (alpha_at >= 0) em.bin(cl, sfp_fn("mul"), acc, acc, Tile{alpha_at, 0, 0, f32}, nr, nt);
        if (is_addmm) {
          const int64_t brows = bias_rows ? nr : 1, bcols = bias_scalar ? 1 : nt;
          const int64_t r0 = bias_rows ? h0 : 0;
          Tile b16{bias16[s.c_slot] + r0 * t.tn * esBias, t.tn, 1, bias.dt};
          Tile b32{bias32[s.c_slot][cl], t.tn, 1, f32};
          if (bias.dt != f32)
            em.cvt(cl, b32, b16, brows, bcols);
          else
            em.un(cl, sfp_fn("copy"), b32, b16, brows, bcols);
          if (beta_at >= 0)
            em.bin(cl, sfp_fn("mul"), b32, b32, Tile{beta_at, 0, 0, f32}, brows, bcols);
          Tile bop{b32.addr, bias_rows ? t.tn : 0, bias_scalar ? 0 : 1, f32};
          em.bin(cl, sfp_fn("add"), acc, acc, bop, nr, nt);
        }
        int64_t src = acc.addr;
        if (O.dt != f32) {
          Tile out{O_slot[s.c_slot] + h0 * t.tn * esO, t.tn, 1, O.dt};
          em.cvt(cl, out, acc, nr, nt);
          src = out.addr;
        }
        const int64_t es_src = O.dt != f32 ? esO : 4;
        if (k.store_output)
          em.store(src, addr(O, b, s.m0 + h0, s.n0),
                   DmaShape{nt * esO, nr, O.s0 * esO, t.tn * es_src});
        if (!ep) continue;
        for (const auto& op : ep->p.ops) {
          if (op.kind == TOp::Load) continue;
          if (op.kind == TOp::Store) {
            ep_dma(op.access, op.src[0], cl, s.m0, s.n0, h0, s.c_slot, nr, nt, true);
            continue;
          }
          if (!ep->is_const[static_cast<size_t>(op.dst)]) ep_op(op, cl, h0, s.c_slot, nr, nt);
        }
      }
    };
    emit_loads(steps[0]);
    for (size_t i = 0; i < steps.size(); ++i) {
      if (i + 1 < steps.size()) emit_loads(steps[i + 1]);
      emit_compute(steps[i]);
      if (steps[i].last_k) emit_epilogue(steps[i]);
    }
  }

  k.report["unit"] = "pt";
  k.report["split"] = grid.to_json();
  k.report["tiles"] = {{"tm", t.tm}, {"tn", t.tn}, {"tk", t.tk}, {"trans_b", trans_b}};
  k.report["shape"] = {{"batch", Bt}, {"m", M}, {"n", N}, {"k", K}};
  if (ep)
    k.report["epilogue"] = {{"nodes", k.epilogue->name},
                            {"ops", ep->p.ops.size()},
                            {"lx_slots", ep->slots},
                            {"output_stored", k.store_output}};
}

}  // namespace spyre::compiler
