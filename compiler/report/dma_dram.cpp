// How each DMA of a kernel meets the DRAM (dma_dram.h).
#include "dma_dram.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <string>

#include "spyre/arch/unit_timing.h"

namespace spyre::compiler {
namespace {

using isa::Opcode;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool is_dma(Opcode op) {
  return op == Opcode::DmaLoad || op == Opcode::DmaStore || op == Opcode::DmaGather ||
         op == Opcode::DmaScatter;
}

class Builder {
 public:
  Builder(const std::vector<std::vector<isa::Instr>>& per_core, const arch::ArchConfig& cfg,
          const CostParams& cp)
      : cores_(per_core), cfg_(cfg), cp_(cp) {}

  DmaDram build() {
    channel_spreads();  // first: the group rule reads the channel count
    strided_efficiency();
    return std::move(out_);
  }

 private:
  // Strided DMA rows cost the DRAM more than their bytes (cost.h: CostParams::run_efficiency).
  // Cores that stream neighbouring columns of the same rows at once (the column stripes of one
  // matrix) share the DRAM rows they open: together they are rows of a longer run. The DMAs
  // that run together are taken to be the j-th strided transfer of each core's queue at the
  // same stride (the cores walk their tiles in step); their rows' byte ranges, merged, give the
  // group's run, and a DMA moves at the better of its own efficiency and its group's. Gathers
  // and scatters (rows at data-dependent addresses) count as contiguous.
  void strided_efficiency() {
    out_.eff.resize(cores_.size());
    std::map<std::array<int64_t, 4>, std::vector<std::pair<size_t, size_t>>> groups;
    for (size_t c = 0; c < cores_.size(); ++c) {
      out_.eff[c].assign(cores_[c].size(), 1.0);
      std::map<std::array<int64_t, 3>, int64_t> rank;  // (queue, stride, run) -> count
      for (size_t i = 0; i < cores_[c].size(); ++i) {
        const isa::Instr& in = cores_[c][i];
        if (!is_dma(in.op) || in.op == Opcode::DmaGather || in.op == Opcode::DmaScatter ||
            SPYRE_OPERAND(in, "rows") <= 1 ||
            SPYRE_OPERAND(in, "dram_stride") == SPYRE_OPERAND(in, "bytes"))
          continue;
        const int64_t q = static_cast<int64_t>(isa::queue_of(in));
        const int64_t stride = SPYRE_OPERAND(in, "dram_stride");
        const std::array<int64_t, 3> shape = {q, stride, SPYRE_OPERAND(in, "bytes")};
        groups[{q, stride, SPYRE_OPERAND(in, "bytes"), rank[shape]++}].emplace_back(c, i);
      }
    }
    const int64_t window = cfg_.dram_word_bytes * cfg_.dram_channels *
                           std::max<int64_t>(1, cfg_.dram_row_bytes / cfg_.dram_word_bytes);
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const auto& [key, members] : groups) {
      // The columns the members' rows cover (their offsets within one stride), merged: the
      // group's runs.
      const int64_t stride = key[1];
      spans.clear();
      int64_t rows = 0;
      for (const auto& [c, i] : members) {
        const isa::Instr& in = cores_[c][i];
        const int64_t col = SPYRE_OPERAND(in, "dram") % stride,
                      end = col + SPYRE_OPERAND(in, "bytes");
        spans.emplace_back(col, std::min(end, stride));
        if (end > stride) spans.emplace_back(0, end - stride);
        rows = std::max(rows, SPYRE_OPERAND(in, "rows"));
      }
      std::sort(spans.begin(), spans.end());
      int64_t runs = 0, bytes = 0, lo = spans.front().first, hi = spans.front().first;
      for (const auto& [a, b] : spans) {
        if (a > hi) {
          ++runs;
          bytes += hi - lo;
          lo = a;
        }
        hi = std::max(hi, b);
      }
      ++runs;
      bytes += hi - lo;
      const int64_t run = std::min(stride, bytes / runs);
      const double group = run >= stride ? 1.0 : efficiency(run, stride, rows, lo, window);
      const bool meet = members_meet(members, stride);
      for (const auto& [c, i] : members) {
        const isa::Instr& in = cores_[c][i];
        const double own = efficiency(SPYRE_OPERAND(in, "bytes"), stride, SPYRE_OPERAND(in, "rows"),
                                      SPYRE_OPERAND(in, "dram"), window);
        out_.eff[c][i] = meet ? std::max(group, own) : own;
      }
    }
  }
  // How each DMA's words spread over the DRAM's channels (the default interleave: channel =
  // word % channels, CostParams::dram_visits). A transfer moves its bytes on every channel it
  // touches in proportion, so transfers that crowd onto a few channels at once (the K column
  // of every core's A tile, rows a power of two apart) are held to those channels' share of
  // the bandwidth, while transfers spread evenly share the whole DRAM. Gathers, scatters and
  // DRAM models without channels spread evenly.
  void channel_spreads() {
    out_.spread.resize(cores_.size());
    const std::string& map = cfg_.dram_address_map;
    const bool mapped = cfg_.dram_impl == "lpddr5" && cfg_.dram_channels > 1 && map.size() >= 2 &&
                        map.substr(map.size() - 2) == "ch";
    out_.channels = mapped ? static_cast<size_t>(cfg_.dram_channels) : 1;
    out_.channel_bytes_per_cycle =
        mapped ? cp_.channel_bytes_per_cycle(cfg_)
               : std::numeric_limits<double>::infinity();  // else the DRAM's total alone
    for (size_t c = 0; c < cores_.size(); ++c) {
      out_.spread[c].assign(cores_[c].size(), -1);
      if (!mapped) continue;
      for (size_t i = 0; i < cores_[c].size(); ++i) {
        const isa::Instr& in = cores_[c][i];
        // Repetitions (reps, outer) move the rows elsewhere: counted as spread evenly, as are
        // rows a negative stride apart.
        if ((in.op != Opcode::DmaLoad && in.op != Opcode::DmaStore) ||
            SPYRE_OPERAND(in, "reps") > 1 || SPYRE_OPERAND(in, "outer") > 1 ||
            SPYRE_OPERAND(in, "dram_stride") < 0)
          continue;
        out_.spread[c][i] = spread_of(SPYRE_OPERAND(in, "bytes"), SPYRE_OPERAND(in, "dram_stride"),
                                      SPYRE_OPERAND(in, "rows"), SPYRE_OPERAND(in, "dram"));
      }
    }
  }
  // The spreads index of `rows` rows of `bytes` bytes `stride` apart from `dram` (-1: even),
  // remembered per shape and channel offset (kernels repeat a few shapes).
  int spread_of(int64_t bytes, int64_t stride, int64_t rows, int64_t dram) {
    const int64_t word = std::max<int64_t>(1, cfg_.dram_word_bytes);
    const auto nch = static_cast<int64_t>(out_.channels);
    // With channel hashing (dram.channel_xor) the channels depend on the whole address.
    const std::array<int64_t, 4> key = {bytes, stride, rows,
                                        cfg_.dram_channel_xor == 1 ? dram : dram % (word * nch)};
    if (auto it = spread_memo_.find(key); it != spread_memo_.end()) return it->second;
    std::vector<int64_t> words(out_.channels, 0);
    std::vector<CostParams::DramVisit> visits;
    if (cp_.dram_visits(cfg_, bytes, stride, rows, key[3], visits)) {
      for (const auto& v : visits) ++words[static_cast<size_t>(v.channel)];
    } else {  // one contiguous range: whole turns of the channels, then the rest
      const int64_t lo = key[3] % (word * nch) / word;
      const int64_t n = ceil_div(key[3] + bytes * std::max<int64_t>(rows, 1), word) - lo;
      for (int64_t k = 0; k < nch; ++k)
        words[static_cast<size_t>((lo + k) % nch)] = n / nch + (k < n % nch ? 1 : 0);
    }
    int id = -1;
    if (!std::all_of(words.begin(), words.end(), [&](int64_t w) { return w == words[0]; })) {
      auto [it, fresh] = spread_ids_.emplace(words, static_cast<int>(out_.spreads.size()));
      if (fresh) {
        int64_t total = 0;
        for (int64_t w : words) total += w;
        std::vector<std::pair<size_t, double>> shares;
        for (size_t k = 0; k < out_.channels; ++k)
          if (words[k] > 0)
            shares.emplace_back(k, static_cast<double>(words[k]) / static_cast<double>(total));
        out_.spreads.push_back(std::move(shares));
      }
      id = it->second;
    }
    spread_memo_.emplace(key, id);
    return id;
  }

