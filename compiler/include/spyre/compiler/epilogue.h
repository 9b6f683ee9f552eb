#pragma once
// A fused matmul epilogue: a pointwise node (fuse.h) mapped onto the matmul's output grid, so
// each output tile (rows i, cols j) runs it on the SFP before the tile is stored.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "spyre/arch/arch.h"
#include "spyre/compiler/ir.h"
#include "spyre/compiler/kernel.h"
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

// The LX side of an epilogue on a producer's output tiles of at most tm x tn (two tile
// parities): value slots ((tm + 2) x tn fp32 each: rows tm and tm + 1 hold corelet 0's and 1's
// row-invariant values), constants, and where the producer leaves each parity's output tile
// (row stride tn). Used by the convolution (conv.cpp); the matmul has its own copy
// (matmul_output.cpp).
struct EpilogueLx {
  const Epilogue* ep = nullptr;
  int64_t tm = 0, tn = 0;
  std::vector<std::array<int64_t, 2>> slot;  // per epilogue slot, per parity
  std::vector<int64_t> konst;                // per value: LX of a constant, or -1
  std::array<Tile, 2> out{};                 // the producer's output tile, per parity
};
int64_t epilogue_lx_bytes(const Epilogue& ep, int64_t tm, int64_t tn);
EpilogueLx alloc_epilogue_lx(LxArena& lx, const Epilogue& ep, int64_t tm, int64_t tn,
                             const std::array<Tile, 2>& out);
// Once per core, before any tile: the constants (corelet 0).
void emit_epilogue_constants(Emitter& em, const EpilogueLx& e);
// For corelet cl's rows [h0, h0 + nr) x nt cols of the tile at output (m0, n0), parity par:
// the loads of its inputs (issue early, with the producer's loads), then its ops and stores
// (after the producer's output tile is final).
void emit_epilogue_loads(const Kernel& k, Emitter& em, const EpilogueLx& e, int par, int cl,
                         int64_t m0, int64_t n0, int64_t h0, int64_t nr, int64_t nt);
void emit_epilogue_ops(const Kernel& k, Emitter& em, const EpilogueLx& e, int par, int cl,
                       int64_t m0, int64_t n0, int64_t h0, int64_t nr, int64_t nt);

}  // namespace spyre::compiler
