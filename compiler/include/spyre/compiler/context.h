#pragma once
// One compile()'s context: its options, parsed once, and what its passes remember across the
// fusion pass's trial lowerings (the matmul split search's answers). The driver makes it and
// every pass gets it; no pass reads an option from anywhere else. The memos may be read and
// filled from several threads (the fusion pass's parallel trials, fuse.cpp) under `memo_mutex`
// (grid_memo under its own): each answer is a function of its key alone, so which thread
// computes it first changes nothing.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/compiler/compile.h"
#include "spyre/compiler/cost.h"
#include "spyre/compiler/divide.h"

namespace spyre::compiler {

struct CompileContext {
  explicit CompileContext(const CompileOptions& o);  // throws on a bad layout_copy value
  CompileOptions opts;
  MatmulSplit matmul_split;  // opts.matmul_split / matmul_tiles / matmul_lead
  LayoutCopyMode layout_copy = LayoutCopyMode::Auto;
  // choose_matmul_grid's answers: one compile has one configuration, and every fusion trial
  // lowers the same matmuls again.
  mutable GridMemo grid_memo;
  // lower_matmul's pick among the search's best few by the kernel prediction, per matmul node
  // and what its kernel holds besides (epilogue, stored output, LX-resident buffers, LX top).
  // With it, the candidates' predictions (the report's split.kernel_predictions).
  mutable std::map<std::string, std::pair<MatmulGrid, nlohmann::json>> matmul_pick;
  // The kernel predictions made so far, by a 128-bit hash of the instruction streams (every
  // field predict() reads: the opcodes and operands of each core's stream); the fusion trials
  // and the matmul, transpose and convolution searches lower many kernels again unchanged
  // (65 of the GPT-2 block's 268 predictions). One compile has one configuration and one
  // CostParams (opts.cost): predict_kernel() computes without the memo for any configuration
  // object but the first it saw, which must not change while this context lives.
  mutable std::map<std::pair<uint64_t, uint64_t>, KernelPrediction> predictions;
  mutable const arch::ArchConfig* predicted_cfg = nullptr;
  mutable std::mutex memo_mutex;  // predictions, predicted_cfg, matmul_pick
};

// predict(per_core, cfg, ctx.opts.cost), remembered in ctx.predictions.
KernelPrediction predict_kernel(const CompileContext& ctx,
                                const std::vector<std::vector<isa::Instr>>& per_core,
                                const arch::ArchConfig& cfg);

}  // namespace spyre::compiler
