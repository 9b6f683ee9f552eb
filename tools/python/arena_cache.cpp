// A cache in front of CPython's object arena allocator (arena_cache.h).
#include "arena_cache.h"

#include <array>
#include <cstdlib>
#include <string>

namespace spyre::python {
namespace {

// Freed blocks of up to kMaxBytes, kept for the next request of the same size: at most
// kSlots of them (1 MiB when all are 16 KiB frame-stack chunks). Larger blocks (pymalloc's
// 1 MiB arenas) go straight back to the allocator below, as before.
constexpr size_t kMaxBytes = 64 * 1024;
constexpr size_t kSlots = 64;

struct Block {
  void* ptr;
  size_t size;
};

struct State {
  PyObjectArenaAllocator below{};
  std::array<Block, kSlots> free{};
  size_t n = 0;
  ArenaCacheStats stats;
  bool installed = false;
};

State& state() {
  static State s;
  return s;
}

// Both run with the GIL held (CPython calls its arena allocator only so).
void* cached_alloc(void*, size_t size) {
  State& s = state();
  for (size_t i = s.n; i-- > 0;)
    if (s.free[i].size == size) {
      void* p = s.free[i].ptr;
      s.free[i] = s.free[--s.n];
      ++s.stats.reused;
      return p;
    }
  ++s.stats.fresh;
  return s.below.alloc(s.below.ctx, size);
}

void cached_free(void*, void* ptr, size_t size) {
  State& s = state();
  if (size <= kMaxBytes && s.n < kSlots) {
    s.free[s.n++] = Block{ptr, size};
    ++s.stats.kept;
    return;
  }
  s.below.free(s.below.ctx, ptr, size);
}

}  // namespace

void install_arena_cache() {
  State& s = state();
  const char* env = std::getenv("SPYRE_SIM_ARENA_CACHE");
  if (s.installed || (env != nullptr && std::string(env) == "off")) return;
  PyObject_GetArenaAllocator(&s.below);
  PyObjectArenaAllocator mine{nullptr, cached_alloc, cached_free};
  PyObject_SetArenaAllocator(&mine);
  s.installed = true;
}

ArenaCacheStats arena_cache_stats() { return state().stats; }

}  // namespace spyre::python
