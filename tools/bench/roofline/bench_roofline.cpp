// Roofline benchmark (issue 5): simulated cycles of square fp16 GEMMs and of the zoo models
// beside the roofline bound of the same configuration, and IBM's measured mm K-sweep.
//
// Bound of a kernel = max(compute at the chip's peak, the minimum DRAM bytes the kernel must
// move / DRAM bandwidth). Matmul: MACs / (cores x corelets x pt.rows x pt.lanes) and A, B and
// the output once. Pointwise/reduction kernels: element ops / (cores x corelets x fp32 SFP
// lanes) and every buffer the kernel reads from outside it and writes for later kernels once.
// A model's bound is the sum over its kernels (the compiled fusion groups). Bandwidth is
// `dram.bw_gbps` (150 GB/s, IBM's measured streaming rate).
//
// Usage: spyre_bench_roofline [--sizes 1024,2048,...] [--models DIR] [--no-models]
//                             [--no-ksweep] [--detail] [--arch NAME] [--set key=value]...
// --detail adds each GEMM's DRAM traffic and unit utilisation.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../mm_ir.h"
#include "spyre/arch/arch.h"
#include "spyre/compiler/compile.h"
#include "spyre/compiler/ir.h"
#include "spyre/error.h"
#include "spyre/isa/dtype.h"
#include "spyre/sim/simulate.h"

