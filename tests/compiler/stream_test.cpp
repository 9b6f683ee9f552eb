#include <gtest/gtest.h>

#include <map>

#include "spyre/compiler/emit.h"
#include "spyre/compiler/stream.h"

namespace spyre::compiler {
namespace {

using isa::Opcode;
using isa::Queue;

std::vector<Opcode> ops_of(const std::vector<isa::Instr>& v) {
  std::vector<Opcode> out;
  for (const auto& i : v) out.push_back(i.op);
  return out;
}

TEST(CoreStream, LoadThenMatmulIsOrderedByOneTokenPair) {
  CoreStream s;
  Emitter em(s, 0);
  em.load(0, 0, DmaShape{256});      // A
  em.load(256, 256, DmaShape{256});  // B
  em.mm(0, 0, 256, 1024, 8, 64, 16, 16, 64, 64, isa::DType::F16, false, false);
  s.halt(0);
  const auto& v = s.instrs();
  // load, load, sig(dma_in -> pt0), wait(pt0), mm, halt: one signal after the LAST load the
  // matmul depends on is enough, because dma_in is in order.
  EXPECT_EQ(ops_of(v), (std::vector<Opcode>{Opcode::DmaLoad, Opcode::DmaLoad, Opcode::Signal,
                                            Opcode::Wait, Opcode::PtMatmul, Opcode::Halt}));
  EXPECT_EQ(v[2].get("q"), static_cast<int64_t>(Queue::DmaIn));
  EXPECT_EQ(v[2].get("tok"), CoreStream::token_of(Queue::DmaIn, Queue::Pt0));
  EXPECT_EQ(v[3].get("q"), static_cast<int64_t>(Queue::Pt0));
  EXPECT_EQ(v[3].get("tok"), v[2].get("tok"));
}

TEST(CoreStream, DisjointRangesNeedNoTokens) {
  CoreStream s;
  Emitter em(s, 0);
  em.load(0, 0, DmaShape{128});
  em.fill(0, Tile{4096, 0, 0, isa::DType::F32}, 1, 1, 1.0);
  s.halt(0);
  EXPECT_EQ(s.instrs().size(), 3u);
}

TEST(CoreStream, WriteAfterReadWaitsForTheReader) {
  CoreStream s;
  Emitter em(s, 0);
  em.load(0, 0, DmaShape{128});
  em.store(0, 4096, DmaShape{128});  // dma_out reads LX [0,128): waits for dma_in
  em.load(128, 0, DmaShape{128});    // overwrites LX [0,128): waits for dma_out
  s.halt(0);
  std::map<int64_t, int> balance;
  for (const auto& i : s.instrs()) {
    if (i.op == Opcode::Signal) ++balance[i.get("tok")];
    if (i.op == Opcode::Wait) --balance[i.get("tok")];
  }
  EXPECT_EQ(balance.size(), 2u);
  for (auto [tok, n] : balance) EXPECT_EQ(n, 0) << "token " << tok;
  EXPECT_EQ(ops_of(s.instrs()).back(), Opcode::Halt);
  EXPECT_EQ(s.instrs().size(), 3u + 4u + 1u);
}

TEST(CoreStream, BarrierForgetsHazards) {
  CoreStream s;
  Emitter em(s, 0);
  em.load(0, 0, DmaShape{128});
  s.barrier(0);
  Emitter em1(s, 1);
  em1.un(0, sfp_fn("relu"), Tile{0, 64, 1, isa::DType::F16}, Tile{0, 64, 1, isa::DType::F16}, 1,
         64);
  s.halt(1);
  EXPECT_EQ(ops_of(s.instrs()), (std::vector<Opcode>{Opcode::DmaLoad, Opcode::Barrier,
                                                     Opcode::SfpUnary, Opcode::Halt}));
}

}  // namespace
}  // namespace spyre::compiler
