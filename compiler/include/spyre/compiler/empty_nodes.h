#pragma once
// Zero-size tensors (OpInfo's empty samples, a slice of length 0), before any other pass: a node
// none of whose outputs holds an element computes nothing and is dropped. A matmul with K = 0
// becomes a node that writes zeros, an addmm one that writes beta * bias; a host call
// (host_call.h, under `host_fallback`) runs as eager does; any other node that produces
// elements from an empty operand (a sum over zero elements) is refused by name.
#include "spyre/compiler/ir.h"

namespace spyre::compiler {

void drop_empty_nodes(ir::Graph& g, bool host_fallback);

}  // namespace spyre::compiler
