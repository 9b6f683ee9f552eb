#include "spyre/compiler/cost.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>

#include "spyre/arch/unit_timing.h"

namespace spyre::compiler {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// DRAM bytes of one DMA: each row is cut into bursts, each rounded up to whole words.
int64_t dma_dram_bytes(const isa::Instr& in, const arch::ArchConfig& cfg) {
  const int64_t bytes = SPYRE_OPERAND(in, "bytes"), rows = SPYRE_OPERAND(in, "rows"),
                reps = SPYRE_OPERAND(in, "reps");
  const int64_t word = cfg.dram_word_bytes;
  int64_t per_row = 0;
  for (int64_t left = bytes; left > 0; left -= cfg.dma_burst_bytes)
    per_row += ceil_div(std::min<int64_t>(left, cfg.dma_burst_bytes), word) * word;
  return per_row * rows * reps * SPYRE_OPERAND(in, "outer");
}

int64_t dma_pieces(const isa::Instr& in, const arch::ArchConfig& cfg) {
  return ceil_div(std::max<int64_t>(SPYRE_OPERAND(in, "bytes"), 1), cfg.dma_burst_bytes) *
         SPYRE_OPERAND(in, "rows") * SPYRE_OPERAND(in, "reps") * SPYRE_OPERAND(in, "outer");
}

// Setup, then `pieces` requests of up to `piece` bytes issued at the engine's `rate` with at
// most arch::dma_in_flight of them in flight, each landing after the DRAM latency: small
// pieces, and one or two cores, are latency bound.
int64_t dma_cycles(const arch::ArchConfig& cfg, int64_t dram_bytes, int64_t pieces, int64_t piece,
                   int64_t rate) {
  const int64_t lat = cfg.ns_to_cycles(cfg.dram_latency_ns);
  return cfg.dma_setup_cycles + lat +
         std::max(ceil_div(dram_bytes, rate), (pieces - 1) / arch::dma_in_flight(cfg, piece) * lat);
}

}  // namespace

InstrCost instr_cost(const isa::Instr& in, const arch::ArchConfig& cfg) {
  using isa::Opcode;
  InstrCost c;
  switch (in.op) {
    case Opcode::DmaLoad:
    case Opcode::DmaStore: {
      c.dram_bytes = dma_dram_bytes(in, cfg);
      c.requests = dma_pieces(in, cfg);
      c.cycles = dma_cycles(
          cfg, c.dram_bytes, c.requests,
          std::min(std::max<int64_t>(SPYRE_OPERAND(in, "bytes"), 1), cfg.dma_burst_bytes),
          in.op == Opcode::DmaLoad ? cfg.dma_read_bytes_per_cycle : cfg.dma_write_bytes_per_cycle);
      break;
    }
    case Opcode::DmaGather:  // n rows of `bytes`, as a dma.load (a scatter: a dma.store)
    case Opcode::DmaScatter: {
      const int64_t word = cfg.dram_word_bytes, burst = cfg.dma_burst_bytes;
      const int64_t b = std::max<int64_t>(SPYRE_OPERAND(in, "bytes"), 1),
                    n = SPYRE_OPERAND(in, "n");
      int64_t per_row = 0;
      for (int64_t left = b; left > 0; left -= burst)
        per_row += ceil_div(std::min<int64_t>(left, burst), word) * word;
      c.dram_bytes = per_row * n;
      c.requests = ceil_div(b, burst) * n;
      c.cycles = dma_cycles(cfg, c.dram_bytes, c.requests, std::min(b, burst),
                            in.op == Opcode::DmaGather ? cfg.dma_read_bytes_per_cycle
                                                       : cfg.dma_write_bytes_per_cycle);
      break;
    }
    case Opcode::PtMatmul:
      // Same closed form as the simulator (dataflow, folds, fill/drain, dtype rate).
      c.cycles = arch::pt_mm_cycles(cfg, in);
      break;
    case Opcode::SfpUnary:
    case Opcode::SfpBinary:
    case Opcode::SfpSelect:
    case Opcode::SfpReduce:
    case Opcode::SfpConvert:
    case Opcode::SfpFill: c.cycles = arch::sfp_op_cycles(cfg, in); break;
    // Sequencer words: their cost is the issue slot (and, for a wait, the token), which the
    // timeline charges itself; no unit time, no DRAM bytes.
    case Opcode::Signal:
    case Opcode::Wait:
    case Opcode::Barrier:
    case Opcode::Halt:
    case Opcode::Loop:
    case Opcode::LoopStep: break;
    // Ring transfers take their time from the route between the two cores: the timeline
    // charges the link time and the hops (timeline.cpp).
    case Opcode::RingSend:
    case Opcode::RingReduce: break;
    // The host's time (arch/unit_timing.h): the link both ways and the host's own work.
    case Opcode::HostCall:
      c.cycles = arch::host_call_cycles(cfg, SPYRE_OPERAND(in, "in_bytes"),
                                        SPYRE_OPERAND(in, "out_bytes"));
      break;
    // Time outside the program: no unit's, so no busy time; timeline.cpp holds the sequencer
    // for it.
    case Opcode::Delay: break;
  }
  return c;
}

