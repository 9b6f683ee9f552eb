#include "spyre/compiler/lx_plan.h"

#include <algorithm>
#include <map>

namespace spyre::compiler {
namespace {

// What the planted report defects claim instead of the truth.
void plant(nlohmann::json& b, LxPlanError err, int64_t stick) {
  if (err == LxPlanError::Shift) b["offset"] = b["offset"].get<int64_t>() + stick;
  if (err == LxPlanError::Shrink) {
    const int64_t half = b["bytes"].get<int64_t>() / 2 / stick * stick;
    b["bytes"] = std::max(stick, half);
  }
}

}  // namespace

nlohmann::json build_lx_plan(nlohmann::json& kernels, const std::vector<KernelPcs>& pcs,
                             const arch::ArchConfig& cfg, LxPlanError err,
                             const LxResidencyPlan& residency, const std::vector<GroupLx>& groups) {
  const size_t ncores = static_cast<size_t>(cfg.cores);
  nlohmann::json buffers = nlohmann::json::array();
  // Per core: the kernel with the largest live bytes (all of a kernel's buffers share its
  // interval, and kernels on one core never overlap in pc, so per kernel is per pc).
  std::vector<nlohmann::json> peak(ncores);
  for (size_t c = 0; c < ncores; ++c)
    peak[c] = {{"core", c}, {"bytes", 0}, {"high_water", 0}, {"kernel", nullptr}};
  bool fits = true;
  nlohmann::json spills = nlohmann::json::array();
  for (const auto& k : kernels)
    if (k.contains("spills"))
      for (const auto& s : k["spills"]) {
        nlohmann::json e = {{"kernel", k["name"]}, {"kernel_id", k["id"]}};
        e.update(s);
        spills.push_back(e);
      }
  for (size_t ki = 0; ki < kernels.size() && ki < pcs.size(); ++ki) {
    nlohmann::json& k = kernels[ki];
    const KernelPcs& kp = pcs[ki];
    nlohmann::json live = nlohmann::json::array(), cores = nlohmann::json::array();
    for (size_t c = 0; c < ncores; ++c)
      if (kp.last[c] > kp.first[c]) {  // more than the closing barrier
        live.push_back({c, kp.first[c], kp.last[c]});
        cores.push_back(c);
      }
    if (!k.contains("lx")) continue;
    int64_t bytes = 0, high = 0;
    for (auto& b : k["lx"]["plan"]) {
      plant(b, err, cfg.stick_bytes);
      bytes += b["bytes"].get<int64_t>();
      high = std::max(high, b["offset"].get<int64_t>() + b["bytes"].get<int64_t>());
      buffers.push_back({{"buffer", b["buffer"]},
                         {"kernel", k["name"]},
                         {"kernel_id", k["id"]},
                         {"offset", b["offset"]},
                         {"bytes", b["bytes"]},
                         {"cores", cores},
                         {"live", live}});
    }
    if (err != LxPlanError::None) k["lx"]["peak_bytes"] = high;
    for (const auto& l : live) {
      auto& p = peak[l[0].get<size_t>()];
      if (bytes > p["bytes"].get<int64_t>())
        p = {{"core", l[0]}, {"bytes", bytes}, {"high_water", high}, {"kernel", k["name"]}};
    }
    fits = fits && high <= cfg.lx_usable_bytes();
  }
  for (const auto& rb : residency.buffers) {
    const size_t lo = rb.producer, hi = rb.readers.back();
    if (hi >= pcs.size() || !groups[lo].division) continue;
    nlohmann::json live = nlohmann::json::array(), cores = nlohmann::json::array();
    const auto& rows = groups[lo].division->core_rows;
    for (size_t c = 0; c < ncores && c < rows.size(); ++c)
      if (rows[c].second > rows[c].first && pcs[lo].first[c] >= 0 && pcs[hi].last[c] >= 0) {
        live.push_back({c, pcs[lo].first[c], pcs[hi].last[c]});
        cores.push_back(c);
      }
    nlohmann::json b = {{"buffer", rb.buffer},  {"kernel", groups[lo].name},
                        {"kernel_id", lo},      {"last_kernel", groups[hi].name},
                        {"last_kernel_id", hi}, {"resident", true},
                        {"offset", rb.lx},      {"bytes", rb.bytes},
                        {"cores", cores},       {"live", live}};
    plant(b, err, cfg.stick_bytes);
    buffers.push_back(b);
  }
  nlohmann::json peaks = nlohmann::json::array();
  for (auto& p : peak) peaks.push_back(p);
  const int64_t usable = cfg.lx_usable_bytes();
  const int64_t runtime_at = cfg.lx_size_bytes - cfg.lx_reserve_bytes;
  nlohmann::json reserved = nlohmann::json::array();
  if (runtime_at > usable)
    reserved.push_back({{"what", "back end"}, {"offset", usable}, {"bytes", runtime_at - usable}});
  if (cfg.lx_reserve_bytes > 0)
    reserved.push_back(
        {{"what", "runtime"}, {"offset", runtime_at}, {"bytes", cfg.lx_reserve_bytes}});
  return {{"format", "spyre-lx-plan/1"},
          {"pc",
           "dynamic instruction index: position in the core's expanded instruction stream "
           "(hardware loops unrolled; equals the static pc without loops; traces record it as "
           "\"dyn\" when the stream has loops); live = [core, first_pc, last_pc]"},
          {"usable_bytes", cfg.lx_usable_bytes()},
          {"size_bytes", cfg.lx_size_bytes},
          {"fits", fits},
          {"reserved", reserved},
          {"buffers", buffers},
          {"peak", peaks},
          {"spill_scratch_bytes", spill_scratch_bytes(kernels)},
          {"spills", spills}};
}

uint64_t spill_scratch_bytes(const nlohmann::json& kernels) {
  uint64_t bytes = 0;
  for (const auto& k : kernels)
    if (k.contains("spill_scratch_bytes"))
      bytes = std::max(bytes, k["spill_scratch_bytes"].get<uint64_t>());
  return bytes;
}

}  // namespace spyre::compiler
