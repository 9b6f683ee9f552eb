// A functional run gives the same bytes and cycles with its data effects on a second host
// thread (sim::SimOptions::data_thread, sim/include/spyre/sim/data_worker.h) as on one: the
// zoo's transformer blocks, compiled, with DMA multicasts, ring transfers, gathers (GPT-2's
// embeddings), matmuls and SFP chains.
#include <gtest/gtest.h>

#include <random>

#include "compiler_test_util.h"
#include "spyre/compiler/compile.h"
#include "spyre/sim/simulate.h"

namespace spyre::compiler {
namespace {

struct Run {
  sim::DeviceMemory mem;
  sim::SimResult sim;
};

Run simulate_with(const CompileResult& c, const arch::ArchConfig& cfg,
                  sim::SimOptions::DataThread mode) {
  Run r{sim::DeviceMemory(c.program.dram_bytes, 0), {}};
  std::mt19937 rng(99);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (const auto& b : c.inputs) {
    int64_t n = 1;
    for (auto s : b.size) n *= s;
    for (int64_t i = 0; i < n; ++i) {  // integers (token ids) small and valid
      const double v = isa::dtype_is_float(b.dtype) ? u(rng) : static_cast<double>(i % 7);
      isa::store_element(r.mem.data() + test::addr_of(b, i), b.dtype, v);
    }
  }
  sim::SimOptions o;
  o.data_thread = mode;
  r.sim = sim::simulate(c.program, cfg, r.mem, o);
  return r;
}

void expect_same_run(const std::string& model, const std::string& arch_name) {
  const auto cfg = arch::load_arch(arch_name);
  const CompileResult c = compile(test::load_golden(model), cfg, CompileOptions{}, model + ".json");
  const Run one = simulate_with(c, cfg, sim::SimOptions::DataThread::Off);
  const Run two = simulate_with(c, cfg, sim::SimOptions::DataThread::On);
  EXPECT_EQ(one.sim.cycles, two.sim.cycles) << model;
  EXPECT_EQ(one.sim.stats, two.sim.stats) << model;
  ASSERT_EQ(one.mem.size(), two.mem.size());
  size_t differ = 0;
  for (size_t i = 0; i < one.mem.size(); ++i) differ += one.mem[i] != two.mem[i];
  EXPECT_EQ(differ, 0u) << model << " on " << arch_name << ": device memory bytes differ";
  // The outputs were written: the comparison is not of two untouched images.
  const auto& out = c.outputs.at(0);
  bool written = false;
  for (int64_t i = 0; i < 64 && !written; ++i)
    written = isa::load_element(two.mem.data() + test::addr_of(out, i), out.dtype) != 0.0;
  EXPECT_TRUE(written) << model << ": output " << out.name << " is all zero";
}

TEST(DataThread, Gpt2BlockOnSpyreGivesTheSameBytesAndCycles) {
  expect_same_run("models/gpt2", "spyre");
}

TEST(DataThread, LlamaBlockOnTinyGivesTheSameBytesAndCycles) {
  expect_same_run("models/llama", "tiny");
}

}  // namespace
}  // namespace spyre::compiler
