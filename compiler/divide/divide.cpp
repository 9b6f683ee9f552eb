#include "spyre/compiler/divide.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <map>
#include <mutex>
#include <tuple>

#include "spyre/arch/unit_timing.h"
#include "spyre/error.h"
#include "spyre/isa/isa.h"

namespace spyre::compiler {
namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

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
// Which DRAM channels the rows of a set of tiles touch, with the lpddr5 interleave
// (consecutive `dram.word_bytes` words on consecutive channels). Memoised per row pattern.
class ChannelShare {
 public:
  struct Req {
    int64_t base, rows, row_bytes, stride;  // bytes
  };
  explicit ChannelShare(const arch::ArchConfig& cfg)
      : on_(cfg.dram_impl == "lpddr5" && cfg.dram_address_map.size() >= 2 &&
            cfg.dram_address_map.compare(cfg.dram_address_map.size() - 2, 2, "ch") == 0 &&
            cfg.dram_channels > 1 && cfg.dram_channels <= 64),
        ch_(cfg.dram_channels),
        word_(cfg.dram_word_bytes) {}
  // Share of the channels (0, 1] the requests touch; 1 when the model has no channels.
  double of(const std::vector<Req>& reqs) {
    if (!on_ || reqs.empty()) return 1.0;
    const uint64_t full = ch_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << ch_) - 1;
    uint64_t mask = 0;
    for (const Req& r : reqs) {
      mask |= pattern(r);
      if (mask == full) break;
    }
    int n = 0;
    for (uint64_t m = mask; m; m &= m - 1) ++n;
    return std::max(1, n) / static_cast<double>(ch_);
  }

 private:
  uint64_t pattern(const Req& r) {
    const int64_t span = ch_ * word_;  // the interleave repeats every span bytes
    const auto key = std::make_tuple(r.base % span, std::min(r.rows, 2 * ch_),
                                     std::min(r.row_bytes, span), r.stride % span);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    uint64_t mask = 0;
    const int64_t rows = std::get<1>(key), bytes = std::max<int64_t>(1, std::get<2>(key));
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t lo = std::get<0>(key) + i * std::get<3>(key);
      for (int64_t w = lo / word_; w <= (lo + bytes - 1) / word_; ++w)
        mask |= uint64_t{1} << (w % ch_);
    }
    memo_.emplace(key, mask);
    return mask;
  }
  bool on_;
  int64_t ch_, word_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>, uint64_t> memo_;
};
// Time of units working side by side: the busiest, plus a share of the others as they near
// it (an L4 norm). Two units both near saturation stall each other (a late tile holds the PT, a
// busy PT holds the slot a load needs), so 2 equal loads cost 1.19x one, a half load 1.5 %.
double soft_max(std::initializer_list<double> xs) {
  double hi = 0, sum = 0;
  for (double x : xs) hi = std::max(hi, x);
  if (hi <= 0) return 0;
  for (double x : xs) sum += std::pow(std::max(0.0, x) / hi, 4.0);
  return hi * std::pow(sum, 0.25);
}

// The best grid, then the best few of the other splits (at most 3).
std::vector<MatmulGrid> search_matmul_grid(const MatmulShape& s, const arch::ArchConfig& cfg,
                                           int64_t lx_budget, const MatmulLxFn& lx_bytes,
                                           const MatmulSplit& forced, const CostParams& cp,
                                           nlohmann::json* alternatives);

