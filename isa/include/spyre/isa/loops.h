#pragma once
// Hardware loops (`loop`, `loop.step`; semantics in isa.def): the static structure of one
// core's stream, checked once, and its expansion into the stream the sequencer issues.
#include <cstdint>
#include <vector>

#include "spyre/isa/isa.h"

namespace spyre::isa {

constexpr int kMaxLoopDepth = 4;

struct LoopInfo {
  size_t header = 0;      // pc of the `loop` word
  size_t body_begin = 0;  // pc of the first body word (after the steps)
  size_t body_end = 0;    // one past the last body word
  int64_t count = 1;
  int depth = 0;                                        // 0 = outermost
  size_t words() const { return body_begin - header; }  // loop + loop.step words
};

// One increment that applies to an instruction: in iteration t of loop `loop` (index into
// LoopTable::loops), operand `operand` gains t * delta.
struct LoopStepRef {
  uint32_t loop = 0;
  uint32_t operand = 0;
  int64_t delta = 0;
};

// The loops of one stream. Empty (no vectors filled) for a stream without loops, so the
// simulator pays nothing for them.
struct LoopTable {
  std::vector<LoopInfo> loops;       // in header order
  std::vector<int32_t> loop_at;      // per pc: index into loops when pc is a `loop`, else -1
  std::vector<uint32_t> step_begin;  // per pc (+1): range into steps of the increments of pc
  std::vector<LoopStepRef> steps;
  bool empty() const { return loops.empty(); }
  // Operands of the instruction at `pc` in the iterations `iter` (per loop index).
  Instr materialise(const Instr& base, size_t pc, const std::vector<int64_t>& iter) const;
};

// Walks a stream as the sequencer does: `pc` is the next word; settle() moves it over loop
// headers (entering them), back-edges and loop ends until it names an instruction to issue (or
// the end of the stream), and returns the `loop`/`loop.step` words decoded on the way. The
// caller issues the instruction at pc (materialise with `iter`), then ++pc and settles again.
struct LoopCursor {
  explicit LoopCursor(const LoopTable& t);
  uint64_t settle(const std::vector<Instr>& stream);
  const LoopTable* table;
  size_t pc = 0;
  std::vector<int64_t> iter;    // per loop index: the current iteration
  std::vector<uint32_t> stack;  // loops entered, outermost first
};

// Checks the loop structure of core `core`'s stream (count, len, steps, nesting) and returns
// it. Throws spyre::Error "core C pc P (loop): ..." on a malformed loop.
LoopTable analyse_loops(const std::vector<Instr>& stream, size_t core);

// Every instruction in the order the sequencer issues it, operands stepped; `loop` and
// `loop.step` words removed. A stream without loops comes back unchanged.
std::vector<Instr> expand_stream(const std::vector<Instr>& stream, size_t core = 0);

// Number of instructions in the expanded stream, without building it.
uint64_t expanded_size(const std::vector<Instr>& stream, size_t core = 0);

bool is_loop_word(Opcode op);

}  // namespace spyre::isa
