// Compile time of the C++ compiler (IR JSON text -> parsed, validated, compiled program) for
// captured models. Target (issue 5): the 12-layer GPT-2 small at sequence 128
// (tests/data/ir/bench/gpt2_small.json) in under 5 s. Each model is compiled `--repeat` times;
// the table shows the fastest and the median wall time, the kernels and instructions produced,
// and the program's size in the binary format (what hardware loops would shrink).
//
// Usage: spyre_bench_compile [--arch NAME] [--repeat N] [--set key=value]... [IR.json ...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/compile.h"
#include "spyre/error.h"
#include "spyre/isa/format.h"

namespace {

using namespace spyre;
using Clock = std::chrono::steady_clock;

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(path, "cannot open");
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

struct Timing {
  double best_s = 0, median_s = 0;
  size_t kernels = 0, instructions = 0, binary_bytes = 0, nodes = 0;
};

Timing time_compile(const std::string& path, const arch::ArchConfig& cfg,
                    const compiler::CompileOptions& opts, int repeat) {
  const std::string text = read_text(path);
  Timing t;
  std::vector<double> walls;
  for (int i = 0; i < repeat; ++i) {
    auto t0 = Clock::now();
    // Parsing is part of the C++ compile: the CLI does the same.
    nlohmann::json ir = nlohmann::json::parse(text);
    compiler::CompileResult r = compiler::compile(ir, cfg, opts, path);
    walls.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (i == 0) {
      t.nodes = ir.at("nodes").size();
      t.kernels = r.program.kernels.size();
      for (const auto& s : r.program.cores) t.instructions += s.size();
      t.binary_bytes = isa::encode(r.program).size();
    }
  }
  std::sort(walls.begin(), walls.end());
  t.best_s = walls.front();
  t.median_s = walls[walls.size() / 2];
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"compile time of captured models"};
  std::string arch_name = "spyre";
  int repeat = 3;
  std::vector<std::string> sets;
  std::vector<std::string> files{std::string(SPYRE_SOURCE_DIR) +
                                 "/tests/data/ir/bench/gpt2_small.json"};
  app.add_option("--arch", arch_name, "architecture preset or YAML");
  app.add_option("--repeat", repeat, "compiles per model")->check(CLI::Range(1, 100));
  app.add_option("--set", sets, "key=value (compiler.* keys go to the compiler)");
  app.add_option("files", files, "IR JSON files");
  CLI11_PARSE(app, argc, argv);
  try {
    compiler::CompileOptions opts;
    std::vector<std::string> arch_sets;
    for (const auto& kv : sets) {
      auto eq = kv.find('=');
      if (eq == std::string::npos) throw Error("--set " + kv, "expected key=value");
      if (kv.rfind("compiler.", 0) == 0)
        opts.set(kv.substr(9, eq - 9), kv.substr(eq + 1));
      else
        arch_sets.push_back(kv);
    }
    const arch::ArchConfig cfg = arch::load_arch(arch_name, arch_sets);
    std::printf("%-48s %6s %8s %12s %12s %9s %9s\n", "model", "nodes", "kernels", "instructions",
                "binary B", "best s", "median s");
    for (const auto& f : files) {
      Timing t = time_compile(f, cfg, opts, repeat);
      std::printf("%-48s %6zu %8zu %12zu %12zu %9.3f %9.3f\n", f.c_str(), t.nodes, t.kernels,
                  t.instructions, t.binary_bytes, t.best_s, t.median_s);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