// Output tiles of a core's block (its accumulator's tiles over batches, rows and columns).
int64_t output_tiles(const MatmulGrid& y) {
  return y.bb * ceil_div(y.mb, y.tm) * ceil_div(y.nb, y.tn);
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
            {"overhead_cycles", overhead_cycles},
            {"first_tile_cycles", first_tile_cycles},
            {"channel_share", {{"a", chan_a}, {"b", chan_b}, {"out", chan_o}}},
            {"run_efficiency", {{"a", run_a}, {"b", run_b}, {"out", run_o}}}}},
          {"panel", {{"a", a_panel}, {"b", b_panel}}},
          {"lead", lead},
          {"slots", bufs},
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
                              const MatmulLxFn& lx_bytes, const MatmulSplit& forced, GridMemo* memo,
                              nlohmann::json* alternatives, const std::vector<int64_t>* lx_key,
                              const CostParams& cp, std::vector<MatmulGrid>* runners_up) {
  std::vector<int64_t> memo_key;
  if (memo && lx_key) {
    memo_key = {s.batch, s.m, s.n, s.k, s.a_bytes, s.b_bytes, s.out_bytes, s.a_contiguous,
                s.b_transposed, s.b_contiguous, s.a_row_bytes, s.b_row_bytes, s.out_row_bytes,
                s.epilogue_ops, lx_budget,
                // one compile has one configuration; its address guards against a second
                static_cast<int64_t>(reinterpret_cast<intptr_t>(&cfg))};
    memo_key.insert(memo_key.end(), forced.parts.begin(), forced.parts.end());
    memo_key.insert(memo_key.end(), forced.tiles.begin(), forced.tiles.end());
    memo_key.push_back(forced.lead);
    memo_key.push_back(forced.whole_rows);
    memo_key.push_back(forced.one_tile);
    memo_key.insert(memo_key.end(), lx_key->begin(), lx_key->end());
    std::lock_guard<std::mutex> lock(memo->mutex);
    auto it = memo->answers.find(memo_key);
    if (it != memo->answers.end()) {
      if (alternatives) *alternatives = it->second.alternatives;
      if (runners_up) runners_up->assign(it->second.ranked.begin() + 1, it->second.ranked.end());
      return it->second.ranked.front();
    }
  }
  GridMemo::Answer a;
  a.ranked = search_matmul_grid(s, cfg, lx_budget, lx_bytes, forced, cp, &a.alternatives);
  if (alternatives) *alternatives = a.alternatives;
  if (runners_up) runners_up->assign(a.ranked.begin() + 1, a.ranked.end());
  const MatmulGrid g = a.ranked.front();
  if (memo && lx_key) {
    std::lock_guard<std::mutex> lock(memo->mutex);
    memo->answers.emplace(memo_key, std::move(a));
  }
  return g;
}