  // Whether a group's members open the DRAM rows together. Each member's requests reach the
  // DRAM's queues a few pieces ahead (its in-flight bytes); members that share a channel meet
  // in its rows only while they stay in step. They stay in step when their rows start on the
  // same channel (every piece loads the channels alike, so the DRAM serves them alike) or when
  // each has the whole of its part of a DRAM row window in flight at once; otherwise they
  // drift apart and each opens the rows for itself. Simulated (2026-12-06): 16 pairs of cores
  // loading the two halves of 64-row blocks, halves of 4096, 6144, 8192 and 10240 bytes
  // (second half starting on channel 0) stream 144-154 GB/s together against 121-124 alone;
  // halves of 1536-7168 bytes starting on another channel 104-120 against 84-108 alone, after
  // starting in step at 153; 1024-byte halves (no channel shared) 158.
  // The phases are the plain interleave's (dram.channel_xor permutes each window's channels,
  // which this check does not follow).
  bool members_meet(const std::vector<std::pair<size_t, size_t>>& members, int64_t stride) {
    const int64_t word = std::max<int64_t>(1, cfg_.dram_word_bytes);
    const auto nch = static_cast<int64_t>(out_.channels);
    const int64_t window = word * nch * std::max<int64_t>(1, cfg_.dram_row_bytes / word);
    std::vector<std::pair<int64_t, int64_t>> phases;  // per member: first channel, channels
    for (const auto& [c, i] : members) {
      const isa::Instr& in = cores_[c][i];
      const int64_t piece =
          std::min(std::max<int64_t>(SPYRE_OPERAND(in, "bytes"), 1), cfg_.dma_burst_bytes);
      const int64_t part = SPYRE_OPERAND(in, "bytes") * std::max<int64_t>(1, window / stride);
      if (part <= arch::dma_in_flight(cfg_, piece) * piece) continue;  // in step anyway
      phases.emplace_back(
          SPYRE_OPERAND(in, "dram") / word % nch,
          std::min(nch,
                   ceil_div(SPYRE_OPERAND(in, "dram") % word + SPYRE_OPERAND(in, "bytes"), word)));
    }
    for (size_t a = 0; a < phases.size(); ++a)
      for (size_t b = a + 1; b < phases.size(); ++b) {
        if (phases[a].first == phases[b].first) continue;
        // Channels [first, first + n) mod nch of each: do they share one?
        const int64_t d = (phases[b].first - phases[a].first + nch) % nch;
        if (d < phases[a].second || nch - d < phases[b].second) return false;
      }
    return true;
  }

