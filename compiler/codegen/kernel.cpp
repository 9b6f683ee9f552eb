#include "spyre/compiler/kernel.h"

#include "spyre/error.h"

namespace spyre::compiler {

int64_t LxArena::alloc(const std::string& name, int64_t bytes) {
  int64_t at = next_;
  int64_t padded = (std::max<int64_t>(bytes, 1) + align_ - 1) / align_ * align_;
  next_ += padded;
  plan_.push_back({{"buffer", name}, {"offset", at}, {"bytes", padded}});
  return at;
}

void Kernel::unsupported(const std::string& what) const {
  throw Error(g.file + ": " + ir::describe(node), what);
}

uint64_t Kernel::dram_addr(const std::string& buffer, int64_t elem) const {
  const auto& owner = g.storage_of(buffer);
  return dram.addr(buffer, elem, isa::dtype_size_bytes(owner.dtype));
}

}  // namespace spyre::compiler
