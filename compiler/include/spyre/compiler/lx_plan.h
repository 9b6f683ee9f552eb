#pragma once
// The report's `lx_plan`: every LX buffer of every kernel with its offset, size and the per-core
// instruction interval in which it is live, so that a trace can be replayed against it
// (`spyre-sim trace validate`). A pc is an index into that core's instruction stream, the
// simulator's program counter.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/lx_residency.h"

namespace spyre::compiler {

// Where one kernel's instructions lie on each core: [first, last] (last = its barrier or halt).
// A core that runs nothing of the kernel but the closing barrier holds no live buffer.
struct KernelPcs {
  std::vector<int64_t> first, last;  // per core
};

// Builds `lx_plan` from each kernel entry's `lx.plan` (LxArena::to_json) and the kernel's pcs.
// The LX allocator knows no lifetime finer than a kernel, so every buffer is live over its
// kernel's interval on each core that runs the kernel. Buffers kept in LX across kernels
// (`residency`, lx_residency.h) are live on each core that holds rows of them from its producer's
// first instruction to its last reader's last. `err` Shift/Shrink rewrite what the plan claims
// (kernel entries included) without touching the code: a planted defect. Spills
// (lower/loops_columns.cpp): each kernel entry's `spills` become the plan's `spills`, each with
// its kernel's name and id. `reserved`: the LX the compiler leaves alone, the runtime's reserve
// at the top and the back end's share below it.
nlohmann::json build_lx_plan(nlohmann::json& kernels, const std::vector<KernelPcs>& pcs,
                             const arch::ArchConfig& cfg, LxPlanError err,
                             const LxResidencyPlan& residency, const std::vector<GroupLx>& groups);

// Bytes of the DRAM spill scratch region (DramPlan::scratch_addr) the kernels need: the largest
// `spill_scratch_bytes` of any kernel entry (they run one after another and share it), 0 if none.
uint64_t spill_scratch_bytes(const nlohmann::json& kernels);

}  // namespace spyre::compiler
