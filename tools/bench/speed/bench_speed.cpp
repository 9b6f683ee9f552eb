// Simulation speed: simulated cycles per wall second and simulated device time per wall time
// for (1) a 32-core GEMM C[2048,2048] = A[2048,8192] x B[8192,2048] fp16 compiled by the real
// compiler from an Inductor IR of one extern mm node, run timing-only and functional, and
// (2) DRAM streaming: every core loads its share of a buffer in 32 KiB dma.load instructions.
// Target (issue 3): timing-only, 1 ms of device time in at most 1 s of wall time on one core.
//
// Usage: spyre_bench_speed [--skip-functional] [--m M --n N --k K] [--stream-mib N]
//                          [--arch NAME] [--set key=value]... [--asm FILE]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "../mm_ir.h"
#include "spyre/arch/arch.h"
#include "spyre/compiler/compile.h"
#include "spyre/error.h"
#include "spyre/isa/dtype.h"
#include "spyre/isa/format.h"
#include "spyre/sim/simulate.h"

namespace {

using namespace spyre;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

json mm_ir(int64_t m, int64_t n, int64_t k) {
  return bench::mm_ir(m, n, k, "tools/bench/speed/bench_speed.cpp:1");
}

struct Speed {
  uint64_t cycles = 0;
  double wall_s = 0, device_s = 0;
};

Speed run(const isa::Program& p, const arch::ArchConfig& cfg, sim::DeviceMemory& dram,
          bool functional,
          sim::SimOptions::DataThread data_thread = sim::SimOptions::DataThread::Auto) {
  sim::SimOptions o;
  o.functional = functional;
  o.data_thread = data_thread;
  auto t0 = Clock::now();
  sim::SimResult r = sim::simulate(p, cfg, dram, o);
  Speed s;
  s.wall_s = seconds_since(t0);
  s.cycles = r.cycles;
  s.device_s = static_cast<double>(r.cycles) / (cfg.clock_ghz * 1e9);
  return s;
}

void print(const char* what, const Speed& s, size_t instructions) {
  std::printf("%-34s %14llu %10.3f %9.3f %14.4g %10.4f %12zu\n", what,
              static_cast<unsigned long long>(s.cycles), s.device_s * 1e3, s.wall_s,
              static_cast<double>(s.cycles) / s.wall_s, s.device_s / s.wall_s, instructions);
}

// Every core loads `per_core` bytes of its own region in 32 KiB pieces into a rotating LX window.
isa::Program stream_program(int cores, int64_t per_core) {
  constexpr int64_t kChunk = 32768;
  std::string text = ".spyre 1\n.cores " + std::to_string(cores) + "\n.dram_bytes " +
                     std::to_string(cores * per_core) + "\n";
  for (int c = 0; c < cores; ++c) {
    text += ".core " + std::to_string(c) + "\n";
    for (int64_t i = 0; i < per_core / kChunk; ++i)
      text += "  dma.load dram=" + std::to_string(c * per_core + i * kChunk) +
              " lx=" + std::to_string((i % 32) * kChunk) + " bytes=32768\n";
    text += "  halt\n";
  }
  return isa::assemble(text);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t m = 2048, n = 2048, k = 8192, stream_mib = 1024;
  bool functional = true;
  std::string arch_name = "spyre", asm_file;
  std::vector<std::string> sets;
  bool skip_functional = false;
  CLI::App app{"simulation speed: device time per wall second"};
  app.add_flag("--skip-functional", skip_functional, "only the timing-only GEMM");
  app.add_option("--m", m, "GEMM rows");
  app.add_option("--n", n, "GEMM columns");
  app.add_option("--k", k, "GEMM inner dimension");
  app.add_option("--stream-mib", stream_mib, "MiB of the DRAM streaming case");
  app.add_option("--arch", arch_name, "architecture preset or YAML");
  app.add_option("--set", sets, "key=value");
  app.add_option("--asm", asm_file, "write the GEMM program's assembly here");
  CLI11_PARSE(app, argc, argv);
  functional = !skip_functional;
  try {
    const arch::ArchConfig cfg = arch::load_arch(arch_name, sets);
    auto t0 = Clock::now();
    compiler::CompileResult c = compiler::compile(mm_ir(m, n, k), cfg);
    const double compile_s = seconds_since(t0);
    const size_t instrs = c.program.num_instructions();
    if (!asm_file.empty()) isa::save_program(c.program, asm_file);
    std::printf(
        "arch %s, %lld cores at %.2f GHz; GEMM %lldx%lldx%lld fp16 (%.3g MACs): "
        "%zu instructions on %u cores, compiled in %.3f s\n",
        cfg.name.c_str(), static_cast<long long>(cfg.cores), cfg.clock_ghz,
        static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
        static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k), instrs,
        c.program.num_cores, compile_s);
    std::printf("%-34s %14s %10s %9s %14s %10s %12s\n", "case", "cycles", "device_ms", "wall_s",
                "cycles/wall_s", "dev/wall", "instructions");

    sim::DeviceMemory dram(c.program.dram_bytes, 0);
    const Speed timing = run(c.program, cfg, dram, false);
    print("gemm timing-only", timing, instrs);
    if (functional) {
      // Functional with the data effects inline and on their own thread, from the same inputs.
      auto inputs = [&] {
        sim::DeviceMemory image(c.program.dram_bytes, 0);
        std::mt19937 rng(1);
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        for (const auto& in : c.inputs) {
          int64_t count = 1;
          for (int64_t d : in.size) count *= d;
          for (int64_t e = 0; e < count; ++e)
            isa::store_element(image.data() + in.dram_addr + e * 2, isa::DType::F16, u(rng));
        }
        return image;
      };
      using DT = sim::SimOptions::DataThread;
      sim::DeviceMemory one = inputs(), two = inputs();
      const Speed f1 = run(c.program, cfg, one, true, DT::Off);
      print("gemm functional, one thread", f1, instrs);
      const Speed f2 = run(c.program, cfg, two, true, DT::On);
      print("gemm functional, data thread", f2, instrs);
      std::printf(
          "functional / timing-only: %.2fx one thread, %.2fx with the data thread "
          "(outputs %s)\n",
          f1.wall_s / timing.wall_s, f2.wall_s / timing.wall_s,
          one == two ? "bit-identical" : "DIFFER");
      if (one != two) return 1;
    }

    const int64_t per_core = stream_mib * 1024 * 1024 / cfg.cores / 32768 * 32768;
    isa::Program s = stream_program(static_cast<int>(cfg.cores), per_core);
    sim::DeviceMemory sdram;  // timing-only: sized by the run, never touched
    Speed sp = run(s, cfg, sdram, false);
    print(("dram stream " + std::to_string(stream_mib) + " MiB timing-only").c_str(), sp,
          s.num_instructions());
    std::printf("dram stream achieved %.1f GB/s\n",
                static_cast<double>(per_core * cfg.cores) / sp.device_s / 1e9);
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
