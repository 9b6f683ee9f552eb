// Cost of tracing: simulation wall time of one compiled GEMM, or of any IR (timing-only), with
// tracing off, summary-detail Perfetto and Chrome JSON (the default trace), full-detail Chrome
// JSON and Perfetto, and a filtered full Perfetto trace, as ratios to "off", side by side in one
// run, with the trace file sizes. Each case is the best of --repeat runs.
//
// Usage: spyre_bench_trace [--m M --n N --k K | --ir FILE] [--repeat R] [--filter SPEC]
//                          [--dir DIR] [--arch NAME] [--set key=value]...
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "../mm_ir.h"
#include "spyre/error.h"
#include "spyre/runner/runner.h"
#include "spyre/traces/filter.h"

namespace {

using namespace spyre;
using Clock = std::chrono::steady_clock;

struct Case {
  const char* name;
  std::string file;  // empty: tracing off
  std::string filter;
  traces::TraceDetail detail = traces::TraceDetail::Full;
};

}  // namespace

int main(int argc, char** argv) {
  int64_t m = 1024, n = 1024, k = 2048;  // a 40 MiB JSON trace: big enough to time, small to keep
  int repeat = 3;
  std::string arch_name = "spyre", filter = "unit=pt,dma;core=0-3";
  std::string dir = std::filesystem::temp_directory_path().string();
  std::vector<std::string> sets;
  std::string ir_path;
  CLI::App app{"cost of tracing: simulation wall time with tracing off and on"};
  app.add_option("--m", m, "GEMM rows");
  app.add_option("--n", n, "GEMM columns");
  app.add_option("--k", k, "GEMM inner dimension");
  app.add_option("--ir", ir_path,
                 "simulate this IR JSON instead of the GEMM (e.g. the graph_0.ir.json that "
                 "`spyre-sim run MODEL.py --out DIR` saves)")
      ->check(CLI::ExistingFile);
  app.add_option("--repeat", repeat, "runs per case (best is kept)")->check(CLI::Range(1, 100));
  app.add_option("--filter", filter, "--trace-filter spec of the filtered case");
  app.add_option("--dir", dir, "folder for the trace files");
  app.add_option("--arch", arch_name, "architecture preset or YAML");
  app.add_option("--set", sets, "key=value (compiler.* keys go to the compiler)");
  CLI11_PARSE(app, argc, argv);
  try {
    runner::Settings s{arch_name, sets, {}};
    nlohmann::json ir;
    std::string what;
    if (ir_path.empty()) {
      ir = bench::mm_ir(m, n, k, "tools/bench/trace/bench_trace.cpp:1");
      what =
          "GEMM " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " fp16";
    } else {
      std::ifstream f(ir_path);
      try {
        ir = nlohmann::json::parse(f);
      } catch (const nlohmann::json::parse_error& e) {
        throw Error(ir_path, std::string("malformed JSON: ") + e.what());
      }
      what = std::filesystem::path(ir_path).filename().string();
    }
    const auto exe = runner::Executable::from_ir(ir, s, ir_path.empty() ? "<bench>" : ir_path);
    const isa::Program& p = exe.program();
    std::printf("arch %s, %lld cores at %.2f GHz; %s, %zu instructions, timing-only, best of %d\n",
                exe.config().name.c_str(), static_cast<long long>(exe.config().cores),
                exe.config().clock_ghz, what.c_str(), p.num_instructions(), repeat);
    const std::string base = (std::filesystem::path(dir) / "spyre_bench_trace").string();
    using traces::TraceDetail;
    const std::vector<Case> cases = {
        {"off", "", "", TraceDetail::Full},
        {"summary perfetto", base + ".summary.pftrace", "", TraceDetail::Summary},
        {"summary chrome", base + ".summary.json", "", TraceDetail::Summary},
        {"full chrome json", base + ".json", "", TraceDetail::Full},
        {"full perfetto", base + ".pftrace", "", TraceDetail::Full},
        {"full perf. filtered", base + ".filtered.pftrace", filter, TraceDetail::Full}};
    std::printf("%-20s %9s %10s %14s %12s\n", "tracing", "wall_s", "vs off", "cycles/wall_s",
                "file_MiB");
    double off = 0;
    for (const Case& c : cases) {
      double best = 1e300;
      uint64_t cycles = 0;
      for (int r = 0; r < repeat; ++r) {
        runner::RunOptions o;
        o.timing_only = true;
        o.trace_path = c.file;
        o.trace_filter = c.filter;
        o.trace_detail = c.detail;
        auto t0 = Clock::now();
        cycles = exe.run({}, o).sim.cycles;
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
      }
      if (c.file.empty()) off = best;
      const double mib = c.file.empty()
                             ? 0.0
                             : static_cast<double>(std::filesystem::file_size(c.file)) / (1 << 20);
      std::printf("%-20s %9.3f %9.2fx %14.4g %12.2f\n", c.name, best, best / off,
                  static_cast<double>(cycles) / best, mib);
      if (!c.file.empty()) std::filesystem::remove(c.file);
    }
    std::printf("filter: %s\n", filter.c_str());
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
