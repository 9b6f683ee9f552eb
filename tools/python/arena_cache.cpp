// A cache in front of CPython's object arena allocator (arena_cache.h).
#include "arena_cache.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <mutex>
#include <string>

namespace spyre::python {
namespace {

// Freed blocks of up to kMaxBytes, kept for the next request of the same size: at most
// kSlots of them (1 MiB when all are 16 KiB frame-stack chunks); when full, the oldest goes
// back to the allocator below, so sizes not asked for again do not hold the slots. Larger
// blocks (pymalloc's 1 MiB arenas) go straight back, as before.
constexpr size_t kMaxBytes = 64 * 1024;
constexpr size_t kSlots = 64;

struct Block {
  void* ptr;
  size_t size;
};

struct State {
  // CPython calls its arena allocator with the GIL held, except when a thread state is
  // deleted (its frame-stack chunks are freed, PyThreadState_Delete needs no GIL): the lock
  // keeps the list consistent then too. Uncontended, it costs little next to an mmap.
  std::mutex lock;
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
  std::lock_guard<std::mutex> hold(s.lock);
  for (size_t i = s.n; i-- > 0;)
    if (s.free[i].size == size) {
      void* p = s.free[i].ptr;
      std::copy(s.free.begin() + static_cast<std::ptrdiff_t>(i + 1),
                s.free.begin() + static_cast<std::ptrdiff_t>(s.n),
                s.free.begin() + static_cast<std::ptrdiff_t>(i));
      --s.n;
      ++s.stats.reused;
      return p;
    }
  ++s.stats.fresh;
  return s.below.alloc(s.below.ctx, size);
}

void cached_free(void*, void* ptr, size_t size) {
  State& s = state();
  std::lock_guard<std::mutex> hold(s.lock);
  if (size > kMaxBytes) return s.below.free(s.below.ctx, ptr, size);
  if (s.n == kSlots) {  // the oldest goes back
    s.below.free(s.below.ctx, s.free[0].ptr, s.free[0].size);
    std::copy(s.free.begin() + 1, s.free.end(), s.free.begin());
    --s.n;
  }
  s.free[s.n++] = Block{ptr, size};  // oldest first
  ++s.stats.kept;
}

}  // namespace

void install_arena_cache() {
  State& s = state();
  const char* env = std::getenv("SPYRE_SIM_ARENA_CACHE");
  if (s.installed || (env != nullptr && std::string(env) == "off")) return;
#ifdef Py_GIL_DISABLED
  return;  // free-threaded CPython: its allocator is per thread; leave it alone
#endif
  PyObject_GetArenaAllocator(&s.below);
  PyObjectArenaAllocator mine{nullptr, cached_alloc, cached_free};
  PyObject_SetArenaAllocator(&mine);
  s.installed = true;
}

ArenaCacheStats arena_cache_stats() { return state().stats; }

}  // namespace spyre::python
