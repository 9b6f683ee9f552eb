#pragma once
// Pure layout copies (NCHW <-> NHWC, permute + clone, transposes) lowered as blocked 2-D
// transposes (compiler/lower/transpose.cpp): DMA long contiguous runs of the source into LX,
// transpose each block with one strided SFP copy, DMA long contiguous runs of the destination.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spyre/compiler/kernel.h"

namespace spyre::compiler {

// A node whose body is load -> [to_dtype] -> store, as a batched transpose: element
// (b, p, q) is read at src_off + sum(b_i * src_b_i) + p * src_p + q (q contiguous in the
// source) and written at dst_off + sum(b_i * dst_b_i) + p + q * dst_q (p contiguous in the
// destination). p and q may each merge several loop variables.
struct LayoutCopy {
  std::string src, dst;  // buffers (their storage is addressed by Kernel::dram_addr)
  isa::DType sdt = isa::DType::F16, ddt = isa::DType::F16;
  int64_t src_off = 0, dst_off = 0;
  int64_t P = 1, Q = 1, src_p = 0, dst_q = 0;
  std::vector<int64_t> bsize, src_b, dst_b;  // batch dims, outermost first
};

// The node as a transpose, or nullopt when it is not a pure layout copy that changes which
// dimension is contiguous (a plain copy is left to the loop lowering).
std::optional<LayoutCopy> match_layout_copy(const ir::Graph& g, const ir::Node& n);

// Lowers k.node when it is a layout copy and the blocked transpose is predicted faster than the
// loop lowering (or forced by k.ctx.layout_copy); false leaves the node to lower_loops. Records
// both predictions and the choice in k.report["layout_copy"].
bool lower_layout_copy(Kernel& k);

}  // namespace spyre::compiler
