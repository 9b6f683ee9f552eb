#pragma once
// Split reductions (work division of a reduction over few rows): a reduction node with fewer
// rows than the chip has workers (cores x corelets), reducing a long axis, becomes two nodes:
// a partial reduction over P chunks of the axis, [rows, P] fp32 partials into a new
// intermediate buffer (rows x P values: every worker gets rows), and a final reduction over
// the P partials into the original output. Lowered as any other nodes: one kernel each unless
// fusion joins the final one with its consumers. Without it, `x.sum()` of a 64 MiB tensor runs
// on one corelet at a third of the DRAM bound (tools/bench/membound).
//
// Split: sum, max, min, prod and any, one reduction per node, one reduction variable whose
// every use in a load index is affine, when the axis divides into chunks of one of kChunks
// elements (the first that gives rows x P >= workers): rows of a few KiB, as a row reduction
// over a hidden dimension has, so the partial kernel streams whole tiles of rows per worker.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/ir.h"

namespace spyre::compiler {

struct SplitReductionOptions {
  bool enabled = true;  // compiler.split_reduction=on|off
};

struct SplitReduction {
  std::string node, partial_node, partial_buffer;
  int64_t rows = 0, axis = 0, parts = 0;
  nlohmann::json to_json() const;
};

constexpr int64_t kChunks[] = {4096, 8192, 2048, 16384,
                               1024};  // elements per partial, by preference

// Rewrites `g` in place (nodes keep schedule order: each split node's partial node comes just
// before it); returns what it split, in node order.
std::vector<SplitReduction> split_reductions(ir::Graph& g, const arch::ArchConfig& cfg,
                                             const SplitReductionOptions& opts);

}  // namespace spyre::compiler
