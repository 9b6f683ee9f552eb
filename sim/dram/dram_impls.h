#pragma once
// Internal to sim/dram: one factory per DRAM model; registry.cpp maps names to them.
#include <memory>

#include "spyre/sim/dram.h"

namespace spyre::sim {

std::unique_ptr<DramModel> make_fifo_dram(Env& env);
std::unique_ptr<DramModel> make_lpddr5_dram(Env& env);

}  // namespace spyre::sim
