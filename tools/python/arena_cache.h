#pragma once
// CPython 3.11 keeps each thread's frame data stack in 16 KiB chunks that it takes from the
// object arena allocator (mmap) when a call needs a new one and returns (munmap) as soon as
// the call returns. A call chain that goes up and down across a chunk boundary thus pays an
// mmap, a munmap and fresh zeroed pages per call: torch.compile's tracing and Inductor's
// passes do that a lot (strace of `spyre_sim.llm.capture_graphs` on a 4-layer Granite-3.3-8B
// decode graph: 107,689 mmaps of 16 KiB). install_arena_cache() puts a small free list of such
// blocks in front of the allocator CPython has (PyObject_SetArenaAllocator, the documented
// hook), so a chunk freed and asked for again is reused. Every block still comes from that
// allocator and goes back to it, later (up to 64 blocks of at most 64 KiB stay on the list
// until the process ends). Nothing Python computes changes.
#include <Python.h>

#include <cstdint>

namespace spyre::python {

struct ArenaCacheStats {
  uint64_t fresh = 0;   // requests passed to CPython's own allocator
  uint64_t reused = 0;  // requests served from the free list
  uint64_t kept = 0;    // frees kept on the free list
};

// Idempotent; call with the GIL held (module import). SPYRE_SIM_ARENA_CACHE=off leaves CPython's
// allocator alone (for measuring what the cache saves: tools/bench/llm).
void install_arena_cache();
ArenaCacheStats arena_cache_stats();

}  // namespace spyre::python
