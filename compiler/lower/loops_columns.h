#pragma once
// Loop kernels whose single row does not fit LX: each row is walked in column chunks
// (loops_columns.cpp). Entered from lower_loops (loops.cpp) when even one row of the tile
// program, in both ping-pong arenas of every corelet, exceeds the usable LX.
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spyre/compiler/kernel.h"
#include "spyre/compiler/tile_program.h"

namespace spyre::compiler {
namespace columns_detail {

// chunk: varies along the columns (chunk arena); row: one value per row (a reduction's result
// and what is computed from it); const: neither (hoisted once per core).
enum class Cls { Const, Row, Chunk };

struct Interval {
  int64_t def, last;  // positions: 0 loads, op index + 1, ops + 2 stores
};

// What loops_columns_plan.cpp decides for a tile program (indices: ops and values of p).
struct ColumnPlan {
  std::vector<Cls> cls;                       // per value
  std::vector<int> def_op;                    // per value: the op that writes it, -1 if none
  std::vector<int> pass;                      // per op: the pass it is computed in
  std::vector<int> store_pass;                // per op: a store along the columns' pass, else -1
  std::vector<int> chunk_pass;                // per op: the pass it touches chunks in, or -1
  std::vector<std::set<int>> extra;           // per op: further passes it is recomputed in
  int passes = 1;                             // walks over each row's chunks
  std::vector<std::map<int, Interval>> live;  // per pass: chunk value -> interval
  std::set<int> spilled;                      // chunk values stored and loaded back
  std::map<int, std::vector<int>> reread;     // spilled value -> the passes that load it back
  std::map<int, std::pair<double, double>> spill_cost;  // value -> (spill, recompute) per element
  int def_pass(int v) const;
};

// `active`: the number of workers (corelets with rows), which share the DRAM bandwidth in the
// spill-or-recompute cost. `fail` throws (what cannot be chunked).
ColumnPlan plan_columns(const TileProgram& p, const arch::ArchConfig& cfg, int64_t active,
                        const std::function<void(const std::string&)>& fail);

}  // namespace columns_detail

// Emits the kernel into k.cores and fills k.report (unit, split, tiles, spills,
// spill_scratch_bytes). k.lx must be empty. Spilled values go to the DRAM scratch region that
// starts at k.dram.scratch_addr(); every kernel's spills start there (kernels are separated by
// barriers), `spill_scratch_bytes` is how much of it this kernel uses. Throws spyre::Error naming
// `where` when even a chunk of one stick's worth of columns does not fit, or for what cannot be
// chunked (gathers, argmax/argmin, a reduction of a value that does not vary along the columns).
void lower_loops_columns(Kernel& k, const TileProgram& p, const std::string& where);

}  // namespace spyre::compiler
