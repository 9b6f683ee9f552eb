// The sequencer runs hardware loops (isa.def): nested loops with operand steps compute what
// their expansion computes, issue the same instructions, and time the same up to the modelled
// loop issue cost.
#include <gtest/gtest.h>

#include <cstring>

#include "sim_test_util.h"
#include "spyre/isa/loops.h"

namespace spyre::sim::test {
namespace {

// A 4 x 4 grid of 128 B blocks (64 f16 each) at DRAM 0, row r at r*512. For r (outer loop)
// and c (inner loop): load block (r, c) into LX slot c*1024 + r*128, negate it into
// 8192 + c*1024 + r*128 on sfp0 (each iteration synchronised by a token); then one store of
// the 4 KiB result to DRAM 8192. So output block (c, r) = -input block (r, c): a transpose.
// Outer body words: 0 loop, 1-4 its steps, 5 dma.load, 6 sig, 7 wait, 8 sfp.un.
const char* const kTranspose = R"(.kernel 0 transpose
.core 0
.k 0
  loop count=4 len=9
    loop.step i=5 o=0 delta=512
    loop.step i=5 o=1 delta=128
    loop.step i=8 o=3 delta=128
    loop.step i=8 o=6 delta=128
    loop count=4 len=4
      loop.step i=0 o=0 delta=128
      loop.step i=0 o=1 delta=1024
      loop.step i=3 o=3 delta=1024
      loop.step i=3 o=6 delta=1024
      dma.load dram=0 lx=0 bytes=128
      sync.sig q=dma_in tok=4
      sync.wait q=sfp0 tok=4
      sfp.un cl=0 fn=neg dt=f16 dst=8192 dst_rs=64 dst_cs=1 a=0 a_rs=64 a_cs=1 rows=1 cols=64
  sync.sig q=sfp0 tok=29
  sync.wait q=dma_out tok=29
  dma.store lx=8192 dram=8192 bytes=4096
  halt
)";

struct LoopRun {
  SimResult r;
  DeviceMemory dram;
};

LoopRun run_with(const isa::Program& p, int64_t loop_issue_cycles) {
  arch::ArchConfig cfg = config(1);
  cfg.loop_issue_cycles = loop_issue_cycles;
  LoopRun out{{}, DeviceMemory(p.dram_bytes, 0)};
  for (int64_t e = 0; e < 1024; ++e) {  // input element e = (e % 97) - 48, exact in f16
    const uint16_t h = isa::f32_to_f16(static_cast<float>(e % 97 - 48));
    std::memcpy(out.dram.data() + 2 * e, &h, 2);
  }
  out.r = simulate(p, cfg, out.dram, {});
  return out;
}

isa::Program expanded(isa::Program p) {
  for (size_t c = 0; c < p.cores.size(); ++c) p.cores[c] = isa::expand_stream(p.cores[c], c);
  return p;
}

TEST(SimLoops, NestedLoopsWithStepsTransposeAndNegate) {
  const isa::Program p = program(1, kTranspose, 16384);
  const LoopRun looped = run_with(p, 1);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 4; ++c)
      for (int64_t e = 0; e < 64; ++e) {
        const int64_t in = r * 256 + c * 64 + e;  // element index of input block (r, c)
        uint16_t h;
        std::memcpy(&h, looped.dram.data() + 8192 + c * 1024 + r * 128 + 2 * e, 2);
        ASSERT_EQ(isa::f16_to_f32(h), static_cast<float>(-(in % 97 - 48)))
            << "block (" << r << ", " << c << ") element " << e;
      }
  // 16 loads, 16 sigs, 16 waits, 16 negations, sig, wait, store, halt: the expansion.
  EXPECT_EQ(isa::expanded_size(p.cores[0]), 68u);
  EXPECT_EQ(looped.r.stats["chip"]["cores"][0]["sequencer"]["issued"].get<uint64_t>(), 67u);
  // Words decoded on loop entry: the outer loop + 4 steps once, the inner + 4 steps 4 times.
  EXPECT_EQ(looped.r.stats["chip"]["cores"][0]["sequencer"]["loop_words"].get<uint64_t>(),
            5u + 4u * 5u);
}

TEST(SimLoops, LoopedAndExpandedStreamsAgreeUpToTheLoopIssueCost) {
  const isa::Program p = program(1, kTranspose, 16384);
  const isa::Program flat = expanded(p);
  const LoopRun a0 = run_with(p, 0), b = run_with(flat, 0);
  EXPECT_EQ(a0.dram, b.dram);
  EXPECT_EQ(a0.r.cycles, b.r.cycles);  // zero-cost loop words: exactly the expansion's timing
  EXPECT_EQ(a0.r.stats["chip"]["cores"][0]["pt0"], b.r.stats["chip"]["cores"][0]["pt0"]);
  const LoopRun a1 = run_with(p, 1), a3 = run_with(p, 3);
  EXPECT_EQ(a1.dram, b.dram);
  // Each loop word delays the sequencer by at most loop_issue_cycles; 25 words are decoded.
  EXPECT_GE(a1.r.cycles, b.r.cycles);
  EXPECT_LE(a1.r.cycles, b.r.cycles + 25 * 1);
  EXPECT_GE(a3.r.cycles, a1.r.cycles);
  EXPECT_LE(a3.r.cycles, b.r.cycles + 25 * 3);
}

TEST(SimLoops, SteppedCoreletSelectsTheQueue) {
  // cl steps 0, 1: the two fills go to sfp0 and sfp1, so they overlap in time.
  const isa::Program p = program(1, R"(.kernel 0 k
.core 0
  loop count=2 len=1
    loop.step i=0 o=0 delta=1
    loop.step i=0 o=2 delta=4096
    sfp.fill cl=0 dt=f32 dst=0 dst_rs=32 dst_cs=1 rows=64 cols=32 value=1.5
  halt
)");
  const SimResult r = run(p, config(1));
  EXPECT_EQ(r.stats["chip"]["cores"][0]["sfp0"]["instructions"].get<uint64_t>(), 1u);
  EXPECT_EQ(r.stats["chip"]["cores"][0]["sfp1"]["instructions"].get<uint64_t>(), 1u);
  // Entering the loop decodes 3 words (loop + 2 steps) at 1 cycle each before the first fill.
  EXPECT_EQ(r.cycles, run(expanded(p), config(1)).cycles + 3);
}

}  // namespace
}  // namespace spyre::sim::test
