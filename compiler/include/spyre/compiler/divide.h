#pragma once
// Work division: how a kernel's iteration space is cut across cores (and corelets).
#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"

namespace spyre::compiler {

// [lo, hi) ranges; `parts` balanced pieces whose boundaries are multiples of `align` (except
// the end). Empty pieces are dropped, so fewer than `parts` may come back.
std::vector<std::pair<int64_t, int64_t>> split_range(int64_t n, int64_t parts, int64_t align = 1);

struct MatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t a_bytes = 2, b_bytes = 2, out_bytes = 2;  // element sizes
  // DRAM layout: rows of an A block are contiguous with each other (row stride == K); B is
  // stored [n, k] (a linear layer's weight); B's rows are contiguous ([k,n]: stride N; [n,k]:
  // stride K). Decides how large the DMA requests are.
  bool a_contiguous = true, b_transposed = false, b_contiguous = true;
};

// The output is cut into a gm x gn grid of blocks (per batch); blocks go to cores round-robin.
// Chosen to minimise max(PT cycles of the busiest core, chip DRAM bytes / bandwidth, the
// busiest core's DMA time); ties go to fewer DRAM bytes, then fewer cores.
struct MatmulGrid {
  int64_t gm = 1, gn = 1, mb = 0, nb = 0;  // grid and block shape
  int64_t blocks = 0, cores_used = 0, blocks_per_core = 0;
  int64_t predicted_cycles = 0, dram_bytes = 0;
  nlohmann::json to_json() const;
};
MatmulGrid choose_matmul_grid(const MatmulShape& s, const arch::ArchConfig& cfg);

}  // namespace spyre::compiler
