#pragma once
// A fused matmul epilogue: a pointwise node (fuse.h) mapped onto the matmul's output grid, so
// each output tile (rows i, cols j) runs it on the SFP before the tile is stored.
#include <cstdint>
#include <string>
#include <vector>

#include "spyre/arch/arch.h"
#include "spyre/compiler/ir.h"
#include "spyre/compiler/tile_program.h"

namespace spyre::compiler {

// Element (i, j) of an access is at storage offset + i*rs + j*cs.
struct TileAccess {
  int64_t offset = 0, rs = 0, cs = 0;
};

struct Epilogue {
  TileProgram p;                // over rows i (the output's M) and cols j (its N)
  std::vector<TileAccess> acc;  // per p.accesses
  std::string out_storage;      // loads of this buffer are the matmul's output tile
  std::vector<bool> is_const;   // per value: computed once per core (constants)
  std::vector<int> slot;        // per value: LX slot, -1 for constants and the output tile
  int slots = 0;                // slots per tile (each (tm + 2) x tn fp32, two per tile pair)
};

// The node's iteration space must enumerate the output [M, N] (contiguous, row-major) in
// order: every load of `out_buffer` reads element p at iteration p. Other accesses must be
// affine in (i, j) with column stride 0 or 1. Throws spyre::Error(where, why) otherwise.
Epilogue plan_epilogue(const ir::Graph& g, const ir::Node& ep, const std::string& out_buffer,
                       int64_t M, int64_t N, const arch::ArchConfig& cfg, const std::string& where);

}  // namespace spyre::compiler