namespace {

std::vector<MatmulGrid> search_matmul_grid(const MatmulShape& s, const arch::ArchConfig& cfg,
                                           int64_t lx_budget, const MatmulLxFn& lx_bytes,
                                           const MatmulSplit& forced, const CostParams& cp,
                                           nlohmann::json* alternatives) {
  const int64_t row_align = s.m >= cfg.pt_rows * cfg.corelets ? cfg.pt_rows * cfg.corelets : 1;
  const int64_t col_align = s.n >= cfg.pt_lanes ? cfg.pt_lanes : 1;
  // K is split and tiled in 64s (a DRAM word of fp16). A shorter K may still be split, but
  // each core's K block stays one tile: K tiles of a few elements make DMA rows of a few bytes
  // (a bmm with K = 64 cut to K tiles of 1 simulated 2.6x slower than whole).
  const int64_t k_align = s.k >= 128 ? 64 : 1;
  const double bw = cp.dram_bytes_per_cycle(cfg);
  const double lat = static_cast<double>(cp.dram_latency_cycles(cfg));
  const isa::DType dt = s.a_bytes == 1   ? isa::DType::I8
                        : s.a_bytes == 4 ? isa::DType::F32
                                         : isa::DType::F16;
  auto rate = [&](int64_t piece) {  // DMA bytes/cycle for requests of `piece` bytes
    piece = std::min<int64_t>(std::max<int64_t>(piece, 1), cfg.dma_burst_bytes);
    return std::min(static_cast<double>(cfg.dma_read_bytes_per_cycle),
                    static_cast<double>(arch::dma_in_flight(cfg, piece) * piece) / lat);
  };
  const int64_t lanes32 = arch::sfp_lanes(cfg, 4);

  const int64_t a_row = s.a_row_bytes > 0 ? s.a_row_bytes : s.k * s.a_bytes;
  const int64_t b_row =
      s.b_row_bytes > 0 ? s.b_row_bytes : (s.b_transposed ? s.k : s.n) * s.b_bytes;
  const int64_t o_row = s.out_row_bytes > 0 ? s.out_row_bytes : s.n * s.out_bytes;
  ChannelShare share(cfg);
  std::map<std::array<int64_t, 3>, double> run_effs;  // the candidates repeat few row shapes
  auto run_eff = [&](int64_t run, int64_t stride, int64_t rows) {
    const std::array<int64_t, 3> key = {run, stride, std::min<int64_t>(rows, 64)};
    auto it = run_effs.find(key);
    if (it == run_effs.end())
      it = run_effs.emplace(key, cp.run_efficiency(cfg, run, stride, rows, 0, true)).first;
    return it->second;
  };
  // Reads and writes sharing the bus pay the turnarounds (cost.h, CostParams: IBM's fit of
  // Spyre's DRAM, which the lpddr5 model reproduces within 3 %, sim/README.md; none on fifo).
  const double turnaround = cp.turnaround_cycles_per_byte(cfg);
  // Share of the channels covered by the tiles the cores load (store) together: the first two
  // distinct tiles of each distinct block of the operand (a load runs one step ahead). `which`:
  // 0 A, 1 B, 2 output, 3 A of one K step only (a lead group's K-outer walk loads the A tiles
  // of one K step one after another, all on the same columns).
  auto coverage = [&](const MatmulGrid& x, int which, int64_t nkt) {
    std::vector<ChannelShare::Req> reqs;
    for (int64_t ib = 0; ib < x.gb; ++ib)
      for (int64_t im = 0; im < x.gm; ++im)
        for (int64_t in = 0; in < x.gn; ++in)
          for (int64_t ik = 0; ik < x.gk; ++ik) {
            // A block starts its n walk at matmul_n_rotation (matmul.cpp).
            const int64_t b0 = ib * x.bb, m0 = im * x.mb, k0 = ik * x.kb;
            const int64_t n0 = in * x.nb + matmul_n_rotation(in, x.gn, ceil_div(x.nb, x.tn)) * x.tn;
            if (which == 0 || which == 3) {  // A: (m0, k0), then the next K step
              if (in > 0) continue;
              const int64_t base = b0 * s.m * a_row + m0 * a_row + k0 * s.a_bytes;
              reqs.push_back({base, x.tm, x.tk * s.a_bytes, a_row});
              if (nkt > 1 && which == 0)
                reqs.push_back({base + x.tk * s.a_bytes, x.tm, x.tk * s.a_bytes, a_row});
            } else if (which == 1) {  // B
              if (im > 0) continue;
              const int64_t es = s.b_bytes, bsz = (s.b_transposed ? s.n : s.k) * b_row;
              if (s.b_transposed) {
                const int64_t base = b0 * bsz + n0 * b_row + k0 * es;
                reqs.push_back({base, x.tn, x.tk * es, b_row});
                if (nkt > 1) reqs.push_back({base + x.tk * es, x.tn, x.tk * es, b_row});
              } else {
                const int64_t base = b0 * bsz + k0 * b_row + n0 * es;
                reqs.push_back({base, x.tk, x.tn * es, b_row});
                if (nkt > 1) reqs.push_back({base + x.tk * b_row, x.tk, x.tn * es, b_row});
              }
            } else {  // output: the owners' first tiles
              if (ik + 1 < x.gk) continue;
              reqs.push_back({b0 * s.m * o_row + m0 * o_row + n0 * s.out_bytes, x.tm,
                              x.tn * s.out_bytes, o_row});
            }
          }
    return share.of(reqs);
  };
  // The prediction of one candidate (split, tiles, panels); see divide.h.
  auto evaluate = [&](MatmulGrid& x, int64_t nmt, int64_t nnt, int64_t nkt) {
    const int64_t ctiles = x.bb * nmt * nnt, steps = ctiles * nkt;
    const int64_t ga = x.mcast_a ? x.gn : 1, gbsz = x.mcast_b ? x.gm : 1;
    // PT: both corelets in parallel, the tile's rows split between them.
    const int64_t h = arch::pt_corelet_rows(cfg, x.tm);
    // Each step after the first follows the one before it on the array (unit_timing.h).
    const int64_t pt_step = arch::pt_mm_chained_cycles(cfg, h, x.tn, x.tk, dt);
    x.pt_cycles = steps * pt_step + (arch::pt_mm_cycles(cfg, h, x.tn, x.tk, dt) - pt_step);
    // Tiles kept in LX: the A tiles of an m tile across its n tiles when K is one step or A is
    // a panel (the walk is m, n, k); the B tiles across m tiles for a B panel (walk n, m, k)
    // or when K is one step and N one tile.
    const bool a_kept = !x.b_panel && (x.a_panel || nkt == 1);
    const bool b_kept = x.b_panel || (nkt == 1 && nnt == 1);
    const double a_total = static_cast<double>(s.batch * s.m * s.k * s.a_bytes);
    const double b_total = static_cast<double>(s.batch * s.k * s.n * s.b_bytes);
    const double o_total = static_cast<double>(s.batch * s.m * s.n * s.out_bytes);
    const double a_bytes =
        a_total * static_cast<double>((a_kept ? 1 : nnt) * (x.mcast_a ? 1 : x.gn));
    const double b_bytes =
        b_total * static_cast<double>((b_kept ? 1 : nmt) * (x.mcast_b ? 1 : x.gm));
    x.dram_bytes = static_cast<int64_t>(a_bytes + b_bytes + o_total);
    // Each stream's share of the bandwidth: the channels its concurrent tile rows cover, times
    // the DRAM's efficiency on rows that short (cost.h: run_efficiency; the kernel prediction
    // uses the same).
    x.run_a = run_eff(x.tk * s.a_bytes, a_row, x.tm);
    x.run_b = s.b_transposed ? run_eff(x.tk * s.b_bytes, b_row, x.tn)
                             : run_eff(x.tn * s.b_bytes, b_row, x.tk);
    x.run_o = run_eff(x.tn * s.out_bytes, o_row, x.tm);
    x.chan_a = coverage(x, 0, nkt) * x.run_a;
    x.chan_b = coverage(x, 1, nkt) * x.run_b;
    x.chan_o = coverage(x, 2, nkt) * x.run_o;
    const double reads = a_bytes / (bw * x.chan_a) + b_bytes / (bw * x.chan_b);
    // DMA engine of a core: its share of the A and B tiles, each instruction paying setup and
    // latency; requests as long as the tile's contiguous rows.
    const int64_t a_piece =
        (s.a_contiguous && x.tk == s.k) ? x.tm * x.tk * s.a_bytes : x.tk * s.a_bytes;
    const int64_t b_piece =
        s.b_transposed
            ? ((s.b_contiguous && x.tk == s.k) ? x.tn * x.tk * s.b_bytes : x.tk * s.b_bytes)
            : ((s.b_contiguous && x.tn == s.n) ? x.tk * x.tn * s.b_bytes : x.tn * s.b_bytes);
    const double a_tile = static_cast<double>(x.tm * x.tk * s.a_bytes),
                 b_tile = static_cast<double>(x.tk * x.tn * s.b_bytes);
    const double per_instr = static_cast<double>(cfg.dma_setup_cycles) + lat;
    const double a_loads = static_cast<double>(a_kept ? x.bb * nmt * nkt : steps);
    const double b_loads = static_cast<double>(b_kept ? x.bb * nnt * nkt : steps);
    const double dma = a_loads * (a_tile / rate(a_piece) + per_instr) / static_cast<double>(ga) +
                       b_loads * (b_tile / rate(b_piece) + per_instr) / static_cast<double>(gbsz);
    x.dma_cycles = static_cast<int64_t>(std::ceil(dma));
    // Epilogue on the owner's SFPs (cvt, bias, fused ops) per output tile.
    const int64_t epi_tile =
        (2 + s.epilogue_ops) * (cfg.sfp_latency_cycles + ceil_div(h * x.tn, lanes32));
    x.epilogue_cycles = ctiles * epi_tile;
    // K split: the partial sums of each output tile go along a chain of gk cores.
    const int64_t hop = cfg.ring_hop_latency_cycles;
    const int64_t chain = (x.gk - 1) * (ceil_div(x.tm * x.tn * 4, cfg.ring_link_bytes_per_cycle) +
                                        2 * hop + cfg.ring_reduce_latency_cycles + 4);
    x.reduce_cycles = chain;
    // The first output tile of every core needs all its K steps' tiles, chip-wide at once (for
    // a panel: the whole panel of every core); the matmuls of later tiles overlap the rest.
    // A lead group (divide.h) makes that first phase `lead` tiles long: their matmuls and A
    // tiles against one panel fill.
    const int64_t lead = std::min(x.lead, ctiles);
    const double a_first = static_cast<double>(lead * x.gb * x.gm * x.gk * (x.mcast_a ? 1 : x.gn)) *
                           static_cast<double>(x.tm * x.kb * s.a_bytes);
    const double b_first = static_cast<double>(x.gb * x.gn * x.gk * (x.mcast_b ? 1 : x.gm)) *
                           static_cast<double>(x.kb * x.tn * s.b_bytes);
    // A lead group walks K outside: the A tiles it loads together share one K step's channels.
    const double chan_a_first = lead > 1 ? coverage(x, 3, nkt) * x.run_a : x.chan_a;
    const double dram_first = a_first / (bw * chan_a_first) + b_first / (bw * x.chan_b);
    // The rest: the remaining reads and stores. With a panel the lead tiles are stored during
    // the first phase's last K step (below); the turnarounds are paid where reads and writes
    // share the bus, the rest.
    const bool panel = x.a_panel || x.b_panel;
    // The pipeline below leaves out the K split's partial-sum chains, whose ring handshakes
    // dominate the small split kernels of the zoo (gpt2's attention and MLP matmuls simulated
    // 10-60 % over it): with a K split the first phase stays the max of its parts.
    const bool pipelined = panel && x.gk == 1;
    const double out_tiles = static_cast<double>(x.gb * x.gm * x.gn * x.tm * x.tn * s.out_bytes);
    const double o_left =
        std::max(0.0, o_total - (panel ? static_cast<double>(lead) * out_tiles : 0.0));
    const double reads_left = std::max(0.0, a_bytes + b_bytes - a_first - b_first);
    const double dram_rest =
        std::max(0.0, reads - a_first / (bw * x.chan_a) - b_first / (bw * x.chan_b)) +
        o_left / (bw * x.chan_o) + turnaround * std::min(reads_left, o_left);
    x.dram_cycles = static_cast<int64_t>(std::ceil(dram_first + dram_rest));
    // The first phase's parts: its matmuls, its DRAM bytes, its DMA share. A panel fills
    // dedicated slots step by step (no slot handshake): without a K split its first phase is a
    // pipeline (the panel's first K slice chip-wide and the other operand's first tile land,
    // then each matmul runs against its A (B) tile and a 1/lead piece of the panel's next K
    // slice; the last K step loads no more panel), never shorter than its longest part; with
    // one, the longest part. Streamed operands reuse slots through handshakes, where nearly
    // saturated units stall each other: the L4 soft max of the parts.
    const std::initializer_list<double> first_parts = {
        static_cast<double>(lead * nkt * pt_step), dram_first,
        dma * static_cast<double>(lead) / static_cast<double>(ctiles)};
    double first = 0;
    if (pipelined) {
      const double a_step = static_cast<double>(x.gb * x.gm * x.gk * (x.mcast_a ? 1 : x.gn) * x.tm *
                                                x.tk * s.a_bytes) /
                            (bw * chan_a_first);
      const double b_step = static_cast<double>(x.gb * x.gn * x.gk * (x.mcast_b ? 1 : x.gm) * x.tk *
                                                x.tn * s.b_bytes) /
                            (bw * x.chan_b);
      const double pt = static_cast<double>(pt_step), l = static_cast<double>(lead);
      const double slice = x.b_panel ? b_step : a_step, other = x.b_panel ? a_step : b_step;
      // The last K step completes the lead tiles one by one: their stores share it.
      const double out_step = out_tiles / (bw * x.chan_o);
      const double pipeline = slice + other +
                              l * static_cast<double>(nkt - 1) * std::max(pt, other + slice / l) +
                              l * std::max(pt, other + out_step);
      first = std::max(pipeline, std::max(first_parts));
    } else {
      first = panel ? std::max(first_parts) : soft_max(first_parts);
    }
    x.first_tile_cycles = static_cast<int64_t>(std::ceil(first));
    // Prologue: the first tiles land before the first matmul (for a panel: in `first`).
    const double prologue =
        per_instr + (pipelined ? 0.0 : a_tile / rate(a_piece) + b_tile / rate(b_piece));
    // The last output tiles of every core are stored together: chip bandwidth.
    const double last_store = std::max(
        static_cast<double>(x.tm * x.tn * s.out_bytes) /
            static_cast<double>(cfg.dma_write_bytes_per_cycle),
        static_cast<double>(x.gb * x.gm * x.gn * x.tm * x.tn * s.out_bytes) / (bw * x.chan_o));
    const double tail = static_cast<double>(epi_tile) + per_instr + last_store;
    x.overhead_cycles = static_cast<int64_t>(std::ceil(prologue + tail));
    const double rest =
        soft_max({static_cast<double>(x.pt_cycles - lead * nkt * pt_step), dram_rest,
                  dma * (1.0 - static_cast<double>(lead) / static_cast<double>(ctiles)),
                  static_cast<double>(x.epilogue_cycles),
                  static_cast<double>(ctiles * (chain > 0 ? chain / x.gk : 0))});
    x.predicted_cycles =
        x.first_tile_cycles + static_cast<int64_t>(std::ceil(rest)) + x.overhead_cycles + chain;
  };
  // The kernel prediction picks among the first kShortlist (matmul.cpp): the best tiling of
  // each of the best splits, and where fewer splits exist (one core, a forced split) those
  // splits' best tilings of other K step depths, so that the timeline, not the closed form
  // alone, picks the tiles.
  constexpr size_t kShortlist = 4;
  std::vector<MatmulGrid> all, next_tilings;
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
    std::vector<MatmulGrid> best;  // this split's best tiling per K step, best first
    // A forced tile extent (clamped to the block) replaces that dimension's candidates.
    auto extents = [](int64_t forced_t, int64_t extent, int64_t unit, int64_t cap) {
      return forced_t > 0 ? std::vector<int64_t>{std::min(forced_t, extent)}
                          : tile_candidates(extent, unit, cap);
    };
    for (int64_t tm : extents(forced.tiles[0], g.mb, row_align, 512))
      for (int64_t tn : extents(forced.tiles[1], g.nb, col_align, 4096))
        for (int64_t tk : extents(forced.tiles[2], g.kb, s.k >= 128 ? k_align : g.kb, 2048))
          for (int panel = 0; panel < 3; ++panel) {  // none, A panel, B panel
            const int64_t bufs = 2;                  // MatmulGrid::bufs
            MatmulGrid x = g;
            x.tm = tm, x.tn = tn, x.tk = tk;
            const int64_t nmt = ceil_div(g.mb, tm), nnt = ceil_div(g.nb, tn),
                          nkt = ceil_div(g.kb, tk);
            const int64_t ctiles = g.bb * nmt * nnt;
            // Multicast needs every core of a group to walk the same tiles in the same order.
            const bool uniform = s.batch % g.bb == 0 && ceil_div(lm, tm) == nmt &&
                                 ceil_div(ln, tn) == nnt && ceil_div(lk, tk) == nkt;
            x.mcast_a = uniform && g.gn > 1;
            x.mcast_b = uniform && g.gm > 1;
            // A panel pays only when its tiles would otherwise be read again for further n
            // tiles (likewise B over m tiles); a multicast operand keeps its ping-pong slots.
            x.a_panel = panel == 1;
            x.b_panel = panel == 2;
            if (x.a_panel && (nkt == 1 || nnt == 1 || x.mcast_a)) continue;
            if (x.b_panel && (nkt == 1 || nmt == 1 || x.mcast_b)) continue;
            if (forced.lead > 1 && !x.b_panel) continue;  // a forced lead group is a B panel's
            // A lead group (B panel, several m tiles): one more accumulator per tile and a third
            // A slot; up to 16 tiles where the first phase is predicted as a pipeline (no K
            // split), else up to 4 (the max of its parts grows optimistic with longer leads).
            // A forced lead (clamped to the panel's m tiles) is the only one tried for a B panel.
            const int64_t max_lead =
                x.b_panel
                    ? std::min<int64_t>(nmt, forced.lead > 0 ? forced.lead : (g.gk == 1 ? 16 : 4))
                    : 1;
            const int64_t min_lead = forced.lead > 0 ? max_lead : 1;
            for (int64_t lead = min_lead; lead <= max_lead; ++lead) {
              x.lead = lead;
              x.bufs = lead > 1 ? 3 : bufs;
              const int64_t c_slots = lead > 1 ? lead + 1 : (ctiles > 1 ? 2 : 1);
              x.lx_bytes = lx_bytes(tm, tn, tk, static_cast<int>(c_slots), x.a_panel ? nkt : x.bufs,
                                    x.b_panel ? nkt : x.bufs);
              if (x.lx_bytes > lx_budget) continue;
              evaluate(x, nmt, nnt, nkt);
              // Under IBM's schedule one output tile first (MatmulSplit::one_tile).
              auto key = [&](const MatmulGrid& y) {
                return std::make_tuple(forced.one_tile && output_tiles(y) > 1, y.predicted_cycles,
                                       y.dram_bytes, output_tiles(y) * ceil_div(y.kb, y.tk),
                                       y.lead);
              };
              // The best tiling of each K step depth: tilings that differ only in their lead
              // or a few rows predict alike, the K step trades the PT's drains against DRAM
              // reuse, which the closed form weighs least surely.
              auto same = std::find_if(best.begin(), best.end(),
                                       [&](const MatmulGrid& y) { return y.tk == x.tk; });
              if (same != best.end()) {
                if (!(key(x) < key(*same))) continue;
                best.erase(same);
              }
              best.insert(std::upper_bound(best.begin(), best.end(), x,
                                           [&](const MatmulGrid& a, const MatmulGrid& b) {
                                             return key(a) < key(b);
                                           }),
                          x);
            }
          }
    if (best.empty()) return;
    if (forced.one_tile && output_tiles(best.front()) == 1)  // the block fits as one tile
      best.erase(std::remove_if(best.begin(), best.end(),
                                [](const MatmulGrid& y) { return output_tiles(y) > 1; }),
                 best.end());
    if (best.size() > kShortlist) best.resize(kShortlist);
    all.push_back(best.front());
    next_tilings.insert(next_tilings.end(), best.begin() + 1, best.end());
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
            if (!forced.whole_rows || (gn == 1 && gk == 1 && (gm == 1 || gb == s.batch)))
              consider(gb, gm, gn, gk, false);
  }
  if (all.empty() && forced.tiles[0] > 0)
    throw Error("compiler.matmul_tiles",
                "tiles " + std::to_string(forced.tiles[0]) + "x" + std::to_string(forced.tiles[1]) +
                    "x" + std::to_string(forced.tiles[2]) +
                    (forced.lead > 1 ? " (lead " + std::to_string(forced.lead) + ")" : "") +
                    " of a " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                    std::to_string(s.k) + " matmul do not fit the LX budget of " +
                    std::to_string(lx_budget) + " bytes for any split");
  if (all.empty()) {
    MatmulGrid g;  // nothing fits: the caller reports the working set
    g.gb = g.gm = g.gn = g.gk = 1;
    g.bb = s.batch, g.mb = s.m, g.nb = s.n, g.kb = s.k;
    g.tm = std::min<int64_t>(s.m, row_align), g.tn = std::min<int64_t>(s.n, col_align);
    g.tk = std::min<int64_t>(s.k, 64);
    g.cores_used = 1;
    g.forced = forced.forced();
    return {g};
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
  std::stable_sort(next_tilings.begin(), next_tilings.end(),
                   [&](const MatmulGrid& a, const MatmulGrid& b) { return key(a) < key(b); });
  for (size_t i = 0; all.size() < kShortlist && i < next_tilings.size(); ++i)
    all.push_back(next_tilings[i]);
  all.resize(std::min(all.size(), kShortlist));
  return all;
}

}  // namespace

}  // namespace spyre::compiler