  // CostParams::run_efficiency (the row-visit factor: the channels are shared by the fluid),
  // remembered per DMA shape (kernels repeat a few shapes).
  double efficiency(int64_t run, int64_t stride, int64_t rows, int64_t addr, int64_t window) {
    const std::array<int64_t, 4> key = {run, stride, std::min<int64_t>(rows, 64), addr % window};
    auto it = run_eff_.find(key);
    if (it == run_eff_.end())
      it = run_eff_.emplace(key, cp_.run_efficiency(cfg_, run, stride, rows, key[3], true)).first;
    return it->second;
  }

  const std::vector<std::vector<isa::Instr>>& cores_;
  const arch::ArchConfig& cfg_;
  const CostParams& cp_;
  DmaDram out_;
  std::map<std::array<int64_t, 4>, double> run_eff_;
  std::map<std::array<int64_t, 4>, int> spread_memo_;  // spread_of's answers
  std::map<std::vector<int64_t>, int> spread_ids_;     // words per channel -> spreads index
};

}  // namespace

DmaDram dma_dram(const std::vector<std::vector<isa::Instr>>& per_core, const arch::ArchConfig& cfg,
                 const CostParams& cp) {
  return Builder(per_core, cfg, cp).build();
}

}  // namespace spyre::compiler
