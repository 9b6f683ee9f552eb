#pragma once
// The whole-graph LX plan: which buffers stay in LX from the kernel that writes them to the
// kernels that read them, where, and which kernel boundaries still need a chip-wide barrier.
//
// A buffer stays in LX when its producer and a reader (loop kernels, or matmuls whose cores hold
// whole rows of A and of the output) give every core the same rows of it, laid out the same way
// (LoopDivision, kernel.h): core c computes its rows into an LX slot and the reader on core c
// uses them from there, with no DRAM trip. It is still
// written to DRAM when it is a graph output or another kernel reads it (not from LX). A buffer
// that several loop kernels read with the same rows and layout after its last write (a graph
// input or weight, or a value whose producer cannot keep it: a matmul's output) is loaded once:
// the first of them loads its rows into the slot instead of its tiles, the later ones take
// them from there (IBM's LX planning keeps a softmax's input in LX between its steps: the cost
// model's byte count reads it once). Slots are
// placed from the top of the usable LX downward (an interval allocator over the kernels they
// live through), never over a kernel's own working set (measured by a first lowering of every
// kernel), and each kernel then lowers with its working set capped below the slots live in it.
//
// Barriers: kernel k+1 needs no barrier after k when everything it reads that a kernel since
// the last barrier wrote, it reads from LX on the same core, it writes nothing those kernels
// read or wrote, and it touches no other core (no multicast, ring transfer or remote signal:
// its first tiles would land in LX another core still uses for k); the stream keeps ordering
// each core's instructions across the boundary. Kernels that spill (lower/loops_columns.cpp)
// share a DRAM scratch region and keep their barriers.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/ir.h"
#include "spyre/compiler/kernel.h"

namespace spyre::compiler {

// What the first lowering of a kernel tells the plan.
struct GroupLx {
  std::string name;                      // the kernel's name
  std::optional<LoopDivision> division;  // loop kernels
  int64_t lx_peak = 0;                   // its own working set, bytes per core
  // The working set it can shrink to for resident slots above it (a loop kernel lowered again
  // with a quarter of the usable LX and the same row division; else lx_peak).
  int64_t lx_min = 0;
  std::set<std::string> reads, writes;  // storages it reads and writes in DRAM
  bool spills = false;                  // uses the DRAM spill scratch region
  bool cross_core = false;              // multicasts, ring transfers or signals another core
  bool host = false;                    // a host fallback (host_call.h): the device stops
  std::optional<MatmulGrid> grid;       // a matmul's split
  int64_t cycles = 0;                   // the kernel prediction of this lowering
};

// What one kernel gets from the plan (lower_group).
struct KernelLx {
  std::map<std::string, ResidentSlot> resident;
  int64_t lx_top = -1;        // cap of its own working set (-1: the usable LX)
  bool barrier_after = true;  // close it with a barrier (the last kernel halts)
  // Work division chosen with the plan (Kernel::rows_plan, Kernel::grid): a kernel's rows as
  // its producer divides them; a matmul whose output or A stays in LX, the split it had.
  std::vector<std::pair<int64_t, int64_t>> rows;
  std::optional<MatmulGrid> grid;
  bool whole_rows = false;  // a matmul's trial: a split giving every core whole rows
};

struct ResidentBuffer {
  std::string buffer;
  size_t producer = 0;
  std::vector<size_t> readers;  // kernels that read it from LX
  int64_t lx = 0, bytes = 0;    // per-core offset and size
  bool store_dram = false;
  std::string dram_reason;  // why it is written to DRAM too
  bool loaded = false;      // read-only after its last write: `producer` is the reader loading it
};

struct LxResidencyPlan {
  std::vector<KernelLx> kernels;  // one per kernel
  std::vector<ResidentBuffer> buffers;
  nlohmann::json decisions = nlohmann::json::array();  // every candidate: kept, or why not
  nlohmann::json barriers = nlohmann::json::array();   // every boundary: kept, or why not
  nlohmann::json to_json(const std::vector<GroupLx>& groups) const;
};

// `enabled` false (compiler.lx_planning=off): nothing resident, a barrier after every kernel.
LxResidencyPlan plan_lx_residency(const ir::Graph& g, const std::vector<GroupLx>& groups,
                                  const arch::ArchConfig& cfg, bool enabled);

// Work division chosen with the plan (plan/joint_division.cpp). A kernel reading a value that
// its only writer divides into other rows (a bmm's [heads x rows, cols] scores, 64 rows on
// each of 24 cores, read by a softmax that would give 32 cores 48; a softmax's probabilities
// read by a bmm as A) is lowered again with the producer's rows (KernelLx::rows: a loop kernel
// divides its rows so, a matmul takes the split giving each core those rows of A) and the
// value in an LX slot; it takes those rows when the kernel prediction of that lowering beats
// its own (the slot's DRAM bytes saved against the cores it leaves idle). A matmul producer
// whose own split divides no rows is lowered again with a split of whole rows on as many cores
// (KernelLx::whole_rows), and both predictions count. Kernels after it see
// its new rows, so a chain follows. The plan is then made (plan_lx_residency); a kernel whose
// value did not stay in LX gets its own rows back and the plan is made again. A matmul whose
// output or A stays in LX keeps the split it had (KernelLx::grid).
// `lower(k, lx)`: kernel k lowered as a trial with `lx` (what the plan needs of it), or nullopt
// when it does not lower so. `groups` are the first lowerings (updated with the rows taken).
using TrialLowering = std::function<std::optional<GroupLx>(size_t k, const KernelLx& lx)>;
// `joint` false (compiler.joint_division=off): the plan alone, no kernel takes other rows.
LxResidencyPlan plan_lx_jointly(const ir::Graph& g, std::vector<GroupLx>& groups,
                                const arch::ArchConfig& cfg, bool enabled, bool joint,
                                const TrialLowering& lower, nlohmann::json& decisions);

}  // namespace spyre::compiler
