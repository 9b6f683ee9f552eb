// Hardware-loop compression (codegen/loop_compress.cpp): expanding the compressed stream gives
// back exactly the original, on synthetic tile walks and on real compiled programs; a program
// compiled with loops runs to the same outputs and cycles as without, up to the loop issue cost.
#include <gtest/gtest.h>

#include <random>

#include "../../tools/bench/mm_ir.h"
#include "compiler_test_util.h"
#include "spyre/compiler/loop_compress.h"
#include "spyre/isa/loops.h"
#include "spyre/sim/simulate.h"

namespace spyre::compiler {
namespace {

using isa::Instr;
using isa::Opcode;

Instr load(int64_t dram, int64_t lx) {
  return isa::make_instr(Opcode::DmaLoad, {{"dram", dram}, {"lx", lx}, {"bytes", 256}});
}
Instr sig(int64_t q, int64_t tok) {
  return isa::make_instr(Opcode::Signal, {{"q", q}, {"tok", tok}});
}
Instr wait(int64_t q, int64_t tok) {
  return isa::make_instr(Opcode::Wait, {{"q", q}, {"tok", tok}});
}
Instr mm(int64_t a, int64_t c, int64_t flags) {
  return isa::make_instr(Opcode::PtMatmul, {{"cl", 0},
                                            {"a", a},
                                            {"b", 65536},
                                            {"c", c},
                                            {"m", 8},
                                            {"n", 64},
                                            {"k", 64},
                                            {"lda", 64},
                                            {"ldb", 64},
                                            {"ldc", 64},
                                            {"flags", flags}});
}

// A tile walk: per tile t, K steps k each load an A slot (alternating) and multiply into the
// tile's accumulator, then store it.
std::vector<Instr> tile_walk(int64_t tiles, int64_t ksteps) {
  std::vector<Instr> s;
  for (int64_t t = 0; t < tiles; ++t) {
    for (int64_t k = 0; k < ksteps; ++k) {
      s.push_back(wait(0, 14));
      s.push_back(load(t * 1048576 + k * 256, 0));
      s.push_back(sig(0, 2));
      s.push_back(wait(2, 2));
      s.push_back(mm(0, 131072 + t % 2 * 8192, k > 0 ? 1 : 0));
      s.push_back(sig(2, 14));
    }
    s.push_back(
        isa::make_instr(Opcode::DmaStore, {{"lx", 131072}, {"dram", 4096 * t}, {"bytes", 256}}));
  }
  s.push_back(isa::make_instr(Opcode::Halt, {}));
  return s;
}

int max_depth(const std::vector<Instr>& s) {
  int d = -1;
  for (const auto& l : isa::analyse_loops(s, 0).loops) d = std::max(d, l.depth);
  return d;
}

TEST(LoopCompress, TileWalkFoldsIntoNestedLoopsAndExpandsBack) {
  // Tiles alternate accumulators (t % 2), so the outer body is two tiles; the first K step
  // differs (no accumulate), so the inner loop covers steps 1..7.
  const std::vector<Instr> s = tile_walk(16, 8);
  LoopCompressStats st;
  const std::vector<Instr> c = compress_loops(s, {}, &st);
  EXPECT_EQ(isa::expand_stream(c), s);
  EXPECT_EQ(st.words_before, s.size());
  EXPECT_EQ(st.words_after, c.size());
  EXPECT_GE(max_depth(c), 1) << "expected nested loops";
  EXPECT_LT(c.size() * 10, s.size()) << c.size() << " of " << s.size() << " words";
}

TEST(LoopCompress, NeverFoldsAcrossBarriersOrFloats) {
  std::vector<Instr> s;
  for (int64_t i = 0; i < 6; ++i) {
    s.push_back(load(128 * i, 0));
    s.push_back(isa::make_instr(Opcode::Barrier, {}));
  }
  EXPECT_EQ(compress_loops(s), s);  // every repetition holds a barrier
  std::vector<Instr> f;
  for (int64_t i = 0; i < 6; ++i)
    f.push_back(isa::make_instr(Opcode::SfpFill, {{"cl", 0},
                                                  {"dt", 2},
                                                  {"dst", 0},
                                                  {"dst_rs", 32},
                                                  {"dst_cs", 1},
                                                  {"rows", 1},
                                                  {"cols", 32},
                                                  {"value", isa::float_operand(0.5 * i)}}));
  EXPECT_EQ(compress_loops(f), f);  // a float operand cannot step
  f.assign(6, f[0]);
  EXPECT_EQ(isa::expand_stream(compress_loops(f)), f);
  EXPECT_EQ(compress_loops(f).size(), 2u);  // loop count=6 len=1 + the fill
}

isa::Program expanded(isa::Program p) {
  for (size_t c = 0; c < p.cores.size(); ++c) p.cores[c] = isa::expand_stream(p.cores[c], c);
  return p;
}

CompileResult compile_with(const nlohmann::json& ir, const arch::ArchConfig& cfg, bool loops) {
  CompileOptions o;
  o.hw_loops = loops;
  return compile(ir, cfg, o, "ir.json");
}

// The property on real programs: compress(off) expands to off, and the program compiled with
// loops on is exactly off once expanded (and reports the same expanded size).
void check_roundtrip(const nlohmann::json& ir, const std::string& arch, const std::string& what) {
  SCOPED_TRACE(what + " on " + arch);
  const auto cfg = arch::load_arch(arch);
  const CompileResult off = compile_with(ir, cfg, false);
  const CompileResult on = compile_with(ir, cfg, true);
  for (size_t c = 0; c < off.program.cores.size(); ++c)
    ASSERT_EQ(isa::expand_stream(compress_loops(off.program.cores[c])), off.program.cores[c])
        << "core " << c;
  EXPECT_EQ(expanded(on.program), off.program);
  EXPECT_EQ(on.report["totals"]["hw_loops"]["instructions_expanded"],
            off.report["totals"]["instructions"]);
  EXPECT_LE(on.program.num_instructions(), off.program.num_instructions());
  EXPECT_EQ(on.report["lx_plan"], off.report["lx_plan"]);  // intervals in dynamic indices
}

TEST(LoopCompress, CompiledProgramsExpandBackExactly) {
  for (const char* arch : {"tiny", "spyre"}) {
    for (const char* g : {"matmul", "mlp_block", "eltwise_chain", "models/resnet_block"})
      check_roundtrip(test::load_golden(g), arch, g);
    check_roundtrip(bench::mm_ir(512, 1024, 2048, "model.py:1", true), arch, "gemm 512x1024x2048");
  }
}

TEST(LoopCompress, GemmRunsTheSameWithLoopsOnAndOff) {
  auto cfg = arch::load_arch("tiny");
  const nlohmann::json ir = bench::mm_ir(256, 512, 1024, "model.py:1", false);
  const CompileResult off = compile_with(ir, cfg, false), on = compile_with(ir, cfg, true);
  // Few tiles per core on "tiny": a modest saving here; big GEMMs: tools/bench/compile.
  EXPECT_LT(on.program.num_instructions(), off.program.num_instructions());
  sim::DeviceMemory mem(off.program.dram_bytes, 0);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> v(-8, 8);
  for (const auto& b : off.inputs) {
    int64_t n = 1;
    for (auto d : b.size) n *= d;
    for (int64_t i = 0; i < n; ++i)
      isa::store_element(mem.data() + test::addr_of(b, i), b.dtype, 0.25 * v(rng));
  }
  auto run = [&](const isa::Program& p, int64_t loop_cost) {
    sim::DeviceMemory m = mem;
    auto c = cfg;
    c.loop_issue_cycles = loop_cost;
    const sim::SimResult r = sim::simulate(p, c, m);
    return std::make_pair(r, m);
  };
  const auto [r_off, m_off] = run(off.program, 1);
  const auto [r_on0, m_on0] = run(on.program, 0);
  const auto [r_on, m_on] = run(on.program, 1);
  EXPECT_EQ(m_on0, m_off);  // every byte of device memory
  EXPECT_EQ(m_on, m_off);
  EXPECT_EQ(r_on0.cycles, r_off.cycles);  // free loop words: the expansion's exact timing
  uint64_t words = 0;
  for (const auto& c : r_on.stats["chip"]["cores"])
    words += c["sequencer"]["loop_words"].get<uint64_t>();
  EXPECT_GT(words, 0u);
  EXPECT_GE(r_on.cycles + words, r_off.cycles);  // each word delays one sequencer by a cycle
  EXPECT_LE(r_on.cycles, r_off.cycles + words);
}

}  // namespace
}  // namespace spyre::compiler
