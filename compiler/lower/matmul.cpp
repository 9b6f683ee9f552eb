// extern_kernels.mm / addmm / bmm on the PT arrays (split, tiles and multicast: divide.h).
//
// Each core owns one block (batch, M, N, K ranges; divide.h). Inside a block the output is cut
// into tm x tn tiles (fp32 accumulator) and K into tk steps; A and B tiles go to ping-pong LX
// slots, so the load of the next step overlaps the matmul of this one. With more than one
// output tile per core the accumulator and output tile alternate too. The tile's rows are split
// between the corelets (pt0/sfp0 the first half). Ordering between a core's queues comes from
// the LX ranges each instruction touches (stream.h). Across cores:
// - multicast: tile i of an A (B) group is read with dma.load mcast to the others, token
//   kArrA/kArrB + slot on each: when the other operand is private its rows are cut into parts
//   of at least a DMA burst, part p read by member (i + p) mod size (mcast_part); else member
//   i mod size reads it whole. A receiver waits once per part on its ring queue (that wait
//   stands for the remote write, so its PT queues are ordered after it) and, after its last
//   matmul on the tile, signals the loaders of tile i+nbuf (kFreeA/kFreeB + its position);
//   nbuf (divide.h `bufs`) slots per streamed operand, loads nbuf-1 steps ahead.
// - K split: after its last matmul on an output tile, core ik > 0 signals ik-1 (kRedReady) and
//   waits for its partial sum (kRedArr); core ik < gk-1 then ring.red's its accumulator into
//   ik+1's; the last core of the chain runs the epilogue and stores.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <set>
#include <tuple>

#include "matmul_walk.h"
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

// The rows [r0, r1) of a multicast tile of `rows` rows of `row_bytes` (sequence number idx)
// that member `member` of a group of gs cores reads and multicasts. The rows are cut into up
// to gs parts, part p read by member (idx + p) mod gs: every core then streams its share of
// the tile, so the tile arrives at the rate of the cores' own loads instead of one core's
// share of the DRAM while the others load their private tiles (a B panel). A part is at least
// one DMA burst (`min_bytes`): a smaller one adds requests and handshakes, no parallelism.
// With both operands multicast (min_bytes 0) the tiles already rotate over the group's cores:
// one part, read by member idx mod gs.
std::pair<int64_t, int64_t> mcast_part(int64_t rows, int64_t row_bytes, int64_t gs, int64_t idx,
                                       int64_t member, int64_t min_bytes) {
  const int64_t np =
      min_bytes <= 0 ? 1 : std::max<int64_t>(1, std::min({gs, rows, rows * row_bytes / min_bytes}));
  const int64_t p = ((member - idx) % gs + gs) % gs;
  if (p >= np) return {0, 0};
  const int64_t chunk = (rows + np - 1) / np;
  return {std::min(rows, p * chunk), std::min(rows, (p + 1) * chunk)};
}

