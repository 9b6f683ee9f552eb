#include <algorithm>
#include <cmath>

#include "spyre/compiler/divide.h"

namespace spyre::compiler {
namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
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

nlohmann::json MatmulGrid::to_json() const {
  return {{"grid", {gm, gn}},
          {"block", {mb, nb}},
          {"blocks", blocks},
          {"cores_used", cores_used},
          {"blocks_per_core", blocks_per_core},
          {"predicted_cycles", predicted_cycles},
          {"dram_bytes", dram_bytes}};
}

MatmulGrid choose_matmul_grid(const MatmulShape& s, const arch::ArchConfig& cfg) {
  MatmulGrid best;
  bool have = false;
  const int64_t row_align = cfg.pt_rows * cfg.corelets;  // both corelets get whole PT passes
  const double bw = cfg.dram_bytes_per_cycle();
  for (int64_t gm = 1; gm <= cfg.cores; ++gm) {
    for (int64_t gn = 1; gm * gn <= cfg.cores; ++gn) {
      MatmulGrid g;
      g.mb = std::min(s.m, round_up(ceil_div(s.m, gm), s.m >= row_align ? row_align : 1));
      g.nb = std::min(s.n, round_up(ceil_div(s.n, gn), s.n >= cfg.pt_lanes ? cfg.pt_lanes : 1));
      g.gm = ceil_div(s.m, g.mb);
      g.gn = ceil_div(s.n, g.nb);
      if (g.gm != gm || g.gn != gn) continue;  // the same grid is reached with smaller gm/gn
      g.blocks = s.batch * g.gm * g.gn;
      g.cores_used = std::min<int64_t>(g.blocks, cfg.cores);
      g.blocks_per_core = ceil_div(g.blocks, cfg.cores);
      const int64_t rows_per_corelet = ceil_div(g.mb, cfg.corelets);
      const int64_t pt = g.blocks_per_core * ceil_div(rows_per_corelet, cfg.pt_rows) *
                         ceil_div(g.nb, cfg.pt_lanes) * s.k;
      const int64_t in_bytes = g.mb * s.k * s.a_bytes + s.k * g.nb * s.b_bytes;
      g.dram_bytes = g.blocks * in_bytes + s.batch * s.m * s.n * s.out_bytes;
      const auto dram = static_cast<int64_t>(std::ceil(static_cast<double>(g.dram_bytes) / bw));
      // A core's DMA engine keeps dma_max_outstanding requests in flight, each waiting the
      // DRAM latency: small requests (short non-contiguous rows) are latency bound.
      const double lat = static_cast<double>(cfg.ns_to_cycles(cfg.dram_latency_ns));
      auto rate = [&](int64_t piece) {
        piece = std::min<int64_t>(piece, cfg.dma_burst_bytes);
        return std::min(static_cast<double>(cfg.dma_read_bytes_per_cycle),
                        static_cast<double>(cfg.dma_max_outstanding * piece) / lat);
      };
      const int64_t a_piece = s.a_contiguous ? g.mb * s.k * s.a_bytes : s.k * s.a_bytes;
      const int64_t b_piece = s.b_transposed
                                  ? (s.b_contiguous ? g.nb * s.k * s.b_bytes : s.k * s.b_bytes)
                              : (s.b_contiguous && g.nb == s.n) ? s.k * g.nb * s.b_bytes
                                                                : g.nb * s.b_bytes;
      const double per_block = static_cast<double>(g.mb * s.k * s.a_bytes) / rate(a_piece) +
                               static_cast<double>(s.k * g.nb * s.b_bytes) / rate(b_piece) +
                               4 * (cfg.dma_setup_cycles + lat);
      const auto dma = static_cast<int64_t>(std::ceil(g.blocks_per_core * per_block));
      g.predicted_cycles = std::max({pt, dram, dma});
      auto key = [](const MatmulGrid& x) {
        return std::make_tuple(x.predicted_cycles, x.dram_bytes, x.cores_used);
      };
      if (!have || key(g) < key(best)) best = g, have = true;
    }
  }
  return best;
}

}  // namespace spyre::compiler
