// The DRAM bandwidth V-curve: 32 cores stream dma.load and dma.store at read fractions
// 0, 0.1, ..., 1 (timing-only runs of the chip model) and the effective bandwidth is printed
// next to IBM's fitted model T = (R + W) / 150 GB/s + 0.00574 ns * min(R, W)
// (shared/calibration/spyre_measured.json). Also prints the simulation speed of streaming.
//
// Usage: spyre_bench_dram [--impl lpddr5|fifo] [--mib-per-core N] [--csv FILE] [--set key=value]...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "spyre/arch/arch.h"
#include "spyre/error.h"
#include "spyre/runner/dram_bound.h"
#include "spyre/sim/simulate.h"

namespace {

using namespace spyre;

constexpr int kSteps = 10;         // read fractions i / 10
constexpr int64_t kChunk = 32768;  // bytes per dma instruction

struct Point {
  double read_fraction, read_gb, write_gb, device_us, gbps, ibm_gbps, wall_s;
};

Point run_point(const arch::ArchConfig& cfg, int64_t per_core, int reads_of_10) {
  // Core c moves `per_core` bytes in per_core / kChunk instructions: the first share of them
  // loads, the rest stores; loads and stores sit in different queues and run at the same time.
  const int64_t loads = per_core / kChunk * reads_of_10 / kSteps * kChunk;
  isa::Program p =
      runner::dram_stream_program(cfg, static_cast<uint64_t>(loads * cfg.cores),
                                  static_cast<uint64_t>((per_core - loads) * cfg.cores), kChunk);
  sim::DeviceMemory dram;  // timing-only: the image is sized but never touched by the model
  sim::SimOptions opts;
  opts.functional = false;
  auto t0 = std::chrono::steady_clock::now();
  sim::SimResult r = sim::simulate(p, cfg, dram, opts);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Point pt{};
  pt.read_fraction = reads_of_10 / static_cast<double>(kSteps);
  const double R = static_cast<double>(r.dram_read_bytes),
               W = static_cast<double>(r.dram_write_bytes);
  pt.read_gb = R / 1e9;
  pt.write_gb = W / 1e9;
  const double ns = static_cast<double>(r.cycles) / cfg.clock_ghz;
  pt.device_us = ns / 1000.0;
  pt.gbps = (R + W) / ns;
  pt.ibm_gbps = (R + W) / ((R + W) / 150.0 + 0.00574 * std::min(R, W));
  pt.wall_s = wall;
  return pt;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::string impl = "lpddr5", csv;
    double mib = 1.0;
    std::vector<std::string> sets;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw Error("spyre_bench_dram", a + " needs a value");
        return argv[++i];
      };
      if (a == "--impl")
        impl = next();
      else if (a == "--mib-per-core")
        mib = std::stod(next());
      else if (a == "--csv")
        csv = next();
      else if (a == "--set")
        sets.push_back(next());
      else
        throw Error("spyre_bench_dram", "unknown argument '" + a + "'");
    }
    sets.insert(sets.begin(), "dram.impl=" + impl);
    arch::ArchConfig cfg = arch::load_arch("spyre", sets);
    const int64_t per_core =
        std::max<int64_t>(kChunk * kSteps, static_cast<int64_t>(mib * 1048576) / (kChunk * kSteps) *
                                               (kChunk * kSteps));
    std::printf("DRAM V-curve: %lld cores, %lld KiB per core, dram.impl=%s, timing-only\n",
                static_cast<long long>(cfg.cores), static_cast<long long>(per_core / 1024),
                impl.c_str());
    std::printf("%-13s %9s %9s %10s %12s %12s %8s\n", "read_fraction", "read_MB", "write_MB",
                "device_us", "sim_GB/s", "IBM_GB/s", "err_%");
    std::ofstream out;
    if (!csv.empty()) {
      out.open(csv);
      out << "read_fraction,read_bytes,write_bytes,device_us,sim_gbps,ibm_model_gbps\n";
    }
    Point stream{};
    for (int i = 0; i <= kSteps; ++i) {
      Point p = run_point(cfg, per_core, i);
      if (i == kSteps) stream = p;
      std::printf("%-13.1f %9.2f %9.2f %10.2f %12.1f %12.1f %+8.1f\n", p.read_fraction,
                  p.read_gb * 1e3, p.write_gb * 1e3, p.device_us, p.gbps, p.ibm_gbps,
                  100.0 * (p.gbps / p.ibm_gbps - 1));
      if (out)
        out << p.read_fraction << "," << p.read_gb * 1e9 << "," << p.write_gb * 1e9 << ","
            << p.device_us << "," << p.gbps << "," << p.ibm_gbps << "\n";
    }
    std::printf(
        "simulation speed, streaming reads (timing-only): %.1f us of device time in %.3f s wall"
        " = %.3g device s per wall s, %.3g cycles per wall s\n",
        stream.device_us, stream.wall_s, stream.device_us * 1e-6 / stream.wall_s,
        stream.device_us * 1e3 * cfg.clock_ghz / stream.wall_s);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
