#pragma once
// Fusion: which IR nodes become one kernel, decided by the cost model.
//
// A group is one kernel. Loop groups (pointwise and reduction nodes) are merged into one
// synthetic IR node over a common iteration space: intermediates written and read inside the
// group become SSA values (never stored unless read outside the group or a graph output),
// identical computations are shared (LayerNorm's mean and m2 nodes recompute one welford
// reduction). A matmul group is one matmul with an optional pointwise epilogue (a merged loop
// node) that runs on the SFP on each output tile before it is stored.
//
// The cost model: every candidate is lowered both ways with the real lowering into scratch
// streams and predicted with report/cost.h; before = the two kernels' predictions summed,
// after = the fused kernel's. A candidate is taken when it predicts fewer cycles (or the same
// cycles and fewer DRAM bytes) and its working set fits LX; a lowering error (shape it cannot
// map, LX overflow) rejects it with the error as the reason.
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/context.h"
#include "spyre/compiler/cost.h"
#include "spyre/compiler/dram_plan.h"
#include "spyre/compiler/ir.h"
#include "spyre/compiler/kernel.h"
#include "spyre/compiler/lx_residency.h"
#include "spyre/compiler/stream.h"

namespace spyre::compiler {

struct FusionGroup {
  std::vector<size_t> nodes;  // IR node indices, schedule order
  int64_t matmul = -1;        // the matmul node (index) of a matmul group, else -1
  std::string kind = "none";  // kind of the last fusion that formed it (none when a lone node)
  // The merged loop node (a loop group of 2+ nodes) or the epilogue (a matmul group with
  // epilogue nodes); null for a lone node.
  std::shared_ptr<const ir::Node> merged;
  std::string name(const ir::Graph& g) const;  // "op0+op1+op3"
};

// Every node's reads and writes (storage names), computed once per graph for the passes that
// ask for them at every node for every group (fusion's order check, live_out): quadratic
// in the graph's nodes otherwise (a 40-layer decode graph has 1,224 kernels).
struct NodeIo {
  std::vector<std::set<std::string>> reads, writes;  // per node of g.nodes
  std::set<std::string> written;                     // by some node
  explicit NodeIo(const ir::Graph& g);
};

// Buffers (storage names) the group writes that something outside it reads: a node outside
// the group or the graph's outputs. Only these are stored to DRAM.
std::set<std::string> live_out(const ir::Graph& g, const std::vector<size_t>& nodes);
std::set<std::string> live_out(const NodeIo& io, const ir::Graph& g,
                               const std::vector<size_t>& nodes);

// Merges loop nodes (schedule order) into one. The iteration space is that of the first
// reduction member (else the first member); every member's sizes (vars then reduce vars) must
// equal it position by position; variables are renamed by position. A load of a buffer stored
// earlier in the group must use the store's index and becomes a to_dtype of the stored value
// (the same rounding as the trip through DRAM). Stores of buffers not in `keep` are dropped.
// Returns null and sets `why` when the nodes cannot be merged.
std::shared_ptr<const ir::Node> merge_loop_nodes(const ir::Graph& g,
                                                 const std::vector<const ir::Node*>& members,
                                                 const std::set<std::string>& keep,
                                                 std::string* why);

// Storages a group reads from DRAM (written outside it or graph inputs) and writes to DRAM
// (live_out).
std::set<std::string> group_reads(const ir::Graph& g, const FusionGroup& grp);
std::set<std::string> group_writes(const NodeIo& io, const ir::Graph& g, const FusionGroup& grp);

struct GroupKernel {
  KernelPrediction pred;
  nlohmann::json report;  // the kernel's report entry, without id/name
  int64_t lx_bytes = 0;
  std::optional<LoopDivision> division;  // a loop kernel's, a row-divided matmul's (kernel.h)
  std::optional<MatmulGrid> grid;        // a matmul's split
  bool cross_core = false;               // multicasts, sends over a ring or signals another core
};

// Lowers the group as kernel `id` into `cores` and closes it: a barrier, nothing when `lx`
// says the next kernel needs none (the streams keep ordering each core across it), or halt
// when `last`. `lx` (lx_residency.h): its LX-resident buffers and working-set cap. Throws
// spyre::Error as the lowering does.
GroupKernel lower_group(const CompileContext& ctx, const ir::Graph& g, const FusionGroup& grp,
                        const arch::ArchConfig& cfg, const DramPlan& dram, uint16_t id,
                        std::vector<CoreStream>& cores, bool last, const KernelLx* lx = nullptr);

struct FusionPlan {
  std::vector<FusionGroup> groups;  // kernel order
  nlohmann::json decisions = nlohmann::json::array();
};

// ctx.opts.fusion false: one group per node, no decisions. ctx.opts.fusion_limit >= 0: take at
// most that many fusions (later candidates are rejected with reason "fusion limit"), for
// measuring each decision's simulated effect; ctx.opts.debug.force_fusion takes rejected ones.
FusionPlan plan_fusion(const CompileContext& ctx, const ir::Graph& g, const arch::ArchConfig& cfg,
                       const DramPlan& dram);

}  // namespace spyre::compiler
