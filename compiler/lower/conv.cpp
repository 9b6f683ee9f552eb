// extern_kernels.convolution (2-D, not transposed) as an implicit GEMM on the PT arrays.
//
// Per group g the output [N*OH*OW, OCg] = sum over taps (kh, kw) and input-channel chunks of
// X_shift[pixels, ic] x W[kh, kw][ic, oc]. The output is cut into tiles of (n, a range of output
// rows oh, a range of output columns ow) pixels x tn output channels; each core owns a
// contiguous run of tiles (tiles are ordered group, n, pixels, channels). For one tile, every
// K step (kh, kw, ic chunk) brings:
// - the shifted input block into an A slot [pixels, tk] by one strided DMA (ic contiguous in
//   channels-last, rows = output columns with stride s_w*dil, reps = output rows with stride
//   s_h*dil); where the tap reaches into the padding the slot is first zero-filled (sfp.fill)
//   and only the valid part is loaded;
// - the weight slice W[oc0.., ic0.., kh, kw] into a B slot stored [tn, tk] (pt.mm's
//   transposed-B form);
// and pt.mm accumulates into the tile's fp32 accumulator (the pixel rows split between the
// corelets). A and B slots alternate, so the next step's loads overlap this step's matmul;
// ordering between queues comes from the LX ranges each instruction touches (stream.h). After
// the last step the bias (if any) is added on the SFP, the tile converted to the output dtype
// and stored with one strided DMA.
#include "spyre/compiler/conv.h"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "spyre/arch/unit_timing.h"
#include "spyre/compiler/cost.h"
#include "spyre/compiler/emit.h"
#include "spyre/compiler/epilogue.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

std::array<int64_t, 2> pair_kwarg(const ir::Node& n, const char* key, int64_t def) {
  std::array<int64_t, 2> r{def, def};
  if (!n.kwargs.is_object() || !n.kwargs.contains(key)) return r;
  const auto& v = n.kwargs.at(key);
  if (v.is_number_integer()) return {v.get<int64_t>(), v.get<int64_t>()};
  if (v.is_array() && v.size() == 1 && v[0].is_number_integer())
    return {v[0].get<int64_t>(), v[0].get<int64_t>()};
  if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer())
    return {v[0].get<int64_t>(), v[1].get<int64_t>()};
  return {-1, -1};
}

struct Tile4 {  // one output tile: images [n, n + nb) (whole images when nb > 1)
  int64_t g, n, nb, oh0, oh1, ow0, ow1, oc0, oc1;
};

}  // namespace

