#include "spyre/compiler/divide.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "spyre/arch/unit_timing.h"
#include "spyre/error.h"
#include "spyre/isa/isa.h"

namespace spyre::compiler {
namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

thread_local MatmulSplit g_split;

// Candidate tile extents for a block extent: the whole extent, then halvings in `unit`s.
std::vector<int64_t> tile_candidates(int64_t extent, int64_t unit, int64_t cap) {
  std::vector<int64_t> out;
  int64_t t = std::min(extent, cap);
  if (extent > cap) t = std::max(unit, cap / unit * unit);
  while (true) {
    if (out.empty() || out.back() != t) out.push_back(t);
    if (t <= unit) break;
    const int64_t next = std::max(unit, round_up(ceil_div(t, 2), unit));
    if (next >= t) break;
    t = next;
  }
  return out;
}
}  // namespace

std::vector<std::pair<int64_t, int64_t>> split_range(int64_t n, int64_t parts, int64_t align) {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (n <= 0 || parts <= 0) return out;
  const int64_t units = ceil_div(n, align);
  parts = std::min(parts, units);
  for (int64_t p = 0; p < parts; ++p) {
    int64_t lo = std::min(n, units * p / parts * align);
    int64_t hi = std::min(n, units * (p + 1) / parts * align);
    if (hi > lo) out.emplace_back(lo, hi);
  }
  return out;
}

const MatmulSplit& current_matmul_split() { return g_split; }
ScopedMatmulSplit::ScopedMatmulSplit(const MatmulSplit& s) : saved_(g_split) { g_split = s; }
ScopedMatmulSplit::~ScopedMatmulSplit() { g_split = saved_; }

nlohmann::json MatmulGrid::to_json() const {
  return {{"split", {{"b", gb}, {"m", gm}, {"n", gn}, {"k", gk}}},
          {"forced", forced},
          {"block", {{"b", bb}, {"m", mb}, {"n", nb}, {"k", kb}}},
          {"cores_used", cores_used},
          {"predicted",
           {{"cycles", predicted_cycles},
            {"dram_bytes", dram_bytes},
            {"pt_cycles", pt_cycles},
            {"dram_cycles", dram_cycles},
            {"dma_cycles", dma_cycles},
            {"epilogue_cycles", epilogue_cycles},
            {"reduce_cycles", reduce_cycles},
            {"overhead_cycles", overhead_cycles}}},
          {"lx_bytes", lx_bytes}};
}

int64_t matmul_roofline_cycles(const MatmulShape& s, const arch::ArchConfig& cfg) {
  const double macs = static_cast<double>(s.batch) * static_cast<double>(s.m) *
                      static_cast<double>(s.n) * static_cast<double>(s.k);
  const double peak = static_cast<double>(cfg.cores * cfg.corelets * cfg.pt_macs_per_cycle());
  const double bytes =
      static_cast<double>(s.batch) *
      static_cast<double>(s.m * s.k * s.a_bytes + s.k * s.n * s.b_bytes + s.m * s.n * s.out_bytes);
  return static_cast<int64_t>(std::ceil(std::max(macs / peak, bytes / cfg.dram_bytes_per_cycle())));
}

