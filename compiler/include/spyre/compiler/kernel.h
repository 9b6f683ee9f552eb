#pragma once
// What a lowering pass gets for one IR node: the graph, the chip, the DRAM plan, one stream
// per core, an LX arena (the same layout on every core) and the report entry to fill.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/context.h"
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

  Emitter emitter(int64_t core) { return Emitter(cores[static_cast<size_t>(core)], id); }
  // An empty arena of this compile (its debug options) for the kernel or a trial lowering.
  LxArena new_arena() const { return LxArena(0, cfg.stick_bytes, ctx.opts.debug.lx_plan_error); }
  int64_t lx_budget() const { return cfg.lx_usable_bytes(); }
  // spyre::Error "<file>: node opN (aten..., at src:line): <what>".
  [[noreturn]] void unsupported(const std::string& what) const;
  // DRAM byte address of element `elem` of `buffer`'s storage.
  uint64_t dram_addr(const std::string& buffer, int64_t elem) const;
};

// One lowering per node kind. Each emits into k.cores and fills k.report.
void lower_matmul(Kernel& k);  // extern_kernels.mm / addmm / bmm on PT
void lower_loops(Kernel& k);   // pointwise and reduction nodes on SFP

}  // namespace spyre::compiler
