// Nodes over zero-size tensors (empty_nodes.h).
#include "spyre/compiler/empty_nodes.h"

#include <string>
#include <vector>

#include "spyre/compiler/graph_edit.h"
#include "spyre/compiler/host_call.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

int64_t numel(const std::vector<int64_t>& size) {
  int64_t n = 1;
  for (auto s : size) n *= s;
  return n;
}

// A pointwise node that writes zeros over `out` (a matmul with K = 0: its sum is over nothing).
ir::Node zero_fill(const ir::Graph& g, const ir::Node& n, const std::string& out) {
  const ir::Buffer& b = g.buffer(out);
  ir::Node z;
  z.name = n.name, z.kind = "pointwise", z.outputs = {out}, z.origins = n.origins, z.aten = n.aten;
  z.source = n.source;
  ir::Op zero;
  zero.id = "v0", zero.op = "constant", zero.dtype = b.dtype, zero.value = 0;
  ir::Op store;
  store.op = "store", store.args = {"v0"}, store.buffer = out;
  ir::Affine at;
  std::string expr = "0";
  for (size_t d = 0; d < b.size.size(); ++d) {
    const std::string v = "x" + std::to_string(d);
    z.vars.push_back(v);
    z.sizes.push_back(b.size[d]);
    at.coeffs[v] = b.stride[d];
    expr += " + " + std::to_string(b.stride[d]) + "*" + v;
  }
  store.index = ir::Index{expr, at};
  z.body = {zero, store};
  return z;
}

// addmm with K = 0: beta * bias broadcast over `out` (the product is a sum over nothing; beta = 0
// gives zeros whatever the bias holds, as torch).
ir::Node bias_fill(const ir::Graph& g, const ir::Node& n, const std::string& out) {
  ir::Node z = zero_fill(g, n, out);
  const ir::Buffer& b = g.buffer(out);
  double beta = 1.0;
  if (n.kwargs.is_object() && n.kwargs.contains("beta") && n.kwargs["beta"].is_number())
    beta = n.kwargs["beta"].get<double>();
  if (beta == 0.0 || n.inputs.empty()) return z;
  const ir::TensorView& bias = n.inputs[0];
  if (bias.size.size() > b.size.size())
    throw Error(g.file + ": " + ir::describe(n), "addmm bias of higher rank than its output");
  ir::Affine at;  // the bias's dims align with the output's last ones; size-1 dims broadcast
  at.offset = bias.offset;
  const size_t skip = b.size.size() - bias.size.size();
  for (size_t d = 0; d < bias.size.size(); ++d)
    if (bias.size[d] != 1) at.coeffs["x" + std::to_string(skip + d)] = bias.stride[d];
  ir::Op load, scale, mul;
  load.id = "v0", load.op = "load", load.buffer = bias.buffer, load.dtype = bias.dtype;
  load.index = graph_edit::index_of(at);
  scale.id = "v1", scale.op = "constant", scale.dtype = b.dtype, scale.value = beta;
  mul.id = "v2", mul.op = "mul", mul.args = {"v0", "v1"}, mul.dtype = b.dtype;
  ir::Op store = z.body.back();
  store.args = {"v2"};
  z.body = {load, scale, mul, store};
  return z;
}

bool is_gemm(const ir::Node& n) {
  return n.kind == "extern" &&
         (n.kernel == "extern_kernels.mm" || n.kernel == "extern_kernels.bmm");
}

}  // namespace

void drop_empty_nodes(ir::Graph& g, bool host_fallback) {
  std::vector<ir::Node> kept;
  for (auto& n : g.nodes) {
    bool produces = n.outputs.empty();
    // A size a data-dependent op computes is kept even when its bound holds no element
    // (nonzero of a 0-d tensor: [u0, 0]): the host call still finds u0.
    for (const auto& o : n.outputs)
      produces = produces || numel(g.buffer(o).size) > 0 || !g.buffer(o).symbolic.is_null();
    if (!produces) continue;
    bool empty_in = numel(n.reduce_sizes) == 0;
    for (const auto& t : n.inputs) empty_in = empty_in || numel(t.size) == 0;
    if (empty_in && is_gemm(n) && n.outputs.size() == 1) {
      kept.push_back(zero_fill(g, n, n.outputs[0]));
      continue;
    }
    const bool empty_product =
        n.inputs.size() == 3 && (numel(n.inputs[1].size) == 0 || numel(n.inputs[2].size) == 0);
    if (n.kind == "extern" && n.kernel == "extern_kernels.addmm" && empty_product &&
        numel(n.inputs[0].size) > 0 && n.outputs.size() == 1) {
      kept.push_back(bias_fill(g, n, n.outputs[0]));
      continue;
    }
    if (empty_in && !runs_on_host(n, host_fallback))
      throw Error(g.file + ": " + ir::describe(n),
                  "unsupported: a non-empty result from an operand with zero elements (a "
                  "reduction or matmul over an empty dimension)");
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
}

}  // namespace spyre::compiler
