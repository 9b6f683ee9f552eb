#include "spyre/compiler/kernel.h"

#include <algorithm>

#include "spyre/error.h"

namespace spyre::compiler {

int64_t LxArena::alloc(const std::string& name, int64_t bytes) {
  int64_t at = next_;
  int64_t padded = (std::max<int64_t>(bytes, 1) + align_ - 1) / align_ * align_;
  // compiler.debug.lx_plan_error=overlap: a deliberately broken allocator (the second buffer
  // reuses the first one's bytes while both are live); the report states it truthfully.
  if (error_ == LxPlanError::Overlap && plan_.size() == 1) at = plan_[0]["offset"].get<int64_t>();
  next_ = std::max(next_, at + padded);
  plan_.push_back({{"buffer", name}, {"offset", at}, {"bytes", padded}});
  return at;
}

bool LoopDivision::loads_as(const std::string& storage, const BufferAccess& place) const {
  bool any = false;
  for (const auto& a : accesses) {
    if (a.storage != storage) continue;
    if (a.store || !a.placeable || !a.same_place(place)) return false;
    any = true;
  }
  return any;
}

int64_t LoopDivision::slice_bytes(const BufferAccess& a, int64_t stick) const {
  int64_t rows = 0;
  for (const auto& [lo, hi] : core_rows) rows = std::max(rows, hi - lo);
  const int64_t bytes = rows * a.cols * isa::dtype_size_bytes(a.dt);
  return (bytes + stick - 1) / stick * stick;
}

void Kernel::unsupported(const std::string& what) const {
  throw Error(g.file + ": " + ir::describe(node), what);
}

uint64_t Kernel::dram_addr(const std::string& buffer, int64_t elem) const {
  const auto& owner = g.storage_of(buffer);
  return dram.addr(buffer, elem, isa::dtype_size_bytes(owner.dtype));
}

}  // namespace spyre::compiler
