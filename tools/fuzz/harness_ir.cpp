// Fuzz harness: an IR file (JSON). Whatever load_ir accepts must keep the promises ir.h makes
// to every later pass: names resolve, views end in a storage buffer, lengths agree, SSA
// operands are defined before use.
#include <set>

#include "harness.h"
#include "spyre/compiler/ir.h"
#include "spyre/error.h"

namespace spyre::fuzz {
namespace {

using compiler::ir::Graph;
using compiler::ir::Op;

// SSA as ir.h promises it: operands defined earlier in the node (a masked block sees what its
// parent defined before it), a multi-output op defining `<id>.<k>`.
void check_body(const Graph& g, const std::vector<Op>& body, std::set<std::string> defined,
                const std::string& node) {
  for (const auto& op : body) {
    for (const auto& a : op.args)
      if (!defined.count(a)) fail("node " + node + ": operand " + a + " used before defined");
    if (!op.buffer.empty() && !g.find_buffer(op.buffer))
      fail("node " + node + ": body reads unknown buffer " + op.buffer);
    check_body(g, op.body, defined, node);
    if (op.id.empty()) continue;
    defined.insert(op.id);
    for (int k = 0; op.outputs > 1 && k < op.outputs; ++k)
      defined.insert(op.id + "." + std::to_string(k));
  }
}

void check_graph(const Graph& g) {
  for (const auto& b : g.buffers) {
    if (b.size.size() != b.stride.size()) fail("buffer " + b.name + ": size and stride differ");
    if (b.kind == "view") g.storage_of(b.name);  // must end, in a buffer that exists
  }
  for (const auto& in : g.inputs)
    if (!g.find_buffer(in)) fail("unknown input " + in);
  for (const auto& o : g.outputs)
    if (!g.find_buffer(o.buffer)) fail("unknown output " + o.buffer);
  for (const auto& n : g.nodes) {
    for (const auto& o : n.outputs)
      if (!g.find_buffer(o)) fail("node " + n.name + ": unknown output " + o);
    for (const auto& in : n.inputs)
      if (!in.buffer.empty() && !g.find_buffer(in.buffer))
        fail("node " + n.name + ": unknown input " + in.buffer);
    if (n.vars.size() != n.sizes.size() || n.reduce_vars.size() != n.reduce_sizes.size())
      fail("node " + n.name + ": loop variables and sizes differ in length");
    check_body(g, n.body, {}, n.name);
  }
}

}  // namespace

bool ir_json(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  Graph g;
  try {
    g = compiler::ir::load_ir(compiler::ir::parse_ir_json(text, "fuzz.json"), "fuzz.json");
  } catch (const Error&) {
    return false;
  }
  check_graph(g);
  return true;
}

}  // namespace spyre::fuzz
