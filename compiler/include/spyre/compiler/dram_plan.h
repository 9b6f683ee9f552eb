#pragma once
// Device-memory plan: every IR buffer that owns storage gets a stick-aligned region; views
// share their base buffer's region. Intermediates are not reused yet (device memory is large).
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/ir.h"

namespace spyre::compiler {

struct DramRegion {
  std::string storage;  // the buffer that owns the storage
  uint64_t addr = 0;    // byte address of storage element 0
  uint64_t bytes = 0;   // storage span, not padded
};

struct DramPlan {
  std::map<std::string, DramRegion> regions;  // every buffer name, views included
  uint64_t total_bytes = 0;                   // padded to the alignment

  const DramRegion& at(const std::string& buffer) const;  // throws when unknown
  // Start of the spill scratch region, after every buffer (stick-aligned). Loop kernels whose
  // rows do not fit LX spill there (lower/loops_columns.cpp); all kernels start their spills at
  // this address (barriers separate them), so the region's size is the largest kernel's need,
  // known only after lowering: the driver adds it to the program's DRAM size and to_json.
  uint64_t scratch_addr() const { return total_bytes; }
  // Byte address of storage element `elem` of `buffer`'s storage (dtype of the storage owner).
  uint64_t addr(const std::string& buffer, int64_t elem, int64_t elem_bytes) const {
    return at(buffer).addr + static_cast<uint64_t>(elem * elem_bytes);
  }
  // Every storage region; with scratch_bytes > 0 also {buffer: "<spill scratch>", addr, bytes}.
  nlohmann::json to_json(uint64_t scratch_bytes = 0) const;
};

// Alignment is the stick (cfg.stick_bytes, 128 B on Spyre).
DramPlan plan_dram(const ir::Graph& g, const arch::ArchConfig& cfg);

}  // namespace spyre::compiler
