#pragma once
// LX: a core's scratchpad. Capacity lx_size_bytes; the storage is allocated on first use, so
// timing-only runs and idle cores cost nothing. Bounds are checked by the callers against
// size_bytes() (see env.h check_range) before any access.
#include <cstdint>
#include <vector>

namespace spyre::sim {

class Lx {
 public:
  explicit Lx(int64_t size_bytes) : size_(size_bytes) {}
  int64_t size_bytes() const { return size_; }
  uint8_t* data() {
    if (mem_.empty()) mem_.assign(static_cast<size_t>(size_), 0);
    return mem_.data();
  }

 private:
  int64_t size_;
  std::vector<uint8_t> mem_;
};

}  // namespace spyre::sim
