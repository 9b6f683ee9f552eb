// simulate(): builds the chip for one run, drives it on the SystemC kernel, collects results.
#include "spyre/sim/simulate.h"

#include "spyre/error.h"
#include "spyre/sim/chip.h"
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
  cfg.validate();
  isa::validate(program);
  if (static_cast<int64_t>(program.num_cores) > cfg.cores)
    throw Error("simulate", "program needs " + std::to_string(program.num_cores) +
                                " cores, arch has " + std::to_string(cfg.cores));
  // Timing-only runs never read or write data: the device memory image is not allocated (an
  // 8B-parameter model's 16 GB of weights need no host memory).
  if (opts.functional && dram.size() < program.dram_bytes) dram.resize(program.dram_bytes, 0);
  for (const auto& seg : program.data) {
    if (seg.dram_addr + seg.bytes.size() > program.dram_bytes)
      throw Error("simulate", "data segment at " + std::to_string(seg.dram_addr) +
                                  " lies outside the program's device memory");
    if (opts.functional)
      std::copy(seg.bytes.begin(), seg.bytes.end(),
                dram.begin() + static_cast<std::ptrdiff_t>(seg.dram_addr));
  }

  EventQueue q;
  Env env{cfg, program, q, opts.functional, opts.trace};
  Chip chip(env, dram);
  chip.start();
  KernelStop stop = run_on_kernel(q, cfg.period_ps(), opts.max_cycles);
  if (stop == KernelStop::Watchdog)
    throw Error("simulate", "watchdog: no end after max_cycles " + std::to_string(opts.max_cycles) +
                                " (at cycle " + std::to_string(q.now()) + ")" +
                                chip.stuck_report());
  if (!chip.all_halted())
    throw Error("simulate", "deadlock at cycle " + std::to_string(q.now()) +
                                ": nothing left to happen, but cores have not halted" +
                                chip.stuck_report());

  chip.finish_trace();
  SimResult r;
  r.cycles = chip.end_cycle();
  r.kernels = chip.kernel_stats();
  r.dram_read_bytes = chip.dram().read_bytes();
  r.dram_write_bytes = chip.dram().write_bytes();
  r.stats = chip.stats(r.cycles);
  return r;
}

}  // namespace spyre::sim
