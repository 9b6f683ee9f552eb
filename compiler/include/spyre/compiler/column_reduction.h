#pragma once
// Column reductions (work division of a reduction whose reduced variable is the strided one,
// `x.sum(dim=0)` of a row-major [R, C]): the loop lowering reduces along a tile's columns, so
// such a node would read each kept column's elements one stride apart, DMA runs of a few bytes
// (a 2048 x 512 fp16 column sum ran at 11 GB/s). Two rewrites, the first that applies:
//
// - Row adds (sum, max, min): the SFP reduces rows into one by element-wise ops along the
//   contiguous kept axis, k rows at a time. A level is a pointwise node over [R / k, C] whose
//   body loads k rows (each a contiguous run of C elements), converts them to the accumulation
//   type (fp32 for a sum, the input's type for max and min) and combines them in a chain of
//   k - 1 adds (maximum, minimum) into a row of partials; levels repeat until one row is left,
//   which the last level stores where the reduction stored (it keeps the node's name). A
//   level with more rows of partials than workers combines rows p, p + R/k, p + 2R/k, ... into
//   row p, so each of its k loads reads a tile's rows as one contiguous run (2048 x 512: the
//   first level 29.8k -> 24.9k cycles); a smaller one combines k consecutive rows. k is at
//   most kRowsPerStep and, in the first level, small enough to leave every worker (cores x
//   corelets) rows of partials enough to fill its DMA engine (at least 2 rows combined): the
//   input streams once at whole-row runs over all workers, as IBM's column sum does (2048 x
//   512 fp16 at 18.5 us on 32 cores, 113 GB/s, spyre_kernels.csv `ctsum`); the partials
//   ([256, 512] fp32 there, then [16, 512]) are what moves twice. Not applied when a
//   conversion before the reduction narrows or truncates (eager rounds each element) or when
//   a row is shorter than a DRAM word.
// - Else, a layout copy: a pointwise node writes the input transposed into a new intermediate
//   [C, R] (lowered as a blocked transpose, transpose.h), and the reduction reads that row by
//   row.
//
// Applied to reduction nodes with one kept and one reduced variable, a single load whose index
// steps by 1 along the kept variable and by more than 1 along the reduced one, the reduction
// and its store (nothing else), when the reduced axis has at least 64 elements and the kept
// one at least 8.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/ir.h"

namespace spyre::compiler {

struct ColumnReduction {
  std::string node, copy_node, buffer;  // a layout copy: its node and the copy it reads
  // Row adds: the levels before the last (which keeps `node`'s name) and their partials.
  std::vector<std::string> levels, partials;
  nlohmann::json to_json() const;
};

// The most rows one level of row adds combines: a level's k loads are each one DRAM round trip
// when small (dma.h), so levels of at most 16 keep the combines of partials short.
constexpr int64_t kRowsPerStep = 16;

// Rewrites `g` in place (the new nodes come just before the reduction, or replace it);
// returns what it rewrote, in node order.
std::vector<ColumnReduction> rewrite_column_reductions(ir::Graph& g, const arch::ArchConfig& cfg);

}  // namespace spyre::compiler
