#pragma once
// How each DMA of a kernel meets the DRAM, for the kernel prediction (timeline.cpp): the DRAM
// bytes its rows cost per byte (strided rows open DRAM rows for few words; cores that walk
// column stripes of the same rows in step share them) and how its words spread over the DRAM's
// channels (the address interleave). Functions of the instruction streams and the chip alone.
#include <cstddef>
#include <utility>
#include <vector>

#include "spyre/arch/arch.h"
#include "spyre/compiler/cost.h"
#include "spyre/isa/isa.h"

namespace spyre::compiler {

struct DmaDram {
  // Per core and instruction (1 and -1 where not a DMA): its bytes per DRAM byte, and its
  // spread: an index into `spreads`, or -1 for evenly over every channel.
  std::vector<std::vector<double>> eff;
  std::vector<std::vector<int>> spread;
  std::vector<std::vector<std::pair<size_t, double>>> spreads;  // (channel, share of its bytes)
  size_t channels = 1;                 // the DRAM's channels; 1 where they are not modelled
  double channel_bytes_per_cycle = 0;  // one channel's rate (infinite where not modelled)
};

DmaDram dma_dram(const std::vector<std::vector<isa::Instr>>& per_core, const arch::ArchConfig& cfg,
                 const CostParams& cp);

}  // namespace spyre::compiler
