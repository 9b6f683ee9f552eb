#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "spyre/error.h"
#include "spyre/io.h"
#include "spyre/runner/runner.h"

namespace spyre::runner {

namespace {
const char* kUnits[] = {"pt", "sfp", "dma_in", "dma_out", "ring"};

double device_time_us(uint64_t cycles, double clock_ghz) {
  return static_cast<double>(cycles) / (clock_ghz * 1000.0);
}

nlohmann::json dram_json(uint64_t rd, uint64_t wr, double time_us, double peak_gbps) {
  double gbps = time_us > 0 ? static_cast<double>(rd + wr) / (time_us * 1000.0) : 0.0;
  return {
      {"read_bytes", rd}, {"write_bytes", wr}, {"achieved_gbps", gbps}, {"peak_gbps", peak_gbps}};
}

// Host fallbacks (host.call, compiler/host_call.h): the chip's host stats, summed over parts.
const char* kHostFields[] = {"calls", "in_bytes", "out_bytes", "busy_cycles"};
nlohmann::json host_json(const nlohmann::json& stats) {
  nlohmann::json h;
  const auto ptr = nlohmann::json::json_pointer("/chip/host");
  for (const char* f : kHostFields)
    h[f] = stats.contains(ptr) ? stats.at(ptr).value(f, uint64_t{0}) : uint64_t{0};
  return h;
}
}  // namespace

nlohmann::json summary_json(const sim::SimResult& r, const arch::ArchConfig& cfg,
                            const std::string& trace_path) {
  nlohmann::json s;
  s["cycles"] = r.cycles;
  s["clock_ghz"] = cfg.clock_ghz;
  s["device_time_us"] = device_time_us(r.cycles, cfg.clock_ghz);
  s["arch"] = cfg.name;
  s["cores"] = cfg.cores;
  nlohmann::json ks = nlohmann::json::array();
  for (const auto& k : r.kernels)
    ks.push_back({{"name", k.name},
                  {"cycles", k.cycles()},
                  {"start_cycle", k.start_cycle},
                  {"end_cycle", k.end_cycle}});
  s["kernels"] = ks;
  nlohmann::json u;
  for (const char* unit : kUnits) u[unit] = r.utilisation(unit);
  s["utilisation"] = u;
  // The DRAM model states its own peak (lpddr5: channels x width x data rate); fifo's is its
  // configured bandwidth.
  const auto peak_ptr = nlohmann::json::json_pointer("/chip/dram/peak_gbps");
  double peak = r.stats.contains(peak_ptr) ? r.stats.at(peak_ptr).get<double>() : cfg.dram_bw_gbps;
  s["dram"] = dram_json(r.dram_read_bytes, r.dram_write_bytes, s["device_time_us"], peak);
  s["host"] = host_json(r.stats);
  s["stats"] = r.stats;
  s["trace"] = trace_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(trace_path);
  s["outputs_match"] = nullptr;
  return s;
}

nlohmann::json merge_summaries(const std::vector<nlohmann::json>& parts) {
  if (parts.empty()) throw Error("run", "nothing was simulated (the model has no device work)");
  if (parts.size() == 1) return parts[0];
  nlohmann::json s = parts[0];
  uint64_t cycles = 0, rd = 0, wr = 0;
  nlohmann::json ks = nlohmann::json::array(), traces = nlohmann::json::array(),
                 stats = nlohmann::json::array();
  nlohmann::json busy = nlohmann::json::object();  // utilisation weighted by cycles
  nlohmann::json host = host_json({});
  for (const auto& p : parts) {
    const nlohmann::json part_host = p.contains("host") ? p["host"] : host_json({});
    for (const char* f : kHostFields)
      host[f] = host[f].get<uint64_t>() + part_host.value(f, uint64_t{0});
    uint64_t c = p["cycles"];
    cycles += c;
    rd += p["dram"]["read_bytes"].get<uint64_t>();
    wr += p["dram"]["write_bytes"].get<uint64_t>();
    for (const auto& k : p["kernels"]) ks.push_back(k);
    traces.push_back(p["trace"]);
    stats.push_back(p["stats"]);
    for (const char* unit : kUnits)
      busy[unit] =
          busy.value(unit, 0.0) + p["utilisation"][unit].get<double>() * static_cast<double>(c);
  }
  s["cycles"] = cycles;
  s["device_time_us"] = device_time_us(cycles, s["clock_ghz"]);
  s["kernels"] = ks;
  for (const char* unit : kUnits)
    s["utilisation"][unit] = cycles ? busy[unit].get<double>() / static_cast<double>(cycles) : 0.0;
  s["dram"] = dram_json(rd, wr, s["device_time_us"], s["dram"]["peak_gbps"]);
  s["host"] = host;
  s["stats"] = {{"subgraphs", stats}};
  s["trace"] = traces[0];
  s["traces"] = traces;
  s["subgraphs"] = parts.size();
  return s;
}

std::string format_summary(const nlohmann::json& s) {
  std::ostringstream o;
  char line[256];
  auto put = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    o << line;
  };
  put("arch %s: %d cores at %.3g GHz\n", s["arch"].get<std::string>().c_str(),
      s["cores"].get<int>(), s["clock_ghz"].get<double>());
  put("  total cycles      %llu\n", static_cast<unsigned long long>(s["cycles"].get<uint64_t>()));
  put("  device time       %.3f us\n", s["device_time_us"].get<double>());
  o << "  kernels (cycles, span from first start to last end on any core)\n";
  for (const auto& k : s["kernels"])
    put("    %-32s %10llu\n", k["name"].get<std::string>().c_str(),
        static_cast<unsigned long long>(k["cycles"].get<uint64_t>()));
  const auto& u = s["utilisation"];
  put("  utilisation       PT %.1f %%  SFP %.1f %%  DMA-in %.1f %%  DMA-out %.1f %%\n",
      100 * u["pt"].get<double>(), 100 * u["sfp"].get<double>(), 100 * u["dma_in"].get<double>(),
      100 * u["dma_out"].get<double>());
  const auto& d = s["dram"];
  put("  DRAM              read %.3f MB, written %.3f MB, achieved %.1f GB/s of %.0f GB/s\n",
      d["read_bytes"].get<double>() / 1e6, d["write_bytes"].get<double>() / 1e6,
      d["achieved_gbps"].get<double>(), d["peak_gbps"].get<double>());
  const nlohmann::json h = s.contains("host") ? s["host"] : host_json({});
  if (h["calls"].get<uint64_t>() > 0)
    put("  host fallbacks    %llu calls, %.3f MB to the host, %.3f MB back, %llu cycles (%.1f %% "
        "of the run)\n",
        static_cast<unsigned long long>(h["calls"].get<uint64_t>()),
        h["in_bytes"].get<double>() / 1e6, h["out_bytes"].get<double>() / 1e6,
        static_cast<unsigned long long>(h["busy_cycles"].get<uint64_t>()),
        100.0 * h["busy_cycles"].get<double>() / std::max(1.0, s["cycles"].get<double>()));
  if (s.contains("subgraphs")) put("  subgraphs         %d\n", s["subgraphs"].get<int>());
  const auto& m = s["outputs_match"];
  if (m.is_null()) {
    o << "  outputs match     n/a (no reference for this target)\n";
  } else {
    o << "  outputs match     " << (m.get<bool>() ? "yes" : "NO");
    if (s.contains("max_abs_err"))
      put(" (max error beyond one output ulp %.3g, tolerance %.3g, vs eager PyTorch in fp32)",
          s["max_abs_err"].get<double>(), s["tolerance"].get<double>());
    o << "\n";
  }
  return o.str();
}

void write_output_folder(const std::string& dir, const nlohmann::json& summary,
                         const nlohmann::json& report, const arch::ArchConfig& cfg,
                         const nlohmann::json& provenance) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir, "cannot create output folder: " + ec.message());
  auto path = [&](const char* f) { return (std::filesystem::path(dir) / f).string(); };
  nlohmann::json brief = summary;
  brief.erase("stats");
  write_file_atomic(path("summary.json"), brief.dump(2) + "\n");
  write_file_atomic(path("stats.json"), summary["stats"].dump(2) + "\n");
  if (!report.is_null()) write_file_atomic(path("report.json"), report.dump(2) + "\n");
  write_file_atomic(path("arch.yaml"), cfg.to_yaml());
  if (!provenance.is_null()) write_file_atomic(path("provenance.json"), provenance.dump(2) + "\n");
}

}  // namespace spyre::runner
