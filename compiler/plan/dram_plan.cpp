#include "spyre/compiler/dram_plan.h"

#include "spyre/error.h"

namespace spyre::compiler {

const DramRegion& DramPlan::at(const std::string& buffer) const {
  auto it = regions.find(buffer);
  if (it == regions.end()) throw Error("dram plan", "no region for buffer '" + buffer + "'");
  return it->second;
}

nlohmann::json DramPlan::to_json(uint64_t scratch_bytes) const {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [name, r] : regions)
    if (name == r.storage) j.push_back({{"buffer", name}, {"addr", r.addr}, {"bytes", r.bytes}});
  if (scratch_bytes > 0)
    j.push_back(
        {{"buffer", "<spill scratch>"}, {"addr", scratch_addr()}, {"bytes", scratch_bytes}});
  return j;
}

DramPlan plan_dram(const ir::Graph& g, const arch::ArchConfig& cfg) {
  const uint64_t align = static_cast<uint64_t>(cfg.stick_bytes);
  DramPlan p;
  uint64_t next = 0;
  for (const auto& b : g.buffers) {
    if (b.kind == "view") continue;
    // Views may reach past their base's own layout; size the storage for all of them.
    int64_t elems = b.storage_elems();
    for (const auto& v : g.buffers)
      if (v.kind == "view" && &g.storage_of(v.name) == &b)
        elems = std::max(elems, v.storage_elems());
    uint64_t bytes = static_cast<uint64_t>(elems) * isa::dtype_size_bytes(b.dtype);
    p.regions[b.name] = DramRegion{b.name, next, bytes};
    next += (std::max<uint64_t>(bytes, 1) + align - 1) / align * align;
  }
  for (const auto& b : g.buffers)
    if (b.kind == "view") {
      const auto& base = g.storage_of(b.name);
      p.regions[b.name] = p.regions.at(base.name);
    }
  p.total_bytes = next;
  return p;
}

}  // namespace spyre::compiler
