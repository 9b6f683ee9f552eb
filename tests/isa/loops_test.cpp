// Hardware loops in the ISA: round trip through both formats, expansion, malformed loops.
#include <gtest/gtest.h>

#include "spyre/error.h"
#include "spyre/isa/format.h"
#include "spyre/isa/loops.h"

namespace spyre::isa {
namespace {

Instr load(int64_t dram, int64_t lx) {
  return make_instr(Opcode::DmaLoad, {{"dram", dram}, {"lx", lx}, {"bytes", 128}});
}
Instr loop(int64_t count, int64_t len) {
  return make_instr(Opcode::Loop, {{"count", count}, {"len", len}});
}
Instr step(int64_t i, int64_t o, int64_t delta) {
  return make_instr(Opcode::LoopStep, {{"i", i}, {"o", o}, {"delta", delta}});
}
const int kDram = op_info(Opcode::DmaLoad).index_of("dram");
const int kLx = op_info(Opcode::DmaLoad).index_of("lx");

Program one_core(std::vector<Instr> s) {
  Program p;
  p.num_cores = 1;
  p.dram_bytes = 1 << 20;
  p.kernels = {"k"};
  p.cores = {std::move(s)};
  return p;
}

// Outer loop of 3 over (a load, an inner loop of 4 over one load): the inner load's dram
// steps by 128 per inner iteration and by 4096 per outer one, its lx by 256 per outer one.
std::vector<Instr> nested() {
  return {load(0, 0),           loop(3, 4),       step(0, kLx, 512),  // body word 0: the first load
          step(3, kDram, 4096),  // body word 3: the inner load (after loop + step)
          step(3, kLx, 256),    load(100000, 0),  loop(4, 1),
          step(0, kDram, 128),  load(8192, 1024), make_instr(Opcode::Halt, {})};
}

TEST(IsaLoops, NestedLoopRoundTripsThroughBinaryAndAssembly) {
  const Program p = one_core(nested());
  validate(p);
  EXPECT_EQ(decode(encode(p)), p);
  const std::string text = disassemble(p);
  EXPECT_EQ(assemble(text), p);
  EXPECT_NE(text.find("loop.step i=3 o=0 delta=4096  ; dma.load.dram"), std::string::npos) << text;
}

TEST(IsaLoops, ExpansionIssuesEveryIterationWithSteppedOperands) {
  std::vector<Instr> want = {load(0, 0)};
  for (int64_t o = 0; o < 3; ++o) {
    want.push_back(load(100000, 512 * o));
    for (int64_t t = 0; t < 4; ++t) want.push_back(load(8192 + 4096 * o + 128 * t, 1024 + 256 * o));
  }
  want.push_back(make_instr(Opcode::Halt, {}));
  EXPECT_EQ(expand_stream(nested()), want);
  EXPECT_EQ(expanded_size(nested()), want.size());
  const std::vector<Instr> flat = {load(0, 0), make_instr(Opcode::Halt, {})};
  EXPECT_EQ(expand_stream(flat), flat);  // no loops: unchanged
}

// Each malformed stream must fail validate() (and so decode/assemble) naming core and pc.
void expect_bad(std::vector<Instr> s, const std::string& where, const std::string& what) {
  const Program p = one_core(std::move(s));
  try {
    validate(p);
    FAIL() << "accepted: " << disassemble(p);
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(where), std::string::npos) << m;
    EXPECT_NE(m.find(what), std::string::npos) << m;
  }
  EXPECT_THROW(decode(encode(p)), Error);
}

TEST(IsaLoops, MalformedLoopsNameCoreAndPc) {
  const Instr halt = make_instr(Opcode::Halt, {});
  expect_bad({load(0, 0), loop(2, 3), load(0, 0), halt}, "core 0 pc 1 (loop)", "runs past the end");
  expect_bad({loop(0, 1), load(0, 0)}, "core 0 pc 0 (loop)", "count=0");
  expect_bad({loop(2, 0), load(0, 0)}, "core 0 pc 0 (loop)", "len=0");
  const Instr fill = make_instr(Opcode::SfpFill, {{"cl", 0},
                                                  {"dt", 0},
                                                  {"dst", 0},
                                                  {"dst_rs", 64},
                                                  {"dst_cs", 1},
                                                  {"rows", 1},
                                                  {"cols", 64},
                                                  {"value", float_operand(1.0)}});
  const int value = op_info(Opcode::SfpFill).index_of("value");
  expect_bad({loop(2, 1), step(0, value, 1), fill}, "core 0 pc 1 (loop.step)", "is a float");
  expect_bad({loop(2, 1), step(0, 15, 1), fill}, "core 0 pc 1 (loop.step)",
             "is not an operand of sfp.fill");
  expect_bad({loop(2, 1), step(1, 0, 1), fill}, "core 0 pc 1 (loop.step)", "outside the body");
  expect_bad({loop(2, 3), step(0, 0, 1), loop(2, 1), load(0, 0), load(0, 0)},
             "core 0 pc 1 (loop.step)", "only an instruction's operands can step");
  // Inner loop (pc 1) ends at pc 5, past the outer body [1, 3).
  expect_bad({loop(2, 2), loop(2, 3), load(0, 0), load(0, 0), load(0, 0)}, "core 0 pc 1 (loop)",
             "bad nesting");
  expect_bad({load(0, 0), step(0, 0, 1)}, "core 0 pc 1 (loop.step)", "must follow a loop");
  expect_bad({loop(2, 1), halt}, "core 0 pc 1 (halt)", "no barrier or halt");
  expect_bad({loop(2, 5), loop(2, 4), loop(2, 3), loop(2, 2), loop(2, 1), load(0, 0)},
             "core 0 pc 4 (loop)", "nest more than 4");
  // A stepped operand that leaves its range in a later iteration: cl 0, 1, 2.
  const Instr mm = make_instr(Opcode::PtMatmul, {{"cl", 0},
                                                 {"a", 0},
                                                 {"b", 0},
                                                 {"c", 0},
                                                 {"m", 8},
                                                 {"n", 64},
                                                 {"k", 64},
                                                 {"lda", 64},
                                                 {"ldb", 64},
                                                 {"ldc", 64}});
  expect_bad({loop(3, 1), step(0, 0, 1), mm}, "core 0 instruction 2 (pt.mm)",
             "in an iteration of its loops");
}

TEST(IsaLoops, AssemblyErrorsNameTheFile) {
  const std::string text =
      ".spyre 1\n.cores 1\n.dram_bytes 4096\n.core 0\n  loop count=2 len=4\n  halt\n";
  try {
    assemble(text, "bad.s");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.s: core 0 pc 0 (loop)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace spyre::isa
