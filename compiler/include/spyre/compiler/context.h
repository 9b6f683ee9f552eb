#pragma once
// One compile()'s context: its options, parsed once, and what its passes remember across the
// fusion pass's trial lowerings (the matmul split search's answers). The driver makes it and
// every pass gets it; no pass reads an option from anywhere else.
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
};

}  // namespace spyre::compiler
