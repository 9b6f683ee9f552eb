#include "spyre/compiler/cost.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "spyre/arch/unit_timing.h"

namespace spyre::compiler {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// DRAM bytes of one DMA: each row is cut into bursts, each rounded up to whole words.
int64_t dma_dram_bytes(const isa::Instr& in, const arch::ArchConfig& cfg) {
  const int64_t bytes = in.get("bytes"), rows = in.get("rows"), reps = in.get("reps");
  const int64_t word = cfg.dram_word_bytes;
  int64_t per_row = 0;
  for (int64_t left = bytes; left > 0; left -= cfg.dma_burst_bytes)
    per_row += ceil_div(std::min<int64_t>(left, cfg.dma_burst_bytes), word) * word;
  return per_row * rows * reps;
}

int64_t dma_pieces(const isa::Instr& in, const arch::ArchConfig& cfg) {
  return ceil_div(std::max<int64_t>(in.get("bytes"), 1), cfg.dma_burst_bytes) * in.get("rows") *
         in.get("reps");
}

}  // namespace

InstrCost instr_cost(const isa::Instr& in, const arch::ArchConfig& cfg) {
  using isa::Opcode;
  InstrCost c;
  switch (in.op) {
    case Opcode::DmaLoad:
    case Opcode::DmaStore: {
      // Setup, then pieces issued at the engine rate with at most dma_max_outstanding in
      // flight, each landing after the DRAM latency: small pieces are latency bound.
      c.dram_bytes = dma_dram_bytes(in, cfg);
      int64_t rate =
          in.op == Opcode::DmaLoad ? cfg.dma_read_bytes_per_cycle : cfg.dma_write_bytes_per_cycle;
      const int64_t pieces = dma_pieces(in, cfg);
      const int64_t lat = cfg.ns_to_cycles(cfg.dram_latency_ns);
      c.cycles = cfg.dma_setup_cycles + lat +
                 std::max(ceil_div(c.dram_bytes, rate),
                          (pieces - 1) / std::max<int64_t>(1, cfg.dma_max_outstanding) * lat);
      break;
    }
    case Opcode::DmaGather: {  // n rows of `bytes`, as a dma.load
      const int64_t word = cfg.dram_word_bytes, burst = cfg.dma_burst_bytes;
      const int64_t b = std::max<int64_t>(in.get("bytes"), 1), n = in.get("n");
      int64_t per_row = 0;
      for (int64_t left = b; left > 0; left -= burst)
        per_row += ceil_div(std::min<int64_t>(left, burst), word) * word;
      c.dram_bytes = per_row * n;
      const int64_t pieces = ceil_div(b, burst) * n;
      const int64_t lat = cfg.ns_to_cycles(cfg.dram_latency_ns);
      c.cycles = cfg.dma_setup_cycles + lat +
                 std::max(ceil_div(c.dram_bytes, cfg.dma_read_bytes_per_cycle),
                          (pieces - 1) / std::max<int64_t>(1, cfg.dma_max_outstanding) * lat);
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
    default: break;
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

KernelPrediction predict(const std::vector<std::vector<isa::Instr>>& per_core,
                         const arch::ArchConfig& cfg) {
  KernelPrediction p;
  int64_t busiest = 0;
  for (const auto& instrs : per_core) {
    std::array<int64_t, isa::kNumQueues> busy{};
    for (const auto& in : instrs) {
      InstrCost c = instr_cost(in, cfg);
      busy[static_cast<size_t>(isa::queue_of(in))] += c.cycles;
      p.dram_bytes += c.dram_bytes;
    }
    for (size_t q = 0; q < busy.size(); ++q) {
      busiest = std::max(busiest, busy[q]);
      if (q <= 1)
        p.dma_cycles = std::max(p.dma_cycles, busy[q]);
      else if (q <= 5)
        p.compute_cycles = std::max(p.compute_cycles, busy[q]);
    }
  }
  p.dram_cycles = static_cast<int64_t>(
      std::ceil(static_cast<double>(p.dram_bytes) / cfg.dram_bytes_per_cycle()));
  p.cycles = std::max(busiest, p.dram_cycles) + cfg.ns_to_cycles(cfg.dram_latency_ns) +
             cfg.barrier_latency_cycles;
  return p;
}

}  // namespace spyre::compiler
