// simulate(): builds the chip for one run, drives it on the SystemC kernel, collects results.
#include "spyre/sim/simulate.h"

#include "spyre/error.h"
#include "spyre/sim/chip_module.h"
#include "spyre/sim/kernel.h"

namespace spyre::sim {

double SimResult::utilisation(const std::string& unit_class) const {
  if (cycles == 0 || !stats.contains("chip")) return 0.0;
  const auto& chip = stats["chip"];
  if (!chip["busy_cycles"].contains(unit_class))
    throw Error("utilisation",
                "unknown unit class '" + unit_class + "' (pt, sfp, dma_in, dma_out, ring)");
  double busy = chip["busy_cycles"][unit_class].get<double>();
  double units = chip["unit_count"][unit_class].get<double>();
  return units > 0 ? busy / (static_cast<double>(cycles) * units) : 0.0;
}

SimResult simulate(const isa::Program& program, const arch::ArchConfig& cfg, DeviceMemory& dram,
                   const SimOptions& opts) {
  // A fresh simulation context per run: SystemC elaborates once per context (kernel.h).
  SimContext context;
  ChipModule chip("spyre", program, cfg, opts, &dram);
  return chip.run();
}

}  // namespace spyre::sim