namespace {

using namespace spyre;
using nlohmann::json;

json mm_ir(int64_t m, int64_t n, int64_t k) {
  return bench::mm_ir(m, n, k, "tools/bench/roofline/bench_roofline.cpp:1");
}

int64_t numel(const std::vector<int64_t>& size) {
  int64_t n = 1;
  for (auto s : size) n *= s;
  return n;
}

double view_bytes(const compiler::ir::Graph& g, const std::string& name) {
  const auto& b = g.buffer(name);
  return static_cast<double>(numel(b.size) * isa::dtype_size_bytes(b.dtype));
}

void collect_loads(const std::vector<compiler::ir::Op>& body, std::set<std::string>& out) {
  for (const auto& op : body) {
    if (op.op == "load" && !op.buffer.empty()) out.insert(op.buffer);
    collect_loads(op.body, out);
  }
}

// Roofline cycles of one compiled kernel (its IR nodes).
double kernel_bound(const compiler::ir::Graph& g, const std::vector<std::string>& names,
                    const arch::ArchConfig& cfg) {
  std::set<std::string> in_group(names.begin(), names.end());
  std::set<std::string> written, read;
  double compute = 0;
  const double pt_peak = static_cast<double>(cfg.cores * cfg.corelets * cfg.pt_macs_per_cycle());
  const double sfp_peak = static_cast<double>(cfg.cores * cfg.corelets * cfg.sfp_lanes_fp32);
  for (const auto& n : g.nodes) {
    if (!in_group.count(n.name)) continue;
    for (const auto& o : n.outputs) written.insert(g.storage_of(o).name);
    if (n.kind == "extern") {
      for (const auto& in : n.inputs) read.insert(in.buffer);
      if (n.inputs.size() >= 2) {
        const auto& a = n.inputs[n.inputs.size() - 2];
        const auto& b = n.inputs[n.inputs.size() - 1];
        double batch = a.size.size() == 3 ? static_cast<double>(a.size[0]) : 1;
        double m = static_cast<double>(a.size[a.size.size() - 2]);
        double k = static_cast<double>(a.size.back());
        double nn = static_cast<double>(b.size.back());
        compute += batch * m * nn * k / pt_peak;
      }
    } else {
      std::set<std::string> loads;
      collect_loads(n.body, loads);
      read.insert(loads.begin(), loads.end());
      int64_t ops = 0;
      for (const auto& op : n.body)
        if (op.op != "load" && op.op != "store" && op.op != "store_reduction" &&
            op.op != "constant" && op.op != "index_expr")
          ++ops;
      compute += static_cast<double>(numel(n.sizes) * numel(n.reduce_sizes) * ops) / sfp_peak;
    }
  }
  // Bytes: buffers read from outside the kernel, and written buffers someone else reads.
  double bytes = 0;
  std::set<std::string> counted;
  for (const auto& r : read) {
    const std::string st = g.storage_of(r).name;
    if (written.count(st) || !counted.insert(st).second) continue;
    bytes += view_bytes(g, r);
  }
  for (const auto& w : written) {
    bool needed = false;
    for (const auto& o : g.outputs) needed = needed || g.storage_of(o.buffer).name == w;
    for (const auto& n : g.nodes) {
      if (in_group.count(n.name)) continue;
      std::set<std::string> loads;
      collect_loads(n.body, loads);
      for (const auto& in : n.inputs) loads.insert(in.buffer);
      for (const auto& l : loads) needed = needed || g.storage_of(l).name == w;
    }
    if (needed) bytes += view_bytes(g, w);
  }
  return std::max(compute, bytes / cfg.dram_bytes_per_cycle());
}

struct Run {
  uint64_t cycles = 0;
  double bound = 0;
  // By unit: the kernels on PT (matmuls, convolutions) and the rest (SFP), simulated span and
  // bound, so a model's gap can be told apart.
  double pt_cycles = 0, pt_bound = 0, sfp_cycles = 0, sfp_bound = 0;
  json report;
  double wall_s = 0;
  std::string detail;  // DRAM traffic and unit utilisation of the run
};

Run compile_and_run(const json& ir, const arch::ArchConfig& cfg,
                    const compiler::CompileOptions& opts, const std::string& name) {
  Run r;
  auto t0 = std::chrono::steady_clock::now();
  compiler::CompileResult c = compiler::compile(ir, cfg, opts, name);
  r.report = c.report;
  const compiler::ir::Graph g = compiler::ir::load_ir(ir, name);
  std::vector<double> bounds;
  for (const auto& k : c.report["kernels"]) {
    bounds.push_back(kernel_bound(g, k["nodes"].get<std::vector<std::string>>(), cfg));
    r.bound += bounds.back();
  }
  sim::DeviceMemory dram;
  sim::SimOptions so;
  so.functional = false;
  sim::SimResult s = sim::simulate(c.program, cfg, dram, so);
  r.cycles = s.cycles;
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "DRAM read %.1f MB, written %.1f MB (%.1f B/cycle); utilisation pt %.2f, "
                "dma_in %.2f, ring %.2f",
                static_cast<double>(s.dram_read_bytes) / 1e6,
                static_cast<double>(s.dram_write_bytes) / 1e6,
                static_cast<double>(s.dram_read_bytes + s.dram_write_bytes) /
                    static_cast<double>(std::max<uint64_t>(1, s.cycles)),
                s.utilisation("pt"), s.utilisation("dma_in"), s.utilisation("ring"));
  r.detail = buf;
  if (s.stats.contains("chip") && s.stats["chip"]["dram"].contains("channels")) {
    // DRAM channels: data-bus busy share, row hits, turnarounds (summed)
    double busy = 0, hits = 0, acc = 0, turns = 0, lo = 1e30, hi = 0;
    for (const auto& c : s.stats["chip"]["dram"]["channels"]) {
      const double b = c.value("data_bus_busy_cycles", 0.0);
      busy += b, lo = std::min(lo, b), hi = std::max(hi, b);
      hits += c.value("row_hits", 0.0);
      acc += c.value("reads", 0.0) + c.value("writes", 0.0);
      turns +=
          c.value("read_to_write_turnarounds", 0.0) + c.value("write_to_read_turnarounds", 0.0);
    }
    const double n = static_cast<double>(s.stats["chip"]["dram"]["channels"].size());
    char b2[200];
    std::snprintf(
        b2, sizeof b2,
        "\n                       DRAM bus busy %.2f (channels %.2f..%.2f), row hits %.2f, "
        "turnarounds %.0f",
        busy / n / static_cast<double>(s.cycles), lo / static_cast<double>(s.cycles),
        hi / static_cast<double>(s.cycles), hits / std::max(1.0, acc), turns);
    r.detail += b2;
  }
  if (s.stats.contains("chip")) {  // core 0's queues: busy / waiting on tokens
    const auto& c0 = s.stats["chip"]["cores"][0];
    r.detail += "\n                       core 0 busy/wait:";
    for (auto it = c0.begin(); it != c0.end(); ++it)
      if (it.value().contains("wait_cycles") && it.value()["instructions"].get<uint64_t>() > 0)
        r.detail += " " + it.key() + " " +
                    std::to_string(it.value()["busy_cycles"].get<uint64_t>()) + "/" +
                    std::to_string(it.value()["wait_cycles"].get<uint64_t>());
  }
  if (s.kernels.size() == bounds.size())
    for (size_t i = 0; i < bounds.size(); ++i) {
      const bool pt = c.report["kernels"][i].value("unit", "") == "pt";
      (pt ? r.pt_cycles : r.sfp_cycles) += static_cast<double>(s.kernels[i].cycles());
      (pt ? r.pt_bound : r.sfp_bound) += bounds[i];
    }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::string split_of(const json& report) {
  for (const auto& k : report["kernels"])
    if (k.value("unit", "") == "pt") {
      const auto& s = k["split"]["split"];
      const auto& t = k["tiles"];
      const auto& sp = k["split"];
      const bool ma = sp["multicast"]["a"]["enabled"].get<bool>(),
                 mb = sp["multicast"]["b"]["enabled"].get<bool>();
      const bool pa = sp.contains("panel") && sp["panel"]["a"].get<bool>(),
                 pb = sp.contains("panel") && sp["panel"]["b"].get<bool>();
      char buf[200];
      std::snprintf(buf, sizeof buf, "b%lld m%lld n%lld k%lld, tile %lldx%lldx%lld%s%s%s",
                    s["b"].get<long long>(), s["m"].get<long long>(), s["n"].get<long long>(),
                    s["k"].get<long long>(), t["tm"].get<long long>(), t["tn"].get<long long>(),
                    t["tk"].get<long long>(),
                    ma && mb ? ", mcast A+B"
                    : ma     ? ", mcast A"
                    : mb     ? ", mcast B"
                             : "",
                    pa ? ", A panel" : "", pb ? ", B panel" : "");
      const int64_t lead = sp.value("lead", int64_t{1});
      const std::string lead_s = lead > 1 ? ", lead " + std::to_string(lead) : "";
      return std::string(buf) + lead_s + "; predicted " +
             std::to_string(sp["predicted"]["cycles"].get<long long>());
    }
  return "-";
}

// The cost model's predicted cycles of the run's matmul kernel (0 when it has none).
double predicted_of(const json& report) {
  for (const auto& k : report["kernels"])
    if (k.value("unit", "") == "pt") return k["split"]["predicted"]["cycles"].get<double>();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes{1024, 2048, 4096, 8192};
  std::string models_dir = std::string(SPYRE_SOURCE_DIR) + "/tests/data/ir/models";
  std::string arch_name = "spyre";
  std::vector<std::string> sets;
  bool models = true, ksweep = true, detail = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--sizes") {
      sizes.clear();
      std::string v = next();
      for (size_t p = 0; p < v.size();) {
        size_t c = v.find(',', p);
        sizes.push_back(std::stoll(v.substr(p, c - p)));
        p = c == std::string::npos ? v.size() : c + 1;
      }
    } else if (a == "--models") {
      models_dir = next();
    } else if (a == "--no-models") {
      models = false;
    } else if (a == "--detail") {
      detail = true;
    } else if (a == "--no-ksweep") {
      ksweep = false;
    } else if (a == "--arch") {
      arch_name = next();
    } else if (a == "--set") {
      sets.push_back(next());
    } else {
      std::fprintf(stderr,
                   "usage: %s [--sizes 1024,2048,...] [--models DIR] [--no-models] [--no-ksweep] "
                   "[--detail] [--arch NAME] [--set key=value]...\n",
                   argv[0]);
      return 2;
    }
  }
  try {
    std::vector<std::string> arch_sets;
    compiler::CompileOptions opts;
    for (const auto& s : sets) {
      if (s.rfind("compiler.", 0) == 0) {
        const auto eq = s.find('=');
        opts.set(s.substr(9, eq - 9), s.substr(eq + 1));
      } else {
        arch_sets.push_back(s);
      }
    }
    const arch::ArchConfig cfg = arch::load_arch(arch_name, arch_sets);
    const double ghz = cfg.clock_ghz;
    std::printf(
        "arch %s: %lld cores at %.2f GHz, PT peak %lld MAC/cycle, DRAM %.0f GB/s (%.1f "
        "B/cycle)\n\n",
        cfg.name.c_str(), static_cast<long long>(cfg.cores), ghz,
        static_cast<long long>(cfg.cores * cfg.corelets * cfg.pt_macs_per_cycle()),
        cfg.dram_bw_gbps, cfg.dram_bytes_per_cycle());

    std::printf("GEMMs (square, fp16; target: 2048 and larger within 1.25x of the bound)\n");
    std::printf("%-22s %14s %14s %7s  %s\n", "case", "simulated", "bound", "ratio", "split");
    for (int64_t s : sizes) {
      Run r = compile_and_run(mm_ir(s, s, s), cfg, opts, "gemm");
      std::printf("%-22s %14llu %14.0f %7.3f  %s\n", ("gemm " + std::to_string(s)).c_str(),
                  static_cast<unsigned long long>(r.cycles), r.bound,
                  static_cast<double>(r.cycles) / r.bound, split_of(r.report).c_str());
      if (detail) {
        std::printf("%-22s %s\n", "", r.detail.c_str());
        for (const auto& k : r.report["kernels"])
          if (k.value("unit", "") == "pt")
            std::printf("%-22s predicted %s\n", "", k["split"]["predicted"].dump().c_str());
      }
      std::fflush(stdout);
    }

    if (models) {
      std::printf("\nZoo models (%s)\n", models_dir.c_str());
      std::printf("%-22s %14s %14s %7s %8s %8s  %s\n", "model", "simulated", "bound", "ratio", "pt",
                  "sfp", "kernels (pt, sfp: span / bound of those kernels)");
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(models_dir))
        if (e.path().extension() == ".json") files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        const std::string name = f.stem().string();
        try {
          std::ifstream in(f);
          json ir = json::parse(in);
          Run r = compile_and_run(ir, cfg, opts, f.filename().string());
          std::printf("%-22s %14llu %14.0f %7.3f %8.3f %8.3f  %zu\n", name.c_str(),
                      static_cast<unsigned long long>(r.cycles), r.bound,
                      static_cast<double>(r.cycles) / r.bound,
                      r.pt_bound > 0 ? r.pt_cycles / r.pt_bound : 0.0,
                      r.sfp_bound > 0 ? r.sfp_cycles / r.sfp_bound : 0.0,
                      r.report["kernels"].size());
        } catch (const std::exception& e) {
          std::string what = e.what();
          if (what.size() > 150) what = what.substr(0, 150) + "...";
          std::printf("%-22s does not compile: %s\n", name.c_str(), what.c_str());
        }
        std::fflush(stdout);
      }
    }

    if (ksweep) {
      // IBM's measured mm K-sweep (shared/calibration/spyre_measured.json): M = N = 2048 on 32
      // cores with IBM's division m=4 x n=8. Simulated with that split forced, and with the
      // split the cost model picks.
      const std::vector<std::pair<int64_t, double>> ibm{
          {512, 163.4}, {1024, 244.1}, {2048, 389.0}, {4096, 667.5}, {8192, 1240.7}};
      std::printf(
          "\nIBM mm K-sweep, M = N = 2048, fp16 (measured: torch-spyre notes, split m4 x n8)\n");
      // pred_us: the cost model's prediction of the auto split; model: its error against that
      // split's simulation.
      std::printf("%6s %12s %14s %8s %14s %8s %12s %12s %8s\n", "K", "measured_us", "sim_us(m4n8)",
                  "error", "sim_us(auto)", "error", "bound_us", "pred_us", "model");
      compiler::CompileOptions forced = opts;
      forced.set("matmul_split", "1,4,8,1");
      for (auto [k, us] : ibm) {
        Run f = compile_and_run(mm_ir(2048, 2048, k), cfg, forced, "ksweep");
        Run a = compile_and_run(mm_ir(2048, 2048, k), cfg, opts, "ksweep");
        const double fu = static_cast<double>(f.cycles) / ghz / 1000.0;
        const double au = static_cast<double>(a.cycles) / ghz / 1000.0;
        const double pu = predicted_of(a.report) / ghz / 1000.0;
        std::printf("%6lld %12.1f %14.1f %+7.1f%% %14.1f %+7.1f%% %12.1f %12.1f %+7.1f%%  %s\n",
                    static_cast<long long>(k), us, fu, 100.0 * (fu - us) / us, au,
                    100.0 * (au - us) / us, f.bound / ghz / 1000.0, pu, 100.0 * (pu - au) / au,
                    split_of(a.report).c_str());
        std::fflush(stdout);
      }
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
