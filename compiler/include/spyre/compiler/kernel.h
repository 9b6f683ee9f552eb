#pragma once
// What a lowering pass gets for one IR node: the graph, the chip, the DRAM plan, one stream
// per core, an LX arena (the same layout on every core) and the report entry to fill.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/context.h"
#include "spyre/compiler/divide.h"
#include "spyre/compiler/dram_plan.h"
#include "spyre/compiler/emit.h"
#include "spyre/compiler/ir.h"
#include "spyre/compiler/stream.h"

namespace spyre::compiler {

// A bump allocator over one kernel's LX working set; every core uses the same offsets.
// Offsets are stick-aligned. Each buffer lives for the whole kernel (the driver turns that into
// per-core instruction intervals, see the report's `lx_plan`); a loop kernel's ping-pong arenas
// are shared by liveness inside (lower/loops.cpp), which the plan sees as one buffer each.
class LxArena {
 public:
  // `error`: compiler.debug.lx_plan_error (compile.h) planted into the arena's allocations.
  LxArena(int64_t base, int64_t align, LxPlanError error = LxPlanError::None)
      : base_(base), next_(base), align_(align), error_(error) {}
  int64_t alloc(const std::string& name, int64_t bytes);
  int64_t used_bytes() const { return next_ - base_; }
  nlohmann::json to_json() const { return plan_; }

 private:
  int64_t base_, next_, align_;
  LxPlanError error_;
  nlohmann::json plan_ = nlohmann::json::array();
};

// How a loop kernel (lower/loops.cpp), or a matmul whose cores hold whole rows
// (lower/matmul.cpp), divides its rows, and how it reads and writes each buffer: what
// plan/lx_residency.cpp needs to keep a buffer in LX from one kernel to the next (both
// kernels giving every core the same rows of it). Rows are flat: a space with outer
// loops counts outer index * rows per outer index + row; an access whose outer strides do not
// continue its row stride is not placeable.
struct LoopDivision {
  int64_t rows = 0;  // the rows of the space; a core holds all of a value's columns
  std::vector<std::pair<int64_t, int64_t>> core_rows;  // per core: [lo, hi), empty when idle
  struct BufferAccess {
    std::string storage;  // the buffer owning the storage
    bool store = false;
    int64_t elem = 0, rc = 0, cc = 0;  // storage element = elem + rc * row + cc * col
    bool r = false, c = false;         // the value varies along the rows / the cols
    isa::DType dt = isa::DType::F16;
    // The value can live outside the kernel's arenas for all of the core's rows: it varies
    // along the rows, in the tile layout (not transposed); a store's value is computed here
    // (not a load) and stored once.
    bool placeable = false;
    int64_t cols = 1;  // elements of one row of the value (1 when it does not vary along them)
    bool same_place(const BufferAccess& o) const {
      return storage == o.storage && elem == o.elem && rc == o.rc && cc == o.cc && r == o.r &&
             c == o.c && dt == o.dt && cols == o.cols;
    }
  };
  std::vector<BufferAccess> accesses;
  // The same rows on every core.
  bool same_rows(const LoopDivision& o) const { return rows == o.rows && core_rows == o.core_rows; }
  // It only loads `storage`, at least once, every load placeable and laid out as `place`: a
  // reader that can take the value from the slot `place` describes.
  bool loads_as(const std::string& storage, const BufferAccess& place) const;
  // Bytes one core's rows of an access's value take in LX, the row layout of the arenas.
  int64_t slice_bytes(const BufferAccess& a, int64_t stick) const;
};

// A buffer kept in LX across kernels (plan/lx_residency.cpp), as one kernel sees it: a core's
// rows [lo, hi) of it at `lx` + (row - lo) * row bytes, on every core.
struct ResidentSlot {
  int64_t lx = 0;
  bool write = false;       // this kernel produces it (else: reads it from LX)
  bool store_dram = false;  // producer: also write it to DRAM (a graph output, other readers)
  // A buffer no kernel writes from here on (a graph input or weight, or a value already in DRAM):
  // this kernel, the first loop kernel reading it, loads it from DRAM into the slot rather than
  // into its tiles, and later readers take it from there.
  bool load = false;
};

struct Kernel {
  const CompileContext& ctx;
  const ir::Graph& g;
  const ir::Node& node;
  const arch::ArchConfig& cfg;
  const DramPlan& dram;
  uint16_t id;
  std::vector<CoreStream>& cores;
  LxArena lx;
  nlohmann::json report = nlohmann::json::object();  // unit, split, tiles (by the lowering)
  // Matmul only: pointwise ops applied to each output tile on the SFP before it is stored (a
  // fused epilogue, fuse.h), and whether the matmul's own output is still stored to DRAM.
  const ir::Node* epilogue = nullptr;
  bool store_output = true;
  // LX residency (plan/lx_residency.cpp): buffers this kernel keeps in / takes from LX by
  // storage name, and the top of its own working set (-1: the whole usable LX). Loop kernels
  // report their division, a matmul the rows of its output when every core holds whole rows.
  std::map<std::string, ResidentSlot> resident = {};
  int64_t lx_top = -1;
  std::optional<LoopDivision> division = std::nullopt;
  // Work division chosen with the plan: a loop kernel divides its rows as `rows_plan` says
  // (per core [lo, hi), a producer's rows) instead of evenly, when they cover its rows in order
  // in whole units; a matmul takes the split that gives every core those rows of A, whole. A
  // matmul given `grid` lowers with it, no search (its output or A stays in LX as that grid
  // divides it); after lowering, `grid` is the split the matmul used.
  std::vector<std::pair<int64_t, int64_t>> rows_plan = {};
  std::optional<MatmulGrid> grid = std::nullopt;
  bool whole_rows = false;  // a matmul: only splits giving every core whole rows (MatmulSplit)

  Emitter emitter(int64_t core) { return Emitter(cores[static_cast<size_t>(core)], id); }
  // An empty arena of this compile (its debug options) for the kernel or a trial lowering.
  LxArena new_arena() const { return LxArena(0, cfg.stick_bytes, ctx.opts.debug.lx_plan_error); }
  int64_t lx_budget() const {
    return lx_top >= 0 ? std::min(lx_top, cfg.lx_usable_bytes()) : cfg.lx_usable_bytes();
  }
  // spyre::Error "<file>: node opN (aten..., at src:line): <what>".
  [[noreturn]] void unsupported(const std::string& what) const;
  // DRAM byte address of element `elem` of `buffer`'s storage.
  uint64_t dram_addr(const std::string& buffer, int64_t elem) const;
};

// One lowering per node kind. Each emits into k.cores and fills k.report.
void lower_matmul(Kernel& k);  // extern_kernels.mm / addmm / bmm on PT
void lower_loops(Kernel& k);   // pointwise and reduction nodes on SFP

}  // namespace spyre::compiler
