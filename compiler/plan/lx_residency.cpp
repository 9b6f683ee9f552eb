// The whole-graph LX plan (lx_residency.h).
#include "spyre/compiler/lx_residency.h"

#include <algorithm>

namespace spyre::compiler {
namespace {

using BufAccess = LoopDivision::BufferAccess;

// The accesses of `storage` in a kernel's division; `store` selects stores or loads.
std::vector<const BufAccess*> accesses_of(const LoopDivision& d, const std::string& storage,
                                          bool store) {
  std::vector<const BufAccess*> out;
  for (const auto& a : d.accesses)
    if (a.storage == storage && a.store == store) out.push_back(&a);
  return out;
}

struct Interval {
  int64_t lo, hi;  // [lo, hi)
};

// The highest stick-aligned [o, o + bytes) below `top` that overlaps none of `taken`.
std::optional<int64_t> highest_gap(std::vector<Interval> taken, int64_t top, int64_t bytes,
                                   int64_t stick) {
  std::sort(taken.begin(), taken.end(), [](const Interval& a, const Interval& b) {
    return a.hi > b.hi;  // from the top down
  });
  int64_t ceiling = top / stick * stick;
  for (;;) {
    const int64_t o = (ceiling - bytes) / stick * stick;
    if (o < 0) return std::nullopt;
    bool clash = false;
    for (const auto& t : taken)
      if (t.lo < o + bytes && o < t.hi) {
        clash = true;
        ceiling = std::min(ceiling, t.lo);
        break;
      }
    if (!clash) return o;
  }
}

}  // namespace

LxResidencyPlan plan_lx_residency(const ir::Graph& g, const std::vector<GroupLx>& groups,
                                  const arch::ArchConfig& cfg, bool enabled) {
  LxResidencyPlan plan;
  const size_t n = groups.size();
  plan.kernels.resize(n);
  std::set<std::string> outputs, inputs;
  for (const auto& o : g.outputs) outputs.insert(g.storage_of(o.buffer).name);
  for (const auto& i : g.inputs) inputs.insert(g.storage_of(i).name);

  // Candidates: every storage one kernel writes and a later loop kernel reads the same way.
  struct Candidate {
    ResidentBuffer rb;
    int64_t saved = 0;  // DRAM bytes per core no longer moved
  };
  std::vector<Candidate> cands;
  // The kernels after `p` that read `storage`: from LX (`lx`) when they give every core the
  // same rows as p, only load it and load it as `place` lays it out; else from DRAM.
  auto later_readers = [&](const std::string& storage, size_t p, const BufAccess& place,
                           std::vector<size_t>& lx, std::vector<std::string>& dram) {
    for (size_t r = p + 1; r < n; ++r) {
      if (!groups[r].reads.count(storage)) continue;
      const auto& rd = groups[r].division;
      if (rd && groups[p].division->same_rows(*rd) && rd->loads_as(storage, place))
        lx.push_back(r);
      else
        dram.push_back(groups[r].name);
    }
  };
  // A buffer read by several loop kernels alike after its last write (a graph input or weight,
  // or a value whose producer cannot keep it in LX; `from`: its last writer + 1): the first loop
  // kernel from `from` on that loads it as rows a later reader shares loads it into a slot, the
  // later ones take it from there. 0: fewer than two readers, no candidate; 1: rejected (the
  // decision says why); 2: a candidate.
  auto load_once = [&](const std::string& storage, size_t from) {
    std::vector<size_t> rs;  // its readers from `from` on
    for (size_t k = from; k < n; ++k)
      if (groups[k].reads.count(storage)) rs.push_back(k);
    if (rs.size() < 2) return 0;
    // The first loop kernel that loads it as rows it can keep and that a later reader shares
    // them with; readers before it read DRAM (nothing writes the buffer from `from` on).
    std::string why;
    for (size_t i = 0; i + 1 < rs.size(); ++i) {
      const size_t p = rs[i];
      const auto& pd = groups[p].division;
      if (!pd || groups[p].grid) {  // a matmul loads its operand tiles, not rows into a slot
        if (why.empty())
          why =
              "no loop kernel reader that divides rows over the cores shares them with a "
              "later one";
        continue;
      }
      const auto loads = accesses_of(*pd, storage, false);
      if (loads.size() != 1 || !loads[0]->placeable || !accesses_of(*pd, storage, true).empty()) {
        if (why.empty())
          why = groups[p].name + " loads it more than once, or not as rows it can keep in LX";
        continue;
      }
      Candidate c;
      c.rb.buffer = storage;
      c.rb.producer = p;
      c.rb.loaded = true;
      std::vector<std::string> dram_readers;
      later_readers(storage, p, *loads[0], c.rb.readers, dram_readers);
      if (c.rb.readers.empty()) {
        if (why.empty())
          why = "no later reader gives every core the same rows of it as " + groups[p].name;
        continue;
      }
      c.rb.bytes = pd->slice_bytes(*loads[0], cfg.stick_bytes);
      c.saved = c.rb.bytes * static_cast<int64_t>(c.rb.readers.size());
      cands.push_back(std::move(c));
      return 2;
    }
    nlohmann::json d = {{"buffer", storage}, {"loaded", true}, {"resident", false}};
    if (from > 0) d["writer"] = groups[from - 1].name;  // its last writer
    d["reason"] = why.empty() ? "no two readers share its rows" : why;
    plan.decisions.push_back(d);
    return 1;
  };
  std::map<std::string, std::vector<size_t>> writers;
  for (size_t k = 0; k < n; ++k)
    for (const auto& w : groups[k].writes) writers[w].push_back(k);
  for (const auto& [storage, ws] : writers) {
    if (!enabled) break;
    nlohmann::json d = {{"buffer", storage}};
    auto reject = [&](const std::string& why) {
      d["resident"] = false;
      d["reason"] = why;
      plan.decisions.push_back(d);
    };
    // Where the last writer cannot hand it over in LX, its readers may still share one load.
    if (ws.size() != 1 || inputs.count(storage)) {
      if (!load_once(storage, ws.back() + 1))
        reject("written by more than one kernel, or a graph input");
      continue;
    }
    const size_t p = ws[0];
    d["producer"] = groups[p].name;
    const auto& pd = groups[p].division;
    if (!pd) {
      if (!load_once(storage, p + 1))
        reject("its producer is not a loop kernel that divides rows over the cores");
      continue;
    }
    const auto stores = accesses_of(*pd, storage, true);
    if (stores.size() != 1 || !stores[0]->placeable) {
      if (!load_once(storage, p + 1))
        reject("its producer stores it more than once, or a value that cannot stay in LX");
      continue;
    }
    const BufAccess& st = *stores[0];
    Candidate c;
    c.rb.buffer = storage;
    c.rb.producer = p;
    std::vector<std::string> dram_readers;
    later_readers(storage, p, st, c.rb.readers, dram_readers);
    if (c.rb.readers.empty()) {
      if (!load_once(storage, p + 1))
        reject(dram_readers.empty() ? "no kernel reads it"
                                    : "no reader gives every core the same rows of it");
      continue;
    }
    c.rb.bytes = pd->slice_bytes(st, cfg.stick_bytes);
    c.rb.store_dram = outputs.count(storage) || !dram_readers.empty();
    c.rb.dram_reason = outputs.count(storage) ? "graph output"
                       : dram_readers.empty() ? ""
                                              : "also read by " + dram_readers[0];
    c.saved = c.rb.bytes * static_cast<int64_t>(c.rb.readers.size() + (c.rb.store_dram ? 0 : 1));
    cands.push_back(std::move(c));
  }

  // Buffers no kernel writes: graph inputs, weights.
  std::set<std::string> read_only;
  for (size_t k = 0; enabled && k < n; ++k)
    for (const auto& r : groups[k].reads)
      if (!writers.count(r)) read_only.insert(r);
  for (const auto& storage : read_only) load_once(storage, 0);

  // Place the most saving first, from the top of the usable LX down.
  std::stable_sort(cands.begin(), cands.end(),
                   [](const Candidate& a, const Candidate& b) { return a.saved > b.saved; });
  std::vector<std::vector<Interval>> taken(n);  // per kernel: its working set and slots
  for (size_t k = 0; k < n; ++k)
    taken[k].push_back({0, groups[k].lx_min > 0 ? groups[k].lx_min : groups[k].lx_peak});
  const int64_t usable = cfg.lx_usable_bytes();
  for (auto& c : cands) {
    const size_t lo = c.rb.producer, hi = c.rb.readers.back();
    // A host call stops the device program, and the op it runs may update its inputs in place
    // (host_call.h): nothing stays in LX across one.
    std::vector<Interval> all;
    const GroupLx* host = nullptr;
    for (size_t k = lo; k <= hi; ++k) {
      all.insert(all.end(), taken[k].begin(), taken[k].end());
      if (groups[k].host && !host) host = &groups[k];
    }
    nlohmann::json d = {{"buffer", c.rb.buffer}, {"producer", groups[lo].name}};
    if (c.rb.loaded) d["loaded"] = true;
    const auto o = host ? std::nullopt : highest_gap(all, usable, c.rb.bytes, cfg.stick_bytes);
    if (!o) {
      d["resident"] = false;
      d["reason"] = host ? "the host fallback " + host->name + " runs between its kernels"
                         : "no LX room beside the working sets of kernels " + groups[lo].name +
                               " .. " + groups[hi].name + " (" + std::to_string(c.rb.bytes) +
                               " bytes per core)";
      plan.decisions.push_back(d);
      continue;
    }
    c.rb.lx = *o;
    for (size_t k = lo; k <= hi; ++k) taken[k].push_back({*o, *o + c.rb.bytes});
    plan.kernels[lo].resident[c.rb.buffer] = c.rb.loaded ? ResidentSlot{*o, false, false, true}
                                                         : ResidentSlot{*o, true, c.rb.store_dram};
    for (size_t r : c.rb.readers) plan.kernels[r].resident[c.rb.buffer] = ResidentSlot{*o};
    // Kernels between the producer and its last reader keep the slot too: cap their sets.
    for (size_t k = lo; k <= hi; ++k)
      plan.kernels[k].lx_top =
          plan.kernels[k].lx_top < 0 ? *o : std::min(plan.kernels[k].lx_top, *o);
    d["resident"] = true;
    d["lx"] = *o;
    d["bytes"] = c.rb.bytes;
    d["saved_dram_bytes_per_core"] = c.saved;
    plan.decisions.push_back(d);
    plan.buffers.push_back(c.rb);
  }
  std::sort(plan.buffers.begin(), plan.buffers.end(),
            [](const ResidentBuffer& a, const ResidentBuffer& b) {
              return a.producer != b.producer ? a.producer < b.producer : a.buffer < b.buffer;
            });

  // Barriers: dropped where everything crossing the boundary stays on its core.
  std::map<std::string, const ResidentBuffer*> resident;
  for (const auto& b : plan.buffers) resident[b.buffer] = &b;
  size_t since = 0;  // the first kernel after the last barrier
  for (size_t k = 0; k + 1 < n; ++k) {
    nlohmann::json d = {{"after", groups[k].name}, {"before", groups[k + 1].name}};
    std::string why;
    if (!enabled) why = "LX planning is off";
    // A host fallback is a break in the device program (host_call.h): nothing runs beside it.
    if (why.empty() && (groups[k].host || groups[k + 1].host))
      why = "a host call stops the device program";
    if (why.empty() && (groups[k].spills || groups[k + 1].spills))
      why = "a kernel spills to the shared DRAM scratch region";
    // Another core still in kernel k may use the LX that k+1 multicasts or sends into (its first
    // tiles go out before any handshake): only a kernel that stays on its own core may start early.
    if (why.empty() && groups[k + 1].cross_core)
      why = "it writes into other cores' LX (multicast or ring)";
    for (size_t j = since; j <= k && why.empty(); ++j) {
      for (const auto& w : groups[j].writes) {
        if (!groups[k + 1].reads.count(w)) continue;
        auto it = resident.find(w);
        const bool from_lx =
            it != resident.end() && it->second->producer == j &&
            std::count(it->second->readers.begin(), it->second->readers.end(), k + 1) > 0;
        if (!from_lx) {
          why = "reads " + w + " from DRAM, written by " + groups[j].name;
          break;
        }
      }
      for (const auto& w : groups[k + 1].writes)
        if (why.empty() && (groups[j].reads.count(w) || groups[j].writes.count(w)))
          why = "writes " + w + ", which " + groups[j].name + " reads or writes";
    }
    d["barrier"] = !why.empty();
    if (!why.empty()) {
      d["reason"] = why;
      since = k + 1;
    }
    plan.kernels[k].barrier_after = !why.empty();
    plan.barriers.push_back(d);
  }
  return plan;
}

nlohmann::json LxResidencyPlan::to_json(const std::vector<GroupLx>& groups) const {
  nlohmann::json bufs = nlohmann::json::array();
  for (const auto& b : buffers) {
    nlohmann::json readers = nlohmann::json::array();
    for (size_t r : b.readers) readers.push_back(groups[r].name);
    bufs.push_back({{"buffer", b.buffer},
                    {"producer", groups[b.producer].name},
                    {"readers", readers},
                    {"lx", b.lx},
                    {"bytes_per_core", b.bytes},
                    {"dram", b.store_dram},
                    {"dram_reason", b.dram_reason},
                    {"loaded", b.loaded}});
  }
  int64_t kept = 0;
  for (const auto& d : barriers) kept += d["barrier"].get<bool>();
  return {{"buffers", bufs},
          {"decisions", decisions},
          {"barriers", barriers},
          {"barriers_kept", kept},
          {"barriers_dropped", static_cast<int64_t>(barriers.size()) - kept}};
}

}  // namespace spyre::compiler
