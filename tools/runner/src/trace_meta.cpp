// What the runner adds to a trace: the metadata, and the kernel spans and planned-LX counters
// that need the compile report (the simulator does not have it).
#include <algorithm>
#include <map>
#include <set>

#include "spyre/runner/runner.h"
#include "spyre/traces/names.h"

namespace spyre::runner {

traces::TraceMeta trace_meta(const arch::ArchConfig& cfg, const std::string& graph, int cores) {
  nlohmann::json arch = nlohmann::json::object();
  arch["name"] = cfg.name;
  for (const arch::ParamInfo& p : arch::param_table()) {
    const std::string v = cfg.get_text(p.key);
    if (p.type == "int")
      arch[p.key] = std::stoll(v);
    else if (p.type == "float")
      arch[p.key] = std::stod(v);
    else
      arch[p.key] = v;
  }
  traces::TraceMeta m;
  m.clock_ghz = cfg.clock_ghz;
  m.arch_json = arch.dump();
  m.graph = graph;
  m.cores = cores;
  return m;
}

// "spyre.core_N" / "lx planned bytes": the bytes of the compile report's LX plan
// (`lx_plan.buffers`, each with its kernel and the cores that hold it) that core N holds while
// each kernel runs, 0 between kernels. Kernels follow each other through barriers, so on one core
// they never overlap. Like the chip counter, this is the plan on the run's timeline, not a
// measurement.
static void trace_lx_per_core(traces::TraceSink& sink, const sim::SimResult& r,
                              const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("lx_plan")) return;
  const auto& plan = report["lx_plan"];
  if (!plan.contains("buffers") || !plan["buffers"].is_array()) return;
  std::map<int64_t, std::map<int64_t, int64_t>> held;  // kernel id -> core -> bytes
  for (const auto& b : plan["buffers"])
    if (b.contains("kernel_id") && b.contains("bytes") && b.contains("cores"))
      for (const auto& c : b["cores"])
        held[b["kernel_id"].get<int64_t>()][c.get<int64_t>()] += b["bytes"].get<int64_t>();
  std::map<int64_t, double> last;  // core -> last value written
  auto sample = [&](int64_t core, uint64_t t, double v) {
    auto it = last.find(core);
    if (it != last.end() && it->second == v) return;
    if (it == last.end() && v == 0) return;
    sink.counter(traces::core_module(traces::kChipModule, static_cast<int>(core)),
                 "lx planned bytes", t, v);
    last[core] = v;
  };
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    const sim::KernelStats& k = r.kernels[i];
    if (k.end_cycle <= k.start_cycle) continue;
    auto it = held.find(static_cast<int64_t>(i));
    if (it == held.end()) continue;
    for (const auto& [core, bytes] : it->second)
      sample(core, k.start_cycle, static_cast<double>(bytes));
    for (const auto& [core, bytes] : it->second) sample(core, k.end_cycle, 0.0);
  }
}

void trace_kernels(traces::TraceSink& sink, const sim::SimResult& r, const nlohmann::json& report) {
  std::map<std::string, const nlohmann::json*> by_name;
  if (report.is_object() && report.contains("kernels") && report["kernels"].is_array())
    for (const auto& k : report["kernels"])
      if (k.contains("name") && k["name"].is_string()) by_name[k["name"].get<std::string>()] = &k;
  const int track = sink.track(traces::kChipModule, "kernels");
  struct Edge {
    uint64_t t;
    int delta;  // +1 start, -1 end
    int64_t bytes;
  };
  std::vector<Edge> edges;
  for (size_t i = 0; i < r.kernels.size(); ++i) {
    const sim::KernelStats& k = r.kernels[i];
    if (k.end_cycle <= k.start_cycle) continue;  // never ran
    std::vector<traces::Arg> extra;
    std::string group;
    auto it = by_name.find(k.name);
    if (it != by_name.end()) {
      const nlohmann::json& rk = *it->second;
      if (rk.contains("fusion_group") && !rk["fusion_group"].is_null())
        group = rk["fusion_group"].dump();
      if (rk.contains("predicted") && rk["predicted"].contains("cycles"))
        extra.push_back(
            traces::Arg::num("predicted_cycles", rk["predicted"]["cycles"].get<int64_t>()));
      if (rk.contains("lx") && rk["lx"].contains("peak_bytes")) {
        const int64_t peak = rk["lx"]["peak_bytes"].get<int64_t>();
        extra.push_back(traces::Arg::num("lx_planned_peak_bytes", peak));
        edges.push_back({k.start_cycle, +1, peak});
        edges.push_back({k.end_cycle, -1, peak});
      }
    }
    if (!group.empty()) extra.push_back(traces::Arg::str("fusion_group", group));
    extra.push_back(traces::Arg::num("kernel_id", static_cast<int64_t>(i)));
    traces::SpanArgs a;
    a.kernel = k.name;
    a.extra = &extra;
    sink.span(track, k.name, k.start_cycle, k.cycles(), a);
  }
  // Planned LX per core: the largest plan among the kernels running (each core holds one
  // kernel's buffers at a time; kernels overlap in time only across cores).
  std::stable_sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) {
    return a.t != b.t ? a.t < b.t : a.delta < b.delta;
  });
  std::multiset<int64_t> live;
  double last = -1;
  for (size_t i = 0; i < edges.size(); ++i) {
    const Edge& e = edges[i];
    if (e.delta > 0)
      live.insert(e.bytes);
    else
      live.erase(live.find(e.bytes));
    if (i + 1 < edges.size() && edges[i + 1].t == e.t) continue;  // one sample per cycle
    const double v = live.empty() ? 0.0 : static_cast<double>(*live.rbegin());
    if (v != last) sink.counter(traces::kChipModule, "lx planned bytes", e.t, v);
    last = v;
  }
  trace_lx_per_core(sink, r, report);
}

}  // namespace spyre::runner
