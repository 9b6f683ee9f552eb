#pragma once
// Closed-form cost of instructions, the same formulas the simulator's units follow, and the
// prediction for a kernel: max(busiest queue on any core, chip DRAM bytes / bandwidth) plus
// DRAM latency and the barrier.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/isa/isa.h"

namespace spyre::compiler {

struct InstrCost {
  int64_t cycles = 0;      // busy cycles of the instruction's unit
  int64_t dram_bytes = 0;  // bytes moved on DRAM (whole 128 B words)
};

InstrCost instr_cost(const isa::Instr& in, const arch::ArchConfig& cfg);

struct KernelPrediction {
  int64_t cycles = 0;
  int64_t dram_bytes = 0;
  int64_t compute_cycles = 0;  // busiest PT/SFP queue
  int64_t dma_cycles = 0;      // busiest DMA queue
  int64_t dram_cycles = 0;     // chip DRAM bytes / bandwidth
  nlohmann::json to_json() const;
};

// per_core[c] = the kernel's instructions on core c.
KernelPrediction predict(const std::vector<std::vector<isa::Instr>>& per_core,
                         const arch::ArchConfig& cfg);

}  // namespace spyre::compiler
