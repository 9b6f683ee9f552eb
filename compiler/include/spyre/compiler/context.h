#pragma once
// One compile()'s context: its options, parsed once, and what its passes remember across the
// fusion pass's trial lowerings (the matmul split search's answers). The driver makes it and
// every pass gets it; no pass reads an option from anywhere else.
#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "spyre/compiler/compile.h"
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
};

}  // namespace spyre::compiler