void lower_conv(Kernel& k) {
  const ir::Node& n = k.node;
  const arch::ArchConfig& cfg = k.cfg;
  if (n.inputs.size() != 2 && n.inputs.size() != 3)
    k.unsupported("convolution with " + std::to_string(n.inputs.size()) + " tensor inputs");
  if (n.outputs.size() != 1)
    k.unsupported("convolution with " + std::to_string(n.outputs.size()) + " outputs");
  if (n.kwargs.is_object() && n.kwargs.contains("transposed") &&
      n.kwargs.at("transposed").is_boolean() && n.kwargs.at("transposed").get<bool>())
    k.unsupported("transposed convolution");
  const ir::TensorView& X = n.inputs[0];
  const ir::TensorView& Wv = n.inputs[1];
  const ir::TensorView& O = n.layout;
  if (X.size.size() != 4 || Wv.size.size() != 4 || O.size.size() != 4)
    k.unsupported("convolution that is not 2-D (input of rank " + std::to_string(X.size.size()) +
                  ")");
  const auto stride = pair_kwarg(n, "stride", 1), pad = pair_kwarg(n, "padding", 0),
             dil = pair_kwarg(n, "dilation", 1);
  int64_t groups = 1;
  if (n.kwargs.is_object() && n.kwargs.contains("groups") &&
      n.kwargs.at("groups").is_number_integer())
    groups = n.kwargs.at("groups").get<int64_t>();
  if (stride[0] < 1 || stride[1] < 1 || pad[0] < 0 || pad[1] < 0 || dil[0] < 1 || dil[1] < 1 ||
      groups < 1)
    k.unsupported("convolution with unsupported stride/padding/dilation/groups");
  const int64_t N = X.size[0], C = X.size[1], H = X.size[2], W = X.size[3];
  const int64_t OC = Wv.size[0], ICg = Wv.size[1], KH = Wv.size[2], KW = Wv.size[3];
  const int64_t OH = O.size[2], OW = O.size[3];
  if (C != ICg * groups || OC % groups != 0 || O.size[0] != N || O.size[1] != OC ||
      OH != (H + 2 * pad[0] - dil[0] * (KH - 1) - 1) / stride[0] + 1 ||
      OW != (W + 2 * pad[1] - dil[1] * (KW - 1) - 1) / stride[1] + 1)
    k.unsupported("inconsistent convolution shapes");
  const int64_t OCg = OC / groups;
  if (X.dtype != Wv.dtype) k.unsupported("convolution operands of different dtypes");
  const int64_t xN = X.stride[0], xC = C == 1 ? 1 : X.stride[1], xH = X.stride[2], xW = X.stride[3];
  if (xC != 1)
    k.unsupported("convolution input with channel stride " + std::to_string(xC) +
                  " (channels-last input expected)");
  const int64_t oN = O.stride[0], oC = OC == 1 ? 1 : O.stride[1], oH = O.stride[2],
                oW = O.stride[3];
  // Channels-last output is stored as the GEMM tile [pixels, channels]; a planar (NCHW) one,
  // which Inductor picks when the input has one channel (both layouts then have the same
  // strides), goes through an SFP copy into [channels, pixels] and one DMA run per channel.
  const bool planar = oC != 1;
  if (planar && oW != 1)
    k.unsupported("convolution output with channel stride " + std::to_string(oC) +
                  " and width stride " + std::to_string(oW) +
                  " (channels-last or a contiguous width expected)");
  const int64_t wO = Wv.stride[0], wI = Wv.stride[1], wKH = Wv.stride[2], wKW = Wv.stride[3];
  const bool has_bias = n.inputs.size() == 3;
  const ir::TensorView* Bv = has_bias ? &n.inputs[2] : nullptr;
  if (has_bias && (Bv->size.size() != 1 || Bv->size[0] != OC))
    k.unsupported("convolution bias of shape other than [out_channels]");
  const int64_t bS = has_bias ? Bv->stride[0] : 0;
  const isa::DType dt = X.dtype, f32 = isa::DType::F32;
  const int64_t es = isa::dtype_size_bytes(dt), esO = isa::dtype_size_bytes(O.dtype);
  const int64_t esB = has_bias ? isa::dtype_size_bytes(Bv->dtype) : 0;
  const bool out_f32 = O.dtype == f32;

  // A fused epilogue (fuse.h: BatchNorm, ReLU, residual add, ...) runs on each output tile as
  // on a matmul's: the output is the GEMM [N*OH*OW, OC], row-major when channels-last and
  // dense, and a tile must be a contiguous run of its rows (whole output rows: tw = OW).
  std::optional<Epilogue> ep;
  if (k.epilogue) {
    if (O.offset != 0 || oW != OC || oH != OW * OC || (N > 1 && oN != OH * OW * OC))
      k.unsupported("a fused epilogue needs a dense channels-last convolution output");
    ep = plan_epilogue(k.g, *k.epilogue, n.outputs[0], N * OH * OW, OC, cfg,
                       k.g.file + ": " + ir::describe(n));
  }

  // --- tiles: tm output pixels (t_oh rows of tw columns) x tn channels, K steps of tk.
  // halo: the input block a tile's taps read (its output rows and columns widened by the
  // kernel's reach) is loaded once per input-channel chunk and every tap multiplies a shifted
  // view of it (one pt.mm per output row, lda = stride x tk), instead of one strided load per
  // tap: KH x KW fewer input bytes for the price of the halo and smaller matmuls.
  // wide (a halo at stride 1, no fused epilogue, channels-last output): the tile's output rows
  // are computed as wide as the halo's (hw = tw + (KW - 1) x dilation pixels, the last
  // (KW - 1) x dilation of each row junk), so that a tap's shifted view is one contiguous run
  // of (t_oh - 1) x hw + tw halo pixels: one pt.mm per tap instead of one per output row, at
  // the price of the junk columns' MACs. The store skips the junk.
  // tb > 1: a tile of tb whole images (t_oh = OH, tw = OW, no halo), their pixels the GEMM
  // rows one after the other, so that a small feature map (7 x 7 at batch 64) still fills the
  // PT rows and each weight block serves tb images instead of one.
  struct Tiling {
    int64_t t_oh, tw, tn, tk;
    bool halo = false;
    int64_t tb = 1;
    bool wide = false;
  };
  auto halo_h = [&](int64_t th) { return (th - 1) * stride[0] + (KH - 1) * dil[0] + 1; };
  auto halo_w = [&](int64_t twa) { return (twa - 1) * stride[1] + (KW - 1) * dil[1] + 1; };
  const bool wide_ok = KH * KW > 1 && stride[0] == 1 && stride[1] == 1 && !ep && !planar;
  // Accumulator rows of a tile of th output rows of twa pixels (wide: halo-wide rows, the last
  // one's junk left out).
  auto acc_rows = [&](bool wide, int64_t th, int64_t twa) {
    return wide ? (th - 1) * halo_w(twa) + twa : th * twa;
  };
  // Weights kept in LX: when a tile covers every output channel (one group), every tile's K
  // steps multiply the same KH x KW x chunks weight slices, so each core loads each slice once
  // (with its first tile) instead of once per tile, where they fit beside the tile's slots.
  auto w_slices = [&](const Tiling& t) { return KH * KW * ceil_div(ICg, t.tk); };
  auto slots_bytes = [&](const Tiling& t, bool resident) {
    const int64_t tm = t.tb * acc_rows(t.wide, t.t_oh, t.tw), tn_ = t.tn, tk_ = t.tk;
    const int64_t a_rows = t.halo ? halo_h(t.t_oh) * halo_w(t.tw) : tm;
    int64_t ws = 2 * round_up(a_rows * tk_ * es, 128) +
                 (resident ? w_slices(t) : 2) * round_up(tn_ * tk_ * es, 128) +
                 2 * round_up(tm * tn_ * 4, 128);
    if (!out_f32 || planar) ws += 2 * round_up(tm * tn_ * esO, 128);
    if (has_bias) ws += 2 * round_up(tn_ * esB, 128) + 4 * round_up(tn_ * 4, 128);
    if (ep) ws += epilogue_lx_bytes(*ep, tm, tn_);
    return ws;
  };
  auto resident = [&](const Tiling& t) {
    return groups == 1 && t.tn >= OCg && slots_bytes(t, true) <= k.lx_budget();
  };
  auto lx_bytes = [&](const Tiling& t) { return slots_bytes(t, resident(t)); };
  // Shrinks a tiling until it fits LX; false when even the smallest does not.
  auto fit = [&](Tiling& t) {
    while (lx_bytes(t) > k.lx_budget()) {
      if (t.tb > 1)
        t.tb = ceil_div(t.tb, 2);
      else if (t.t_oh > 1)
        t.t_oh = ceil_div(t.t_oh, 2);
      else if (t.tk > 64)
        t.tk = ceil_div(t.tk, 2);
      else if (t.tn > 32)
        t.tn = ceil_div(t.tn, 2);
      else if (t.tw > cfg.pt_rows && !ep)
        t.tw = ceil_div(t.tw, 2);
      else
        return false;
    }
    return true;
  };
  auto count_tiles = [&](const Tiling& t) {
    return groups * ceil_div(N, t.tb) * ceil_div(OH, t.t_oh) * ceil_div(OW, t.tw) *
           ceil_div(OCg, t.tn);
  };
  // The first guess: 256-pixel tiles of up to 128 channels, shrunk until every core has a tile
  // (smaller pixel tiles first, then fewer channels).
  Tiling guess{1, ep ? OW : std::min<int64_t>(OW, 256), std::min<int64_t>(OCg, 128),
               std::min<int64_t>(ICg, 256)};
  guess.t_oh = std::min(OH, std::max<int64_t>(1, 256 / guess.tw));
  if (!fit(guess)) k.unsupported("convolution tiles do not fit LX");
  while (count_tiles(guess) < cfg.cores) {
    if (guess.t_oh > 1)
      guess.t_oh = ceil_div(guess.t_oh, 2);
    else if (guess.tn > 32)
      guess.tn = ceil_div(guess.tn, 2);
    else
      break;
  }

  // --- one lowering of the whole convolution with tiling t into kk's streams and report
  auto emit = [&](Kernel& kk, const Tiling& tt) {
    const int64_t t_oh = tt.t_oh, tw = tt.tw, tn = tt.tn, tk = tt.tk, tb = tt.tb;
    const bool halo = tt.halo, wide = tt.wide;
    const int64_t tm = tb * acc_rows(wide, t_oh, tw);  // accumulator rows

    std::vector<Tile4> tiles;
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t b = 0; b < N; b += tb)
        for (int64_t oh0 = 0; oh0 < OH; oh0 += t_oh)
          for (int64_t ow0 = 0; ow0 < OW; ow0 += tw)
            for (int64_t oc0 = 0; oc0 < OCg; oc0 += tn)
              tiles.push_back({g, b, std::min(tb, N - b), oh0, std::min(OH, oh0 + t_oh), ow0,
                               std::min(OW, ow0 + tw), oc0, std::min(OCg, oc0 + tn)});
    const auto T = static_cast<int64_t>(tiles.size());
    const int64_t cores_used = std::min<int64_t>(cfg.cores, T);

    // --- LX plan (the same on every core)
    int64_t A_slot[2], C_slot[2], O_slot[2] = {0, 0}, bias16[2] = {0, 0}, bias32[2][2] = {};
    const bool wres = resident(tt);
    std::vector<int64_t> B_slot(static_cast<size_t>(wres ? w_slices(tt) : 2));
    for (int s = 0; s < 2; ++s)
      A_slot[s] =
          kk.lx.alloc("A" + std::to_string(s), (halo ? halo_h(t_oh) * halo_w(tw) : tm) * tk * es);
    for (size_t s = 0; s < B_slot.size(); ++s)
      B_slot[s] = kk.lx.alloc((wres ? "W" : "B") + std::to_string(s), tn * tk * es);
    for (int s = 0; s < 2; ++s) {
      C_slot[s] = kk.lx.alloc("acc" + std::to_string(s), tm * tn * 4);
      if (!out_f32 || planar) O_slot[s] = kk.lx.alloc("out" + std::to_string(s), tm * tn * esO);
      if (has_bias) {
        bias16[s] = kk.lx.alloc("bias" + std::to_string(s), tn * esB);
        for (int cl = 0; cl < 2; ++cl)
          bias32[s][cl] =
              kk.lx.alloc("bias_f32_" + std::to_string(s) + "_cl" + std::to_string(cl), tn * 4);
      }
    }

    EpilogueLx epx;
    if (ep) {
      std::array<Tile, 2> out;
      for (size_t s = 0; s < 2; ++s)
        out[s] = out_f32 ? Tile{C_slot[s], tn, 1, f32} : Tile{O_slot[s], tn, 1, O.dtype};
      epx = alloc_epilogue_lx(kk.lx, *ep, tm, tn, out);
    }

    auto split_rows = [&](int64_t mt) {  // corelet row split of a tile
      const int64_t h = arch::pt_corelet_rows(cfg, mt);
      return std::array<std::pair<int64_t, int64_t>, 2>{std::make_pair(int64_t{0}, h),
                                                        std::make_pair(h, mt)};
    };
    // The valid output range [lo, hi) of a tile's [o0, o1) whose input index o*s - p + kk*d is
    // inside [0, extent).
    auto valid = [](int64_t o0, int64_t o1, int64_t s, int64_t p, int64_t off, int64_t extent) {
      int64_t lo = o0, hi = o1;
      while (lo < hi && lo * s - p + off < 0) ++lo;
      while (hi > lo && (hi - 1) * s - p + off >= extent) --hi;
      return std::make_pair(lo, hi);
    };

    int64_t steps_total = 0, macs = 0;
    for (int64_t core = 0; core < cores_used; ++core) {
      const int64_t t0 = core * T / cores_used, t1 = (core + 1) * T / cores_used;
      Emitter em = kk.emitter(core);
      struct Step {
        int64_t t, kh, kw, c0, c1;
        bool first, last, load_a;
        size_t a;  // A slot
      };
      std::vector<Step> steps;
      size_t a_loads = 0;
      for (int64_t t = t0; t < t1; ++t)
        for (int64_t c0 = 0; c0 < ICg; c0 += tk)  // with a halo: chunk outer, taps inner
          for (int64_t kh = 0; kh < KH; ++kh)
            for (int64_t kw = 0; kw < KW; ++kw) {
              const bool first = kh == 0 && kw == 0 && c0 == 0;
              const bool last = kh == KH - 1 && kw == KW - 1 && c0 + tk >= ICg;
              const bool load_a = !halo || (kh == 0 && kw == 0);
              if (load_a) ++a_loads;
              steps.push_back(
                  {t, kh, kw, c0, std::min(ICg, c0 + tk), first, last, load_a, (a_loads - 1) % 2});
            }
      if (!halo)  // taps outer, chunks inner: the order before the halo (weights per tap)
        std::stable_sort(steps.begin(), steps.end(), [](const Step& x, const Step& y) {
          if (x.t != y.t) return x.t < y.t;
          if (x.kh != y.kh) return x.kh < y.kh;
          if (x.kw != y.kw) return x.kw < y.kw;
          return x.c0 < y.c0;
        });
      if (!halo)
        for (size_t i = 0; i < steps.size(); ++i) steps[i].a = i % 2;
      steps_total += static_cast<int64_t>(steps.size());
      // The weight slot of step i, and whether this core has loaded it (kept weights).
      std::vector<char> w_loaded(B_slot.size(), 0);
      auto b_slot = [&](size_t i) {
        const Step& s = steps[i];
        return wres ? static_cast<size_t>(((s.c0 / tk) * KH + s.kh) * KW + s.kw) : i % 2;
      };
      auto emit_loads = [&](size_t i) {
        const Step& s = steps[i];
        const Tile4& tl = tiles[static_cast<size_t>(s.t)];
        const int64_t th = tl.oh1 - tl.oh0, twa = tl.ow1 - tl.ow0, mt = tl.nb * th * twa;
        const int64_t nt = tl.oc1 - tl.oc0, kt = s.c1 - s.c0;
        const int64_t as = A_slot[s.a], bs = B_slot[b_slot(i)];
        if (halo && s.load_a) {
          // The halo block [hh rows][hw cols][tk] of input rows from oh0*s_h - p_h and columns
          // from ow0*s_w - p_w; zero where it reaches into the padding.
          const int64_t hh = halo_h(th), hw = halo_w(twa);
          const int64_t ih0 = tl.oh0 * stride[0] - pad[0], iw0 = tl.ow0 * stride[1] - pad[1];
          const int64_t r_lo = std::max<int64_t>(0, -ih0), r_hi = std::min(hh, H - ih0);
          const int64_t c_lo = std::max<int64_t>(0, -iw0), c_hi = std::min(hw, W - iw0);
          if (r_lo != 0 || r_hi != hh || c_lo != 0 || c_hi != hw) {
            const int64_t rows = hh * hw, half = cfg.corelets < 2 ? rows : ceil_div(rows, 2);
            em.fill(0, Tile{as, tk, 1, dt}, half, kt, 0.0);
            if (rows > half) em.fill(1, Tile{as + half * tk * es, tk, 1, dt}, rows - half, kt, 0.0);
          }
          if (r_hi > r_lo && c_hi > c_lo) {
            const int64_t ic = tl.g * ICg + s.c0;
            const uint64_t dram = kk.dram_addr(
                X.buffer, X.offset + tl.n * xN + ic + (ih0 + r_lo) * xH + (iw0 + c_lo) * xW);
            em.load(dram, as + (r_lo * hw + c_lo) * tk * es,
                    DmaShape{kt * es, c_hi - c_lo, xW * es, tk * es, r_hi - r_lo, xH * es,
                             hw * tk * es});
          }
        }
        auto [h_lo, h_hi] = valid(tl.oh0, tl.oh1, stride[0], pad[0], s.kh * dil[0], H);
        auto [w_lo, w_hi] = valid(tl.ow0, tl.ow1, stride[1], pad[1], s.kw * dil[1], W);
        if (!halo && (h_lo != tl.oh0 || h_hi != tl.oh1 || w_lo != tl.ow0 || w_hi != tl.ow1)) {
          auto halves = split_rows(mt);
          for (int cl = 0; cl < 2; ++cl) {
            auto [r0, r1] = halves[static_cast<size_t>(cl)];
            if (r1 > r0) em.fill(cl, Tile{as + r0 * tk * es, tk, 1, dt}, r1 - r0, kt, 0.0);
          }
        }
        if (!halo && h_hi > h_lo && w_hi > w_lo) {
          const int64_t ih = h_lo * stride[0] - pad[0] + s.kh * dil[0];
          const int64_t iw = w_lo * stride[1] - pad[1] + s.kw * dil[1];
          const int64_t ic = tl.g * ICg + s.c0;
          // The tile's images in one load: each image's pixels after the last's.
          DmaShape sh{kt * es,     w_hi - w_lo,         stride[1] * xW * es, tk * es,
                      h_hi - h_lo, stride[0] * xH * es, twa * tk * es,       tl.nb,
                      xN * es,     th * twa * tk * es};
          const uint64_t dram =
              kk.dram_addr(X.buffer, X.offset + tl.n * xN + ic + ih * xH + iw * xW);
          const int64_t lx = as + ((h_lo - tl.oh0) * twa + (w_lo - tl.ow0)) * tk * es;
          em.load(dram, lx, sh);
        }
        const int64_t oc = tl.g * OCg + tl.oc0;
        const uint64_t wdram =
            kk.dram_addr(Wv.buffer, Wv.offset + oc * wO + s.c0 * wI + s.kh * wKH + s.kw * wKW);
        if (!wres || !w_loaded[b_slot(i)]) {
          w_loaded[b_slot(i)] = 1;
          if (wI == 1 || kt == 1)
            em.load(wdram, bs, DmaShape{kt * es, nt, wO * es, tk * es});
          else
            em.load(wdram, bs, DmaShape{es, kt, wI * es, es, nt, wO * es, tk * es});
        }
        if (ep && s.first) {
          auto halves = split_rows(mt);
          for (int cl = 0; cl < 2; ++cl) {
            auto [h0, h1] = halves[static_cast<size_t>(cl)];
            if (h1 > h0)
              emit_epilogue_loads(kk, em, epx, static_cast<int>(s.t % 2), cl,
                                  tl.n * OH * OW + tl.oh0 * OW, oc, h0, h1 - h0, nt);
          }
        }
        if (has_bias && s.first) {
          const int64_t cp = s.t % 2;
          const uint64_t bd = kk.dram_addr(Bv->buffer, Bv->offset + oc * bS);
          if (bS == 1 || nt == 1)
            em.load(bd, bias16[cp], DmaShape{nt * esB});
          else
            em.load(bd, bias16[cp], DmaShape{esB, nt, bS * esB, esB});
        }
      };
      auto emit_compute = [&](size_t i) {
        const Step& s = steps[i];
        const Tile4& tl = tiles[static_cast<size_t>(s.t)];
        const int64_t th = tl.oh1 - tl.oh0, twa = tl.ow1 - tl.ow0, mt = tl.nb * th * twa;
        const int64_t nt = tl.oc1 - tl.oc0, kt = s.c1 - s.c0;
        const int64_t as = A_slot[s.a], bs = B_slot[b_slot(i)], cslot = C_slot[s.t % 2];
        if (wide) {  // one pt.mm per tap over the tile's halo-wide rows
          const int64_t hw = halo_w(twa);
          const int64_t a = as + (s.kh * dil[0] * hw + s.kw * dil[1]) * tk * es;
          auto halves = split_rows(acc_rows(true, th, twa));
          for (int cl = 0; cl < 2; ++cl) {
            auto [h0, h1] = halves[static_cast<size_t>(cl)];
            if (h1 > h0)
              em.mm(cl, a + h0 * tk * es, bs, cslot + h0 * tn * 4, h1 - h0, nt, kt, tk, tk, tn, dt,
                    !s.first, true);
          }
          macs += th * twa * nt * kt;
          return;
        }
        if (halo) {  // one pt.mm per output row: its pixels are stride[1] halo columns apart
          const int64_t hw = halo_w(twa), half = cfg.corelets < 2 ? th : ceil_div(th, 2);
          for (int64_t r = 0; r < th; ++r) {
            const int64_t a = as + ((r * stride[0] + s.kh * dil[0]) * hw + s.kw * dil[1]) * tk * es;
            em.mm(r < half ? 0 : 1, a, bs, cslot + r * twa * tn * 4, twa, nt, kt, stride[1] * tk,
                  tk, tn, dt, !s.first, true);
            macs += twa * nt * kt;
          }
          return;
        }
        auto halves = split_rows(mt);
        for (int cl = 0; cl < 2; ++cl) {
          auto [h0, h1] = halves[static_cast<size_t>(cl)];
          if (h1 <= h0) continue;
          em.mm(cl, as + h0 * tk * es, bs, cslot + h0 * tn * 4, h1 - h0, nt, kt, tk, tk, tn, dt,
                !s.first, true);
          macs += (h1 - h0) * nt * kt;
        }
      };
      auto emit_epilogue = [&](const Step& s) {
        const Tile4& tl = tiles[static_cast<size_t>(s.t)];
        const int64_t th = tl.oh1 - tl.oh0, twa = tl.ow1 - tl.ow0, mt = tl.nb * th * twa;
        const int64_t nt = tl.oc1 - tl.oc0;
        const int64_t cp = s.t % 2;
        auto halves = split_rows(wide ? acc_rows(true, th, twa) : mt);
        for (int cl = 0; cl < 2; ++cl) {
          auto [h0, h1] = halves[static_cast<size_t>(cl)];
          const int64_t nr = h1 - h0;
          if (nr <= 0) continue;
          Tile acc{C_slot[cp] + h0 * tn * 4, tn, 1, f32};
          if (has_bias) {
            Tile b16{bias16[cp], 0, 1, Bv->dtype};
            Tile b32{bias32[cp][cl], 0, 1, f32};
            if (Bv->dtype != f32)
              em.cvt(cl, b32, b16, 1, nt);
            else
              em.un(cl, sfp_fn("copy"), b32, b16, 1, nt);
            em.bin(cl, sfp_fn("add"), acc, acc, b32, nr, nt);
          }
          if (planar) {  // [channels, pixels]: pixel r of channel c at r + c * mt
            const Tile dst{O_slot[cp] + h0 * esO, 1, mt, O.dtype};
            if (out_f32)
              em.un(cl, sfp_fn("copy"), dst, acc, nr, nt);
            else
              em.cvt(cl, dst, acc, nr, nt);
          } else if (!out_f32)
            em.cvt(cl, Tile{O_slot[cp] + h0 * tn * esO, tn, 1, O.dtype}, acc, nr, nt);
          if (ep)
            emit_epilogue_ops(kk, em, epx, static_cast<int>(cp), cl, tl.n * OH * OW + tl.oh0 * OW,
                              tl.g * OCg + tl.oc0, h0, nr, nt);
        }
        if (!kk.store_output) return;
        const int64_t oc = tl.g * OCg + tl.oc0;
        const uint64_t dram =
            kk.dram_addr(n.outputs[0], O.offset + tl.n * oN + oc * oC + tl.oh0 * oH + tl.ow0 * oW);
        const int64_t img = th * twa;  // the tile's images one after the other, in one store
        if (planar) {                  // per channel: th output rows of twa pixels
          em.store(O_slot[cp], dram,
                   DmaShape{twa * esO, th, oH * esO, twa * esO, nt, oC * esO, mt * esO, tl.nb,
                            oN * esO, img * esO});
          return;
        }
        const int64_t src = out_f32 ? C_slot[cp] : O_slot[cp];
        const int64_t es_src = out_f32 ? 4 : esO;
        const int64_t pitch = wide ? halo_w(twa) : twa;  // accumulator pixels per output row
        em.store(src, dram,
                 DmaShape{nt * esO, twa, oW * esO, tn * es_src, th, oH * esO, pitch * tn * es_src,
                          tl.nb, oN * esO, img * tn * es_src});
      };
      if (steps.empty()) continue;
      if (ep) emit_epilogue_constants(em, epx);
      emit_loads(0);
      for (size_t i = 0; i < steps.size(); ++i) {
        if (i + 1 < steps.size()) emit_loads(i + 1);
        emit_compute(i);
        if (steps[i].last) emit_epilogue(steps[i]);
      }
    }

    kk.report["unit"] = "pt";
    kk.report["lowering"] = "implicit GEMM";
    kk.report["shape"] = {
        {"n", N},           {"c", C},         {"h", H},         {"w", W},   {"oc", OC},
        {"kh", KH},         {"kw", KW},       {"oh", OH},       {"ow", OW}, {"groups", groups},
        {"stride", stride}, {"padding", pad}, {"dilation", dil}};
    kk.report["gemm"] = {{"m", N * OH * OW}, {"n", OCg}, {"k", ICg * KH * KW}, {"gemms", groups}};
    kk.report["tiles"] = {{"t_oh", t_oh}, {"tw", tw},     {"tm", tm},
                          {"tn", tn},     {"tk", tk},     {"halo", halo},
                          {"tb", tb},     {"wide", wide}, {"weights_kept", wres}};
    kk.report["split"] = {
        {"output_tiles", T}, {"cores_used", cores_used}, {"k_steps", steps_total}};
    kk.report["macs"] = macs;
  };

  // --- the tiling: the cost model's (report/cost.h) best of the guess and a grid of pixel
  // rows x channels, each lowered into scratch streams and predicted. Fewer, larger tiles
  // re-read the weights less (every pixel tile reads all of its channels' weights) at the price
  // of idle cores.
  std::vector<Tiling> cands{guess};
  for (int64_t th = 1;; th *= 2) {
    for (int64_t tn0 : {OCg, int64_t{128}, int64_t{64}, int64_t{32}, int64_t{16}}) {
      Tiling t{std::min(th, OH), ep ? OW : std::min<int64_t>(OW, 256), std::min(tn0, OCg),
               std::min<int64_t>(ICg, 256)};
      if (t.t_oh * t.tw > 1024) continue;
      for (int h = 0; h < 3; ++h) {           // taps, halo, wide halo
        if (h > 0 && KH * KW == 1) continue;  // a 1x1 tap reads its pixels exactly already
        if (h == 2 && !wide_ok) continue;
        Tiling u = t;
        u.halo = h > 0;
        u.wide = h == 2;
        if (!fit(u)) continue;
        bool seen = false;
        for (const auto& c : cands)
          seen = seen || (c.t_oh == u.t_oh && c.tw == u.tw && c.tn == u.tn && c.tk == u.tk &&
                          c.halo == u.halo && c.wide == u.wide);
        if (!seen) cands.push_back(u);
      }
    }
    if (th >= OH) break;
  }
  // Tiles of whole images, when one image has fewer pixels than the grid's largest tile.
  for (int64_t tb = 2; tb <= N && tb * OH * OW <= 1024; tb *= 2)
    for (int64_t tn0 : {OCg, int64_t{128}, int64_t{64}}) {
      if (tn0 != OCg && tn0 >= OCg) continue;  // the same tiles as tn = OCg
      Tiling u{OH, OW, std::min(tn0, OCg), std::min<int64_t>(ICg, 256), false, tb};
      if (fit(u) && u.tb == tb) cands.push_back(u);
    }
  const ConvHalo halo = k.ctx.opts.debug.conv_halo;
  if (halo != ConvHalo::Auto && KH * KW > 1) {
    const bool want = halo != ConvHalo::Taps, want_wide = halo == ConvHalo::Wide;
    std::vector<Tiling> keep;
    for (const auto& c : cands)
      if (c.halo == want && c.wide == want_wide) keep.push_back(c);
    if (!keep.empty()) cands = keep;
  }
  // A floor under a tiling's prediction, for skipping what cannot win without lowering it:
  // every K step of a tile loads its weight slice, one dma.load on the core's in-order load
  // queue, which costs at least dma.setup_cycles (report/timeline.cpp). (Input loads are not
  // counted: a tap that reads only padding loads nothing.)
  auto floor_cycles = [&](const Tiling& t) {
    return ceil_div(count_tiles(t), cfg.cores) * KH * KW * ceil_div(ICg, t.tk) *
           cfg.dma_setup_cycles;
  };
  // Lowered in the order of their floors (the first guess first), so that a good tiling is
  // found early; ties go to the earlier candidate of the list, as without the floor.
  std::vector<size_t> order(cands.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin() + 1, order.end(), [&](size_t x, size_t y) {
    return floor_cycles(cands[x]) < floor_cycles(cands[y]);
  });
  size_t best = 0, skipped = 0;
  int64_t best_cycles = -1, best_bytes = 0, guess_cycles = 0;
  for (const size_t i : order) {
    if (i > 0 && floor_cycles(cands[i]) > best_cycles) {
      ++skipped;
      continue;
    }
    std::vector<CoreStream> scratch(k.cores.size());
    Kernel t{k.ctx, k.g, k.node, cfg, k.dram, k.id, scratch, k.new_arena()};
    t.epilogue = k.epilogue;
    t.store_output = k.store_output;
    emit(t, cands[i]);
    std::vector<std::vector<isa::Instr>> slices;
    for (auto& s : scratch) {
      s.barrier(0);
      slices.push_back(s.instrs());
    }
    const KernelPrediction p = predict_kernel(k.ctx, slices, cfg);
    if (i == 0) guess_cycles = p.cycles;
    if (best_cycles < 0 || p.cycles < best_cycles ||
        (p.cycles == best_cycles &&
         (p.dram_bytes < best_bytes || (p.dram_bytes == best_bytes && i < best)))) {
      best = i;
      best_cycles = p.cycles;
      best_bytes = p.dram_bytes;
    }
  }
  emit(k, cands[best]);
  k.report["tiling_search"] = {{"candidates", cands.size()},
                               {"skipped_by_floor", skipped},
                               {"predicted_cycles", best_cycles},
                               {"first_guess_predicted_cycles", guess_cycles}};

  if (ep)
    k.report["epilogue"] = {{"nodes", k.epilogue->name},
                            {"ops", ep->p.ops.size()},
                            {"lx_slots", ep->slots},
                            {"output_stored", k.store_output}};
}

}  // namespace spyre::compiler
