// Work division chosen with the LX plan (lx_residency.h plan_lx_jointly).
#include <algorithm>
#include <map>
#include <set>

#include "spyre/compiler/lx_residency.h"

namespace spyre::compiler {
namespace {

using BufAccess = LoopDivision::BufferAccess;

// A kernel that takes its producer's rows for one value.
struct Taken {
  size_t producer = 0;
  std::string buffer;
  GroupLx own;  // its first lowering, to go back to
  // A matmul producer lowered again for it with a split of whole rows: its own lowering.
  std::optional<GroupLx> producer_own;
};

// The access by which `d` stores `storage` when it is its only access of it and it can stay in
// LX; else null.
const BufAccess* sole_store(const LoopDivision& d, const std::string& storage) {
  const BufAccess* st = nullptr;
  for (const auto& a : d.accesses) {
    if (a.storage != storage) continue;
    if (!a.store || st) return nullptr;
    st = &a;
  }
  return st && st->placeable ? st : nullptr;
}

}  // namespace

LxResidencyPlan plan_lx_jointly(const ir::Graph& g, std::vector<GroupLx>& groups,
                                const arch::ArchConfig& cfg, bool enabled, bool joint,
                                const TrialLowering& lower, nlohmann::json& decisions) {
  const size_t n = groups.size();
  std::map<std::string, std::vector<size_t>> writers;
  for (size_t k = 0; k < n; ++k)
    for (const auto& w : groups[k].writes) writers[w].push_back(k);
  std::map<size_t, Taken> taken;                   // by kernel
  std::map<size_t, std::optional<GroupLx>> whole;  // matmuls lowered with whole rows, by kernel
  for (size_t r = 0; enabled && joint && r < n; ++r) {
    // A loop kernel, or a matmul (its split then gives every core the producer's rows of A).
    const bool mm = groups[r].grid.has_value();
    if (!groups[r].division && !mm) continue;
    const std::set<std::string> reads = groups[r].reads;  // groups[r] changes when it takes rows
    for (const auto& storage : reads) {
      auto w = writers.find(storage);
      if (w == writers.end() || w->second.size() != 1 || w->second[0] >= r) continue;
      const size_t p = w->second[0];
      // A matmul that divides no rows (an N or K split) may be lowered again with a split of
      // whole rows for a loop kernel reading its output: both then count.
      std::optional<GroupLx> remade;
      if (!groups[p].division) {
        if (!groups[p].grid || mm || !groups[r].division) continue;
        if (!whole.count(p)) {
          KernelLx rows;
          rows.whole_rows = true;
          whole[p] = lower(p, rows);
        }
        remade = whole[p];
        // Not at the cost of the matmul's parallelism: a split of whole rows can use fewer
        // cores (a PT tile's 8 rows: 128 rows on 16 of 32), and the loop kernels taking its
        // rows then leave cores idle too; their predictions, made without the slots they share
        // with their neighbours, miss that cost (GPT-2's LayerNorms after the attention
        // projection: predicted faster, simulated 5-10 % slower).
        if (!remade || !remade->division || remade->grid->cores_used < groups[p].grid->cores_used)
          continue;
      }
      const GroupLx& pg = remade ? *remade : groups[p];
      const LoopDivision& pd = *pg.division;
      const BufAccess* st = sole_store(pd, storage);
      if (!st) continue;
      if (groups[r].division) {
        const LoopDivision& rd = *groups[r].division;
        if (pd.rows == rd.rows && pd.core_rows == rd.core_rows) continue;  // alike already
        // A matmul dividing A's rows otherwise may still read the value as A with its rows.
        if (!mm && (pd.rows != rd.rows || !rd.loads_as(storage, *st))) continue;
      }
      // The trial: the producer's rows, the value in a slot at the top of the usable LX.
      KernelLx trial;
      trial.rows = pd.core_rows;
      const int64_t bytes = pd.slice_bytes(*st, cfg.stick_bytes);
      trial.lx_top = (cfg.lx_usable_bytes() - bytes) / cfg.stick_bytes * cfg.stick_bytes;
      trial.resident[storage] = ResidentSlot{trial.lx_top};
      nlohmann::json d = {{"kernel", groups[r].name},
                          {"producer", groups[p].name},
                          {"buffer", storage},
                          {"own_cycles", groups[r].cycles}};
      const std::optional<GroupLx> with = trial.lx_top > 0 ? lower(r, trial) : std::nullopt;
      if (with) d["producer_rows_cycles"] = with->cycles;
      const bool fits = with && with->division && with->division->rows == pd.rows &&
                        with->division->core_rows == pd.core_rows &&
                        with->division->loads_as(storage, *st);
      // The producer's extra cycles when it was lowered again for this.
      const int64_t extra = remade ? remade->cycles - groups[p].cycles : 0;
      if (remade) d["producer_whole_rows_cycles"] = remade->cycles;
      if (remade) d["producer_own_cycles"] = groups[p].cycles;
      const bool faster = fits && with->cycles + extra < groups[r].cycles;
      // Its working set with those rows and no slot is what the plan must leave room for.
      KernelLx rows_only;
      rows_only.rows = pd.core_rows;
      const std::optional<GroupLx> plain = faster ? lower(r, rows_only) : std::nullopt;
      d["taken"] = plain && plain->division && plain->division->core_rows == pd.core_rows;
      if (!d["taken"].get<bool>()) {
        d["reason"] = !with    ? "it does not lower with the producer's rows"
                      : !fits  ? "it does not read the value in the producer's rows and layout"
                      : faster ? "its working set does not lower with the producer's rows"
                               : "the producer's rows with the value in LX are predicted slower";
        decisions.push_back(d);
        continue;
      }
      taken[r] = Taken{p, storage, groups[r], std::nullopt};
      if (remade) {
        taken[r].producer_own = groups[p];
        groups[p] = *remade;
      }
      groups[r] = *plain;
      decisions.push_back(d);
      break;
    }
  }
  // The plan; a kernel whose value did not stay in LX from its producer goes back to its own
  // rows, and the plan is made again (each round gives back at least one).
  for (;;) {
    LxResidencyPlan plan = plan_lx_residency(g, groups, cfg, enabled);
    bool back = false;
    for (auto it = taken.begin(); it != taken.end();) {
      bool kept = false;
      for (const auto& b : plan.buffers)
        kept = kept || (b.buffer == it->second.buffer && b.producer == it->second.producer &&
                        std::count(b.readers.begin(), b.readers.end(), it->first) > 0);
      if (kept) {
        ++it;
        continue;
      }
      groups[it->first] = it->second.own;
      if (it->second.producer_own) groups[it->second.producer] = *it->second.producer_own;
      for (auto& d : decisions)
        if (d["kernel"] == groups[it->first].name && d["taken"].get<bool>()) {
          d["taken"] = false;
          d["reason"] = "the value did not stay in LX (see lx_residency.decisions)";
        }
      it = taken.erase(it);
      back = true;
    }
    if (back) continue;
    for (const auto& [r, t] : taken) plan.kernels[r].rows = groups[r].division->core_rows;
    // A matmul whose output or A operand stays in LX lowers with the split that gave it those
    // rows.
    for (const auto& b : plan.buffers) {
      std::vector<size_t> ks = b.readers;
      ks.push_back(b.producer);
      for (size_t k : ks)
        if (groups[k].grid) plan.kernels[k].grid = groups[k].grid;
    }
    return plan;
  }
}

}  // namespace spyre::compiler