double kwarg(const ir::Node& n, const char* key, double def) {
  if (!n.kwargs.is_object() || !n.kwargs.contains(key)) return def;
  const auto& v = n.kwargs.at(key);
  return v.is_number() ? v.get<double>() : def;
}

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

  // --- work division and tiles (divide.h): the cost model picks the split and the tiles.
  MatmulShape shape{Bt, M, N, K, esA, esA, esO};
  shape.a_contiguous = A.s0 == K;
  shape.b_transposed = trans_b;
  shape.b_contiguous = trans_b ? B.s1 == K : B.s0 == N;
  shape.a_row_bytes = A.s0 * esA;
  shape.b_row_bytes = (trans_b ? B.s1 : B.s0) * esA;
  shape.out_row_bytes = O.s0 * esO;
  shape.epilogue_ops = (is_addmm ? 2 : 0) + (alpha != 1.0 ? 1 : 0) +
                       (ep ? static_cast<int64_t>(ep->p.ops.size()) : 0);
  const bool out_f32 = O.dt == isa::DType::F32;
  auto lx_bytes = [&](int64_t tm, int64_t tn, int64_t tk, int cs, int64_t na, int64_t nb) {
    int64_t ws = na * round_up(tm * tk * esA, 128) + nb * round_up(tk * tn * esA, 128) +
                 cs * round_up(tm * tn * 4, 128);
    if (!out_f32) ws += cs * round_up(tm * tn * esO, 128);
    if (is_addmm) {
      const int64_t brows = bias_rows ? tm : 1;
      ws += cs * round_up(brows * tn * esBias, 128) + 2 * cs * round_up(brows * tn * 4, 128) + 256;
    }
    if (ep)
      ws += cs * ep->slots * round_up((tm + 2) * tn * 4, 128) +
            static_cast<int64_t>(ep->p.vals.size()) * 128;
    return ws + 256;  // alpha, beta
  };
  nlohmann::json alternatives;
  const MatmulGrid grid = choose_matmul_grid(shape, cfg, k.lx_budget(), lx_bytes, &alternatives);
  if (grid.forced && grid.blocks() > cfg.cores)
    throw Error("compiler.matmul_split",
                ir::describe(n) + ": split b=" + std::to_string(grid.gb) +
                    " m=" + std::to_string(grid.gm) + " n=" + std::to_string(grid.gn) +
                    " k=" + std::to_string(grid.gk) + " needs " + std::to_string(grid.blocks()) +
                    " cores, the chip has " + std::to_string(cfg.cores));
  const int64_t tm = grid.tm, tn = grid.tn, tk = grid.tk;
  const int64_t ctiles_per_core = grid.bb * ceil_div(grid.mb, tm) * ceil_div(grid.nb, tn);
  const int cs = ctiles_per_core > 1 ? 2 : 1;  // accumulator / output slots
  // A panel keeps one slot per K step of the block (divide.h); otherwise two (ping-pong).
  const int64_t nbuf = grid.bufs;  // slots of a streamed operand
  const int64_t a_slots = grid.a_panel ? ceil_div(grid.kb, tk) : nbuf;
  const int64_t b_slots = grid.b_panel ? ceil_div(grid.kb, tk) : nbuf;
  const int64_t ws_bytes = lx_bytes(tm, tn, tk, cs, a_slots, b_slots);
  if (ws_bytes > k.lx_budget())
    throw Error(k.g.file + ": " + ir::describe(n),
                "working set does not fit LX: " + std::to_string(ws_bytes) + " bytes for " +
                    std::to_string(k.lx_budget()) + " usable");

  // --- LX plan (the same on every core)
  std::vector<int64_t> A_slot, B_slot;
  std::vector<int64_t> C_slot(static_cast<size_t>(cs)), O_slot(static_cast<size_t>(cs)),
      bias16(static_cast<size_t>(cs));
  std::vector<std::array<int64_t, 2>> bias32(static_cast<size_t>(cs), {0, 0});
  for (int64_t s = 0; s < std::max(a_slots, b_slots); ++s) {
    if (s < a_slots) A_slot.push_back(k.lx.alloc("A" + std::to_string(s), tm * tk * esA));
    if (s < b_slots) B_slot.push_back(k.lx.alloc("B" + std::to_string(s), tk * tn * esA));
  }
  for (int s = 0; s < cs; ++s) {
    const auto su = static_cast<size_t>(s);
    C_slot[su] = k.lx.alloc("acc" + std::to_string(s), tm * tn * 4);
    if (!out_f32) O_slot[su] = k.lx.alloc("out" + std::to_string(s), tm * tn * esO);
    if (is_addmm) {
      const int64_t brows = bias_rows ? tm : 1;
      bias16[su] = k.lx.alloc("bias" + std::to_string(s), brows * tn * esBias);
      for (int cl = 0; cl < 2; ++cl)
        bias32[su][static_cast<size_t>(cl)] = k.lx.alloc(
            "bias_f32_" + std::to_string(s) + "_cl" + std::to_string(cl), brows * tn * 4);
    }
  }
  std::vector<std::array<int64_t, 2>> ep_slot;
  std::vector<int64_t> ep_const;
  if (ep) {
    for (int s = 0; s < ep->slots; ++s) {
      ep_slot.push_back({0, 0});
      for (int par = 0; par < cs; ++par)
        ep_slot.back()[static_cast<size_t>(par)] =
            k.lx.alloc("epi" + std::to_string(s) + "_" + std::to_string(par), (tm + 2) * tn * 4);
    }
    for (size_t v = 0; v < ep->p.vals.size(); ++v)
      ep_const.push_back(ep->is_const[v] ? k.lx.alloc("epi_const_v" + std::to_string(v), 4) : -1);
  }
  int64_t alpha_at = -1, beta_at = -1;
  if (alpha != 1.0) alpha_at = k.lx.alloc("alpha", 4);
  if (is_addmm && beta != 1.0) beta_at = k.lx.alloc("beta", 4);

  auto addr = [&](const Mat& m, int64_t b, int64_t i, int64_t j) {
    return k.dram_addr(m.buffer, m.off + b * m.sb + i * m.s0 + j * m.s1);
  };
  const isa::DType f32 = isa::DType::F32;
  const auto ring_q = static_cast<int64_t>(isa::Queue::Ring);
  const auto dma_in_q = static_cast<int64_t>(isa::Queue::DmaIn);
  auto raw_wait = [&](int64_t core, int64_t q, int64_t tok, Access acc) {
    k.cores[static_cast<size_t>(core)].emit(
        isa::make_instr(isa::Opcode::Wait, {{"q", q}, {"tok", tok}}, k.id), std::move(acc));
  };
  auto raw_sig = [&](int64_t core, int64_t q, int64_t tok, int64_t to, Access acc) {
    k.cores[static_cast<size_t>(core)].emit(
        isa::make_instr(isa::Opcode::Signal, {{"q", q}, {"tok", tok}, {"core", to}}, k.id),
        std::move(acc));
  };
  auto lx_range = [](int64_t lo, int64_t bytes) {
    Access a;
    a.lx_write.push_back(ByteRange{lo, lo + bytes});
    return a;
  };

  // --- per core: its block, its steps (matmul_walk.h)
  const std::vector<MatmulCoreWork> work = matmul_walk(grid, Bt, M, N, K);
  // Multicast groups: the cores sharing an A block (vary in) and a B block (vary im).
  auto a_group = [&](const MatmulCoreWork& w) {
    std::vector<int64_t> g;
    for (int64_t j = 0; j < grid.gn; ++j) g.push_back(grid.core_of(w.ib, w.im, j, w.ik));
    return g;
  };
  auto b_group = [&](const MatmulCoreWork& w) {
    std::vector<int64_t> g;
    for (int64_t i = 0; i < grid.gm; ++i) g.push_back(grid.core_of(w.ib, i, w.in, w.ik));
    return g;
  };
  // Tokens of the cross-core handshakes (the automatic ones use 0..48, stream.h).
  constexpr int64_t kArrA = 64, kArrB = 68, kFreeA = 128, kFreeB = 192, kRedArr = 96,
                    kRedReady = 97;
  const int64_t a_tile_bytes = tm * tk * esA, b_tile_bytes = tk * tn * esA;

  for (int64_t core = 0; core < grid.cores_used; ++core) {
    const MatmulCoreWork& w = work[static_cast<size_t>(core)];
    const std::vector<MatmulStep>& steps = w.steps;
    if (steps.empty()) continue;
    const bool owner = w.ik == grid.gk - 1;  // runs the epilogue of its block
    const std::vector<int64_t> ga = a_group(w), gbv = b_group(w);
    const int64_t my_a = w.in, my_b = w.im;  // position in the groups
    Emitter em = k.emitter(core);
    if (owner && alpha_at >= 0) em.fill(0, Tile{alpha_at, 0, 0, f32}, 1, 1, alpha);
    if (owner && beta_at >= 0) em.fill(0, Tile{beta_at, 0, 0, f32}, 1, 1, beta);
    auto ep_tile = [&](int v, int cl, int64_t h0, int par) {
      const TVal& tv = ep->p.vals[static_cast<size_t>(v)];
      if (ep->is_const[static_cast<size_t>(v)])
        return Tile{ep_const[static_cast<size_t>(v)], 0, 0, tv.dt};
      const int sl = ep->slot[static_cast<size_t>(v)];
      if (sl < 0) {  // the matmul's output tile
        if (out_f32) return Tile{C_slot[static_cast<size_t>(par)] + h0 * tn * 4, tn, 1, f32};
        return Tile{O_slot[static_cast<size_t>(par)] + h0 * tn * esO, tn, 1, O.dt};
      }
      const int64_t row = tv.r ? h0 : tm + cl;
      return Tile{ep_slot[static_cast<size_t>(sl)][static_cast<size_t>(par)] + row * tn * 4,
                  tv.r ? tn : 0, tv.c ? 1 : 0, tv.dt};
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
    if (ep && owner)
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
          rows == 1 ? DmaShape{cols * es} : DmaShape{cols * es, rows, ta.rs * es, tn * es};
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
    // Smallest multicast part (mcast_part): split only when the other operand is private.
    const int64_t part_min = grid.mcast_a && grid.mcast_b ? 0 : cfg.dma_burst_bytes;
    // Rows of each multicast tile (by sequence number), to know its loaders (mcast_part).
    std::vector<std::pair<int64_t, int64_t>> a_rows, b_rows;  // rows, bytes per row
    for (const MatmulStep& s : steps) {
      if (s.load_a) a_rows.push_back({s.m1 - s.m0, (s.k1 - s.k0) * esA});
      if (s.load_b)
        b_rows.push_back(trans_b ? std::make_pair(s.n1 - s.n0, (s.k1 - s.k0) * esA)
                                 : std::make_pair(s.k1 - s.k0, (s.n1 - s.n0) * esA));
    }
    // A load of one operand tile: local, or (multicast) its rows cut among the group's cores,
    // each reading its part and multicasting it (mcast_part).
    auto load_tile = [&](bool mcast, const std::vector<int64_t>& group, int64_t pos, int64_t idx,
                         int64_t free_tok, int64_t arr_tok, uint64_t dram, int64_t lx,
                         DmaShape sh) {
      if (!mcast) {
        em.load(dram, lx, sh);
        return;
      }
      const auto gs = static_cast<int64_t>(group.size());
      const auto [r0, r1] = mcast_part(sh.rows, sh.bytes, gs, idx, pos, part_min);
      if (r1 <= r0) return;  // other cores of the group read it
      dram += static_cast<uint64_t>(r0 * sh.dram_stride);
      lx += r0 * sh.lx_stride;
      sh.rows = r1 - r0;
      // Every other core of the group has finished with this slot (its previous tile).
      if (idx >= nbuf)
        for (int64_t p = 0; p < gs; ++p)
          if (p != pos) raw_wait(core, dma_in_q, free_tok + p, Access{});
      int64_t mask = 0;
      for (int64_t p = 0; p < gs; ++p)
        if (p != pos) mask |= int64_t{1} << group[static_cast<size_t>(p)];
      if (sh.rows > 1 && sh.dram_stride == sh.bytes && sh.lx_stride == sh.bytes)
        sh = DmaShape{sh.bytes * sh.rows};
      Access acc;
      acc.dram_read.push_back(dma_span(static_cast<int64_t>(dram), sh, true));
      acc.lx_write.push_back(dma_span(lx, sh, false));
      k.cores[static_cast<size_t>(core)].emit(isa::make_instr(isa::Opcode::DmaLoad,
                                                              {{"dram", static_cast<int64_t>(dram)},
                                                               {"lx", lx},
                                                               {"bytes", sh.bytes},
                                                               {"rows", sh.rows},
                                                               {"dram_stride", sh.dram_stride},
                                                               {"lx_stride", sh.lx_stride},
                                                               {"mcast", mask},
                                                               {"mtok", arr_tok + idx % nbuf}},
                                                              k.id),
                                              std::move(acc));
    };
    // The B tile of step s (K rows, or N rows when transposed).
    auto b_shape = [&](const MatmulStep& s) {
      const int64_t nt = s.n1 - s.n0, kt = s.k1 - s.k0;
      return trans_b ? DmaShape{kt * esA, nt, B.s1 * esA, tk * esA}
                     : DmaShape{nt * esA, kt, B.s0 * esA, tn * esA};
    };
    auto load_b = [&](const MatmulStep& s) {
      load_tile(grid.mcast_b, gbv, my_b, s.b_idx, kFreeB, kArrB, addr(B, s.b, s.k0, s.n0),
                B_slot[static_cast<size_t>(s.b_slot)], b_shape(s));
    };
    auto emit_loads = [&](const MatmulStep& s) {
      const int64_t mt = s.m1 - s.m0, nt = s.n1 - s.n0, kt = s.k1 - s.k0;
      if (s.load_a)
        load_tile(grid.mcast_a, ga, my_a, s.a_idx, kFreeA, kArrA, addr(A, s.b, s.m0, s.k0),
                  A_slot[static_cast<size_t>(s.a_slot)],
                  DmaShape{kt * esA, mt, A.s0 * esA, tk * esA});
      if (s.load_b) load_b(s);
      const auto cp = static_cast<size_t>(s.ctile % cs);
      if (owner && ep && s.first_k) {
        auto halves = split_rows(mt);
        for (const auto& op : ep->p.ops) {
          if (op.kind != TOp::Load || ep->slot[static_cast<size_t>(op.dst)] < 0) continue;
          if (ep->is_const[static_cast<size_t>(op.dst)]) continue;
          for (int cl = 0; cl < 2; ++cl) {
            auto [h0, h1] = halves[static_cast<size_t>(cl)];
            if (h1 > h0) ep_dma(op.access, op.dst, cl, s.m0, s.n0, h0, cp, h1 - h0, nt, false);
          }
        }
      }
      if (owner && is_addmm && s.first_k) {
        const int64_t brows = bias_rows ? mt : 1, bcols = bias_scalar ? 1 : nt;
        em.load(addr(bias, 0, bias_rows ? s.m0 : 0, bias_scalar ? 0 : s.n0), bias16[cp],
                DmaShape{bcols * esBias, brows, bias.s0 * esBias, tn * esBias});
      }
    };
    auto emit_compute = [&](const MatmulStep& s) {
      const int64_t mt = s.m1 - s.m0, nt = s.n1 - s.n0, kt = s.k1 - s.k0;
      const int64_t as = A_slot[static_cast<size_t>(s.a_slot)],
                    bs = B_slot[static_cast<size_t>(s.b_slot)];
      // Tiles multicast by another core: their arrival token, on the ring queue, stands for
      // the remote write of the slot (the PT queues are ordered after it automatically).
      // One wait per part another core loads.
      auto arrivals = [&](const std::vector<std::pair<int64_t, int64_t>>& rows, int64_t gs,
                          int64_t pos, int64_t idx, int64_t tok, int64_t slot, int64_t bytes) {
        for (int64_t q = 0; q < gs; ++q) {
          const auto [nr, rb] = rows[static_cast<size_t>(idx)];
          const auto [r0, r1] = mcast_part(nr, rb, gs, idx, q, part_min);
          if (q != pos && r1 > r0) raw_wait(core, ring_q, tok + idx % nbuf, lx_range(slot, bytes));
        }
      };
      if (grid.mcast_a && s.load_a)
        arrivals(a_rows, static_cast<int64_t>(ga.size()), my_a, s.a_idx, kArrA, as, a_tile_bytes);
      if (grid.mcast_b && s.load_b)
        arrivals(b_rows, static_cast<int64_t>(gbv.size()), my_b, s.b_idx, kArrB, bs, b_tile_bytes);
      auto halves = split_rows(mt);
      const int64_t cslot = C_slot[static_cast<size_t>(s.ctile % cs)];
      for (int cl = 0; cl < 2; ++cl) {
        auto [h0, h1] = halves[static_cast<size_t>(cl)];
        if (h1 <= h0) continue;
        em.mm(cl, as + h0 * tk * esA, bs, cslot + h0 * tn * 4, h1 - h0, nt, kt, tk,
              trans_b ? tk : tn, tn, A.dt, !s.first_k, trans_b);
      }
      // The slot is free for the group's tile nbuf ahead: tell its loaders (after both PTs).
      auto release = [&](bool mcast, const std::vector<int64_t>& group, int64_t pos, int64_t idx,
                         const std::vector<std::pair<int64_t, int64_t>>& rows, int64_t free_tok,
                         int64_t slot, int64_t bytes) {
        const int64_t next = idx + nbuf;
        if (!mcast || next >= static_cast<int64_t>(rows.size())) return;
        const auto gs = static_cast<int64_t>(group.size());
        for (int64_t q = 0; q < gs; ++q) {
          const auto [nr, rb] = rows[static_cast<size_t>(next)];
          const auto [r0, r1] = mcast_part(nr, rb, gs, next, q, part_min);
          if (q != pos && r1 > r0)
            raw_sig(core, ring_q, free_tok + pos, group[static_cast<size_t>(q)],
                    lx_range(slot, bytes));
        }
      };
      if (s.a_last) release(grid.mcast_a, ga, my_a, s.a_idx, a_rows, kFreeA, as, a_tile_bytes);
      if (s.b_last) release(grid.mcast_b, gbv, my_b, s.b_idx, b_rows, kFreeB, bs, b_tile_bytes);
    };
    // K split: partial sums along the chain ik = 0 -> 1 -> ... -> gk-1 (the owner).
    auto emit_reduce = [&](const MatmulStep& s) {
      if (grid.gk == 1) return;
      const int64_t cslot = C_slot[static_cast<size_t>(s.ctile % cs)];
      const int64_t bytes = (s.m1 - s.m0) * tn * 4;
      if (w.ik > 0) {
        // Ready for the predecessor's partial sum once this core's own matmuls are done.
        raw_sig(core, ring_q, kRedReady, core - 1, lx_range(cslot, bytes));
        raw_wait(core, ring_q, kRedArr, lx_range(cslot, bytes));
      }
      if (!owner) {
        raw_wait(core, ring_q, kRedReady, Access{});
        Access acc;
        acc.lx_read.push_back(ByteRange{cslot, cslot + bytes});
        k.cores[static_cast<size_t>(core)].emit(isa::make_instr(isa::Opcode::RingReduce,
                                                                {{"src", cslot},
                                                                 {"dst_core", core + 1},
                                                                 {"dst", cslot},
                                                                 {"bytes", bytes},
                                                                 {"tok", kRedArr}},
                                                                k.id),
                                                std::move(acc));
      }
    };
    auto emit_epilogue = [&](const MatmulStep& s) {
      const int64_t mt = s.m1 - s.m0, nt = s.n1 - s.n0;
      const auto cp = static_cast<size_t>(s.ctile % cs);
      auto halves = split_rows(mt);
      for (int cl = 0; cl < 2; ++cl) {
        auto [h0, h1] = halves[static_cast<size_t>(cl)];
        const int64_t nr = h1 - h0;
        if (nr <= 0) continue;
        Tile acc{C_slot[cp] + h0 * tn * 4, tn, 1, f32};
        if (alpha_at >= 0) em.bin(cl, sfp_fn("mul"), acc, acc, Tile{alpha_at, 0, 0, f32}, nr, nt);
        if (is_addmm) {
          const int64_t brows = bias_rows ? nr : 1, bcols = bias_scalar ? 1 : nt;
          const int64_t r0 = bias_rows ? h0 : 0;
          Tile b16{bias16[cp] + r0 * tn * esBias, tn, 1, bias.dt};
          Tile b32{bias32[cp][static_cast<size_t>(cl)], tn, 1, f32};
          if (bias.dt != f32)
            em.cvt(cl, b32, b16, brows, bcols);
          else
            em.un(cl, sfp_fn("copy"), b32, b16, brows, bcols);
          if (beta_at >= 0)
            em.bin(cl, sfp_fn("mul"), b32, b32, Tile{beta_at, 0, 0, f32}, brows, bcols);
          Tile bop{b32.addr, bias_rows ? tn : 0, bias_scalar ? 0 : 1, f32};
          em.bin(cl, sfp_fn("add"), acc, acc, bop, nr, nt);
        }
        int64_t src = acc.addr;
        if (!out_f32) {
          Tile out{O_slot[cp] + h0 * tn * esO, tn, 1, O.dt};
          em.cvt(cl, out, acc, nr, nt);
          src = out.addr;
        }
        const int64_t es_src = !out_f32 ? esO : 4;
        if (k.store_output)
          em.store(src, addr(O, s.b, s.m0 + h0, s.n0),
                   DmaShape{nt * esO, nr, O.s0 * esO, tn * es_src});
        if (!ep) continue;
        for (const auto& op : ep->p.ops) {
          if (op.kind == TOp::Load) continue;
          if (op.kind == TOp::Store) {
            ep_dma(op.access, op.src[0], cl, s.m0, s.n0, h0, cp, nr, nt, true);
            continue;
          }
          if (!ep->is_const[static_cast<size_t>(op.dst)]) ep_op(op, cl, h0, cp, nr, nt);
        }
      }
    };
    // Loads run nbuf - 1 steps ahead of the matmuls.
    const auto ahead = static_cast<size_t>(nbuf - 1);
    for (size_t i = 0; i < std::min(ahead, steps.size()); ++i) emit_loads(steps[i]);
    for (size_t i = 0; i < steps.size(); ++i) {
      if (i + ahead < steps.size()) emit_loads(steps[i + ahead]);
      emit_compute(steps[i]);
      if (steps[i].last_k) {
        emit_reduce(steps[i]);
        if (owner) emit_epilogue(steps[i]);
      }
    }
  }

  // --- report: the split, the tiles, the multicast groups and K chains, the prediction
  nlohmann::json split = grid.to_json();
  auto groups_json = [&](bool a) {
    nlohmann::json gs = nlohmann::json::array();
    for (const auto& w : work) {
      if (a ? w.in != 0 : w.im != 0) continue;
      gs.push_back(a ? a_group(w) : b_group(w));
    }
    return gs;
  };
  split["multicast"] = {
      {"a",
       {{"enabled", grid.mcast_a},
        {"groups", grid.mcast_a ? groups_json(true) : nlohmann::json::array()}}},
      {"b",
       {{"enabled", grid.mcast_b},
        {"groups", grid.mcast_b ? groups_json(false) : nlohmann::json::array()}}}};
  nlohmann::json chains = nlohmann::json::array();
  if (grid.gk > 1)
    for (int64_t c = 0; c < grid.cores_used; c += grid.gk) {
      nlohmann::json ch = nlohmann::json::array();
      for (int64_t j = 0; j < grid.gk; ++j) ch.push_back(c + j);
      chains.push_back(ch);
    }
  split["k_reduce"] = {{"kind", grid.gk > 1 ? "ring.red chain" : "none"}, {"chains", chains}};
  split["alternatives"] = alternatives;
  split["roofline_cycles"] = matmul_roofline_cycles(shape, cfg);
  k.report["split"] = split;
  k.report["tiles"] = {{"tm", tm},           {"tn", tn},        {"tk", tk},
                       {"trans_b", trans_b}, {"acc_slots", cs}, {"a_slots", a_slots},
                       {"b_slots", b_slots}};
  k.report["unit"] = "pt";
  k.report["shape"] = {{"batch", Bt}, {"m", M}, {"n", N}, {"k", K}};
  if (ep)
    k.report["epilogue"] = {{"nodes", k.epilogue->name},
                            {"ops", ep->p.ops.size()},
                            {"lx_slots", ep->slots},
                            {"output_stored", k.store_output}};
}

}  // namespace spyre::compiler
