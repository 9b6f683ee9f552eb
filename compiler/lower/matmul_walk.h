// Private to compiler/lower/: the order in which each core of a matmul walks its block (tiles,
// K steps, which operand tiles it loads into which LX slot). Used by matmul.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "spyre/compiler/divide.h"

namespace spyre::compiler {

// One K step of one output tile on one core.
struct MatmulStep {
  int64_t b, m0, m1, n0, n1, k0, k1;
  bool first_k, last_k;
  int64_t ctile;  // output tile number on this core
  bool load_a = false, load_b = false, a_last = false, b_last = false;
  int64_t a_idx = 0, b_idx = 0, a_count = 0, b_count = 0;  // tile sequence numbers
  int64_t a_slot = 0, b_slot = 0;                          // LX slot of the A / B tile
  int64_t b_pieces = 1;  // the B tile is loaded in this many pieces (lead group, divide.h)
};

// A core's block (grid position and ranges) and its steps in order.
struct MatmulCoreWork {
  int64_t ib = 0, im = 0, in = 0, ik = 0;
  int64_t b0 = 0, b1 = 0, m0 = 0, m1 = 0, n0 = 0, n1 = 0, k0 = 0, k1 = 0;
  std::vector<MatmulStep> steps;
};

// The walk of every core of `grid` over a [Bt, M, K] x [Bt, K, N] matmul: tiles m, n, k (n,
// m, k for a B panel, its first grid.lead m tiles K-outer), n tiles rotated by
// matmul_n_rotation; a tile already in its slot (an
// A tile over several n tiles when K is one step, a panel's tiles) is not loaded again.
std::vector<MatmulCoreWork> matmul_walk(const MatmulGrid& grid, int64_t Bt, int64_t M, int64_t N,
                                        int64_t K);

}  // namespace spyre::compiler