MatmulGrid choose_matmul_grid(const MatmulShape& s, const arch::ArchConfig& cfg, int64_t lx_budget,
                              const MatmulLxFn& lx_bytes, nlohmann::json* alternatives) {
  const MatmulSplit& forced = current_matmul_split();
  const int64_t row_align = s.m >= cfg.pt_rows * cfg.corelets ? cfg.pt_rows * cfg.corelets : 1;
  const int64_t col_align = s.n >= cfg.pt_lanes ? cfg.pt_lanes : 1;
  const int64_t k_align = s.k >= 128 ? 64 : 1;
  const double bw = cfg.dram_bytes_per_cycle();
  const double lat = static_cast<double>(cfg.ns_to_cycles(cfg.dram_latency_ns));
  const isa::DType dt = s.a_bytes == 1   ? isa::DType::I8
                        : s.a_bytes == 4 ? isa::DType::F32
                                         : isa::DType::F16;
  auto rate = [&](int64_t piece) {  // DMA bytes/cycle for requests of `piece` bytes
    piece = std::min<int64_t>(std::max<int64_t>(piece, 1), cfg.dma_burst_bytes);
    return std::min(static_cast<double>(cfg.dma_read_bytes_per_cycle),
                    static_cast<double>(cfg.dma_max_outstanding * piece) / lat);
  };
  const int64_t lanes32 = arch::sfp_lanes(cfg, 4);

  std::vector<MatmulGrid> all;
  auto consider = [&](int64_t gb, int64_t gm, int64_t gn, int64_t gk, bool is_forced) {
    MatmulGrid g;
    g.forced = is_forced;
    g.bb = ceil_div(s.batch, gb);
    g.mb = std::min(s.m, round_up(ceil_div(s.m, gm), row_align));
    g.nb = std::min(s.n, round_up(ceil_div(s.n, gn), col_align));
    g.kb = std::min(s.k, round_up(ceil_div(s.k, gk), k_align));
    g.gb = ceil_div(s.batch, g.bb);
    g.gm = ceil_div(s.m, g.mb);
    g.gn = ceil_div(s.n, g.nb);
    g.gk = ceil_div(s.k, g.kb);
    if (!is_forced && (g.gb != gb || g.gm != gm || g.gn != gn || g.gk != gk)) return;
    g.cores_used = g.blocks();
    if (is_forced && g.cores_used > cfg.cores)
      throw Error("compiler.matmul_split",
                  "split b=" + std::to_string(g.gb) + " m=" + std::to_string(g.gm) +
                      " n=" + std::to_string(g.gn) + " k=" + std::to_string(g.gk) + " needs " +
                      std::to_string(g.cores_used) + " cores, the chip has " +
                      std::to_string(cfg.cores));
    if (g.cores_used > cfg.cores) return;
    const int64_t lm = s.m - (g.gm - 1) * g.mb, ln = s.n - (g.gn - 1) * g.nb,
                  lk = s.k - (g.gk - 1) * g.kb;
    bool have = false;
    MatmulGrid best;
    for (int64_t tm : tile_candidates(g.mb, row_align, 512))
      for (int64_t tn : tile_candidates(g.nb, col_align, 1024))
        for (int64_t tk : tile_candidates(g.kb, k_align, 1024)) {
          MatmulGrid x = g;
          x.tm = tm, x.tn = tn, x.tk = tk;
          const int64_t nmt = ceil_div(g.mb, tm), nnt = ceil_div(g.nb, tn),
                        nkt = ceil_div(g.kb, tk);
          const int64_t ctiles = g.bb * nmt * nnt, steps = ctiles * nkt;
          const int c_slots = ctiles > 1 ? 2 : 1;
          x.lx_bytes = lx_bytes(tm, tn, tk, c_slots);
          if (x.lx_bytes > lx_budget) continue;
          // Multicast needs every core of a group to walk the same tiles in the same order.
          const bool uniform = s.batch % g.bb == 0 && ceil_div(lm, tm) == nmt &&
                               ceil_div(ln, tn) == nnt && ceil_div(lk, tk) == nkt;
          x.mcast_a = uniform && g.gn > 1;
          x.mcast_b = uniform && g.gm > 1;
          const int64_t ga = x.mcast_a ? g.gn : 1, gbsz = x.mcast_b ? g.gm : 1;
          // PT: both corelets in parallel, the tile's rows split between them.
          const int64_t h =
              cfg.corelets < 2 ? tm : std::min(tm, round_up(ceil_div(tm, 2), cfg.pt_rows));
          x.pt_cycles = steps * arch::pt_mm_cycles(cfg, h, tn, tk, dt);
          // DRAM: A once per (group, n tile), B once per (group, m tile), the output once.
          const double a_bytes = static_cast<double>(s.batch * s.m * s.k * s.a_bytes) *
                                 static_cast<double>(nnt * (x.mcast_a ? 1 : g.gn));
          const double b_bytes = static_cast<double>(s.batch * s.k * s.n * s.b_bytes) *
                                 static_cast<double>(nmt * (x.mcast_b ? 1 : g.gm));
          const double o_bytes = static_cast<double>(s.batch * s.m * s.n * s.out_bytes);
          x.dram_bytes = static_cast<int64_t>(a_bytes + b_bytes + o_bytes);
          // TODO: channel aliasing. Consecutive 128 B words sit on consecutive channels, so short
          // requests with power-of-two row strides can leave channels idle; weighting DRAM time
          // by request length picked worse splits in the simulator, so it is not modelled yet.
          x.dram_cycles = static_cast<int64_t>(std::ceil((a_bytes + b_bytes + o_bytes) / bw));
          // DMA engine of a core: its share of the A and B tiles, each instruction paying setup
          // and latency; requests as long as the tile's contiguous rows.
          const int64_t a_piece =
              (s.a_contiguous && tk == s.k) ? tm * tk * s.a_bytes : tk * s.a_bytes;
          const int64_t b_piece =
              s.b_transposed
                  ? ((s.b_contiguous && tk == s.k) ? tn * tk * s.b_bytes : tk * s.b_bytes)
                  : ((s.b_contiguous && tn == s.n) ? tk * tn * s.b_bytes : tn * s.b_bytes);
          const double a_tile = static_cast<double>(tm * tk * s.a_bytes),
                       b_tile = static_cast<double>(tk * tn * s.b_bytes);
          const double per_instr = static_cast<double>(cfg.dma_setup_cycles) + lat;
          const double dma = static_cast<double>(steps) *
                             ((a_tile / rate(a_piece) + per_instr) / static_cast<double>(ga) +
                              (b_tile / rate(b_piece) + per_instr) / static_cast<double>(gbsz));
          x.dma_cycles = static_cast<int64_t>(std::ceil(dma));
          // Epilogue on the owner's SFPs (cvt, bias, fused ops) per output tile.
          const int64_t epi_tile =
              (2 + s.epilogue_ops) * (cfg.sfp_latency_cycles + ceil_div(h * tn, lanes32));
          x.epilogue_cycles = ctiles * epi_tile;
          // K split: the partial sums of each output tile go along a chain of gk cores.
          const int64_t hop = cfg.ring_hop_latency_cycles;
          const int64_t chain = (g.gk - 1) * (ceil_div(tm * tn * 4, cfg.ring_link_bytes_per_cycle) +
                                              2 * hop + cfg.ring_reduce_latency_cycles + 4);
          x.reduce_cycles = chain;
          // Prologue (first tiles land before the first matmul) and tail (last epilogue, store).
          const double prologue = per_instr + (a_tile / rate(a_piece) + b_tile / rate(b_piece));
          // The last output tiles of every core are stored together: chip bandwidth.
          const double last_store =
              std::max(static_cast<double>(tm * tn * s.out_bytes) /
                           static_cast<double>(cfg.dma_write_bytes_per_cycle),
                       static_cast<double>(g.gb * g.gm * g.gn * tm * tn * s.out_bytes) / bw);
          const double tail = static_cast<double>(epi_tile) + per_instr + last_store;
          x.overhead_cycles = static_cast<int64_t>(std::ceil(prologue + tail));
          const int64_t busy = std::max({x.pt_cycles, x.epilogue_cycles, x.dram_cycles,
                                         x.dma_cycles, ctiles * (chain > 0 ? chain / g.gk : 0)});
          x.predicted_cycles = busy + x.overhead_cycles + chain;
          auto key = [](const MatmulGrid& y) {
            return std::make_tuple(
                y.predicted_cycles, y.dram_bytes,
                y.bb * ceil_div(y.mb, y.tm) * ceil_div(y.nb, y.tn) * ceil_div(y.kb, y.tk));
          };
          if (!have || key(x) < key(best)) best = x, have = true;
        }
    if (have) all.push_back(best);
  };
  if (forced.forced()) {
    auto clamp = [](int64_t p, int64_t extent) {
      return std::max<int64_t>(1, std::min(p, extent));
    };
    consider(clamp(forced.parts[0], s.batch), clamp(forced.parts[1], s.m),
             clamp(forced.parts[2], s.n), clamp(forced.parts[3], s.k), true);
  } else {
    for (int64_t gb = 1; gb <= std::min(s.batch, cfg.cores); ++gb)
      for (int64_t gm = 1; gb * gm <= cfg.cores; ++gm)
        for (int64_t gn = 1; gb * gm * gn <= cfg.cores; ++gn)
          for (int64_t gk = 1; gb * gm * gn * gk <= cfg.cores; ++gk)
            consider(gb, gm, gn, gk, false);
  }
  if (all.empty()) {
    MatmulGrid g;  // nothing fits: the caller reports the working set
    g.gb = g.gm = g.gn = g.gk = 1;
    g.bb = s.batch, g.mb = s.m, g.nb = s.n, g.kb = s.k;
    g.tm = std::min<int64_t>(s.m, row_align), g.tn = std::min<int64_t>(s.n, col_align);
    g.tk = std::min<int64_t>(s.k, 64);
    g.cores_used = 1;
    g.forced = forced.forced();
    return g;
  }
  auto key = [](const MatmulGrid& y) {
    return std::make_tuple(y.predicted_cycles, y.dram_bytes, y.cores_used);
  };
  std::sort(all.begin(), all.end(),
            [&](const MatmulGrid& a, const MatmulGrid& b) { return key(a) < key(b); });
  if (alternatives) {
    *alternatives = nlohmann::json::array();
    for (size_t i = 1; i < std::min<size_t>(all.size(), 4); ++i) {
      nlohmann::json a = all[i].to_json();
      a["tiles"] = {{"tm", all[i].tm}, {"tn", all[i].tn}, {"tk", all[i].tk}};
      alternatives->push_back(a);
    }
  }
  return all.front();
}

}  // namespace spyre::compiler
