#pragma once
// Hardware-loop compression (codegen, after the streams are final): folds runs of a repeated
// block of instructions whose operands change by a constant step per repetition into
// `loop count len` + `loop.step` words (isa.def). isa::expand_stream of the result gives back
// exactly the input, so the simulator issues the same instructions in the same order.
#include <cstdint>
#include <vector>

#include "spyre/isa/isa.h"

namespace spyre::compiler {

struct LoopCompressOptions {
  // Longest body searched, in words (a nested loop counts its header, steps and body). Bounds
  // compile time: the search is O(words x max_period) in the worst case.
  int64_t max_period = 128;
};

struct LoopCompressStats {
  uint64_t words_before = 0, words_after = 0, loops = 0;
};

// One core's stream. Greedy, left to right, in passes: each pass folds repeated blocks of the
// previous pass's words (so a pass can wrap loops made by the one before: nesting), innermost
// first -- a block is folded only when it contains no shorter repetition itself. Never folds
// across a barrier or halt; nests at most isa::kMaxLoopDepth deep.
std::vector<isa::Instr> compress_loops(const std::vector<isa::Instr>& stream,
                                       const LoopCompressOptions& opts = {},
                                       LoopCompressStats* stats = nullptr);

}  // namespace spyre::compiler
