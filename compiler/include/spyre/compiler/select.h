#pragma once
// Selection ops that Inductor leaves as fallback kernels (no lowering of its own), run on the
// SFP with the ordinary ISA: aten.topk (values and int64 indices, largest/smallest, any dim),
// aten.sort / sort.stable, aten.kthvalue, aten.median.dim and aten.median (all elements; the
// lower median, torch's rule for even counts). No sort instruction:
// a row's elements are taken one per round in torch's order (NaN first for largest, last for
// smallest; equal values by ascending index), each round a masked rmax/rmin, an argmax of
// the matching candidates and a one-hot mask that removes the taken column (lower/select.cpp).
#include <string>

namespace spyre::compiler {

struct Kernel;

// True when a fallback node calling `op_overload` (e.g. "aten.topk.default") has a lowering
// here; its MultiOutput nodes are then views of the tuple's elements, not kernels.
bool select_lowers(const std::string& op_overload);

// Lowers the fallback node k.node; the MultiOutput nodes that read its tuple name the output
// buffers (tuple element 0: values, 1: indices). Throws spyre::Error naming the node and its
// source line for what it does not accept (non-float inputs, layouts it cannot walk, nested
// tuples).
void lower_select(Kernel& k);

}  // namespace spyre::compiler