nlohmann::json KernelPrediction::to_json() const {
  return {{"cycles", cycles},
          {"dram_bytes", dram_bytes},
          {"compute_cycles", compute_cycles},
          {"dma_cycles", dma_cycles},
          {"dram_cycles", dram_cycles}};
}

double CostParams::dram_bytes_per_cycle(const arch::ArchConfig& cfg) const {
  if (cfg.dram_impl != "lpddr5") return cfg.dram_bytes_per_cycle();
  const double peak_gbps = static_cast<double>(cfg.dram_channels * cfg.dram_channel_width_bits) /
                           8.0 * cfg.dram_data_rate_mtps / 1000.0;
  return peak_gbps * dram_efficiency / cfg.clock_ghz;
}

double CostParams::channel_bytes_per_cycle(const arch::ArchConfig& cfg) const {
  if (cfg.dram_impl != "lpddr5" || cfg.dram_channels <= 0) return 0;
  const double channel_gbps =
      static_cast<double>(cfg.dram_channel_width_bits) / 8.0 * cfg.dram_data_rate_mtps / 1000.0;
  return std::max(channel_gbps * channel_efficiency / cfg.clock_ghz,
                  dram_bytes_per_cycle(cfg) / static_cast<double>(cfg.dram_channels));
}

bool CostParams::dram_visits(const arch::ArchConfig& cfg, int64_t run, int64_t stride, int64_t rows,
                             int64_t addr, std::vector<DramVisit>& out,
                             std::vector<char>* channels) const {
  if (cfg.dram_impl != "lpddr5" || rows <= 1 || stride == run || run <= 0) return false;
  // The default interleave (channels just above the word, then the columns of a DRAM row):
  // the words of [addr, addr + run) + i * stride land on channel (a / word) % channels, in the
  // DRAM row window a / (word * channels * columns). Counted over the first rows (a pattern
  // repeats within a few dozen), at most 64.
  const std::string& map = cfg.dram_address_map;
  if (map.size() < 2 || map.substr(map.size() - 2) != "ch") return false;
  const int64_t word = cfg.dram_word_bytes, nch = cfg.dram_channels;
  const int64_t window = word * nch * std::max<int64_t>(1, cfg.dram_row_bytes / word);
  // dram.channel_xor: the channel is XORed with the fields above the column folded to its
  // width; with the column just above the channel those fields are the window's index.
  const bool hashed = cfg.dram_channel_xor == 1;
  if (hashed && (map.size() < 5 || map.substr(map.size() - 5) != "co-ch" || (nch & (nch - 1))))
    return false;
  const int bits = hashed ? __builtin_ctzll(static_cast<uint64_t>(nch)) : 0;
  auto channel_of = [&](int64_t w) {
    return (w % nch) ^ static_cast<int64_t>(
                           arch::channel_xor_fold(static_cast<uint64_t>(w * word / window), bits));
  };
  if (channels) channels->assign(static_cast<size_t>(nch), 0);
  const int64_t n = std::min<int64_t>(rows, 64);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t w = (addr + r * stride) / word; w * word < addr + r * stride + run; ++w) {
      const int64_t c = channel_of(w);
      if (channels) (*channels)[static_cast<size_t>(c)] = 1;
      out.push_back({c, w * word / window});
    }
  return true;
}

double CostParams::words_per_visit(std::vector<DramVisit>& visits) {
  if (visits.empty()) return 0;
  const auto words = static_cast<double>(visits.size());
  std::sort(visits.begin(), visits.end());
  return words / static_cast<double>(std::unique(visits.begin(), visits.end()) - visits.begin());
}

double CostParams::row_visit_factor(double v) const {
  return std::min(1.0, strided_channel_rate * v / (v + strided_visit_words));
}

double CostParams::run_efficiency(const arch::ArchConfig& cfg, int64_t run, int64_t stride,
                                  int64_t rows, int64_t addr, bool row_visits_only) const {
  std::vector<DramVisit> visits;
  std::vector<char> seen_ch;
  if (!dram_visits(cfg, run, stride, rows, addr, visits, &seen_ch)) return 1.0;
  int64_t covered = 0;
  for (char c : seen_ch) covered += c;
  const double channels =
      row_visits_only ? 1.0 : static_cast<double>(covered) / static_cast<double>(seen_ch.size());
  return std::min(1.0, channels * row_visit_factor(words_per_visit(visits)));
}

double CostParams::turnaround_cycles_per_byte(const arch::ArchConfig& cfg) const {
  return cfg.dram_impl == "lpddr5" ? turnaround_ns_per_byte * cfg.clock_ghz : 0.0;
}

int64_t CostParams::dram_latency_cycles(const arch::ArchConfig& cfg) const {
  if (cfg.dram_impl != "lpddr5") return cfg.ns_to_cycles(cfg.dram_latency_ns);
  return cfg.ns_to_cycles(cfg.dram_trcd_ns + cfg.dram_rl_ns + cfg.dram_frontend_latency_ns);
}

}  // namespace spyre::compiler
