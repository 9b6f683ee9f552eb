#pragma once
// The Inductor IR (compiler/frontend/SCHEMA.md v1) as C++ values, loaded and validated from
// JSON. Every later pass may assume what `load_ir` checked: the document matches the JSON Schema
// (compiler/frontend/schema/ir-v1.schema.json, compiled into the library), names resolve,
// lengths agree, SSA operands are defined before use, dtypes are known.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/compiler/json_schema.h"
#include "spyre/isa/dtype.h"

namespace spyre::compiler::ir {

struct Affine {
  int64_t offset = 0;
  std::map<std::string, int64_t> coeffs;  // absent variable: coefficient 0
  int64_t coeff(const std::string& var) const {
    auto it = coeffs.find(var);
    return it == coeffs.end() ? 0 : it->second;
  }
};

struct Index {
  std::string expr;
  std::optional<Affine> affine;  // null when the expression is not affine
};

struct Buffer {
  std::string name, kind;  // kind: input, parameter, constant, intermediate, output, view
  isa::DType dtype = isa::DType::F16;
  std::vector<int64_t> size, stride;
  int64_t offset = 0;
  std::string view_of;  // empty unless kind == view
  bool tuple = false;   // dtype null: a fallback's tuple (MultiOutput nodes read it)
  // A size a data-dependent op computes (SCHEMA.md `symbolic`): the expressions over u0, u1,
  // ... and their bounds; null otherwise. size/stride/offset hold the upper-bound layout.
  nlohmann::json symbolic;
  int64_t storage_elems() const;  // offset + sum((size-1)*stride) + 1, 0 when empty
};

// A layout over a buffer's storage: an extern kernel's input, an output or a node layout.
struct TensorView {
  std::string buffer;  // empty for a node's `layout`
  isa::DType dtype = isa::DType::F16;
  std::vector<int64_t> size, stride;
  int64_t offset = 0;
  nlohmann::json symbolic;  // as Buffer::symbolic
};

struct Op {
  std::string id;  // empty for store / store_reduction
  std::string op;
  std::vector<std::string> args;
  std::optional<isa::DType> dtype;
  std::string buffer;
  std::optional<Index> index;
  std::string mode;
  nlohmann::json value;  // constant value; masked fill value; indirect_indexing size
  std::string reduction_type;
  int outputs = 1;
  std::vector<Op> body;  // masked sub-block
};

struct Node {
  std::string name, kind;  // pointwise, reduction, extern, fallback
  std::vector<std::string> outputs, origins, aten;
  std::string source;  // empty when null
  // pointwise / reduction
  std::vector<std::string> vars, reduce_vars;
  std::vector<int64_t> sizes, reduce_sizes;
  std::string reduction_type;
  std::vector<Op> body;
  // extern / fallback
  std::string kernel, op_overload;
  std::vector<TensorView> inputs;
  nlohmann::json constant_args = nlohmann::json::array();
  nlohmann::json kwargs = nlohmann::json::object();
  TensorView layout;
  std::vector<int64_t> indices;  // MultiOutput: the tuple element it holds
  nlohmann::json call;           // FallbackKernel: the ATen call (SCHEMA.md `call`), else null
  // Not in the IR: set by the graph-rewriting passes (ibm_schedule.h) on nodes that must be
  // lowered over their own 2-D space [vars0, vars1] rather than a merged one, so that the
  // steps of one split node divide their rows alike (and their results can stay in LX).
  bool keep_space = false;
  // Not in the IR: set on pointwise nodes that a pass wrote for one op of the graph
  // (column_reduction.h's row adds: a reduction as element-wise combines); the IBM schedule
  // keeps such a node one step.
  bool one_op = false;
};

struct Graph {
  std::string file;  // for messages
  std::string torch_version, stage, name;
  std::vector<Buffer> buffers;
  std::vector<std::string> inputs;
  std::vector<TensorView> outputs;  // `buffer` set
  std::vector<Node> nodes;

  const Buffer& buffer(const std::string& name) const;  // throws when unknown
  const Buffer* find_buffer(const std::string& name) const;
  // Buffer name -> position in `buffers`, of the first `indexed` buffers (load_ir fills it;
  // names are unique). Buffers the passes append later are found past `indexed`.
  std::unordered_map<std::string, size_t> buffer_index;
  size_t indexed = 0;
  void index_buffers();
  // The buffer that owns the storage `name` lives in (follows view_of).
  const Buffer& storage_of(const std::string& name) const;
};

// Validates `j` against the IR schema, then loads it and checks what the schema cannot say
// (references between buffers, views, SSA operands). Throws spyre::Error on bad IR, naming the
// file, the node or buffer and the field:
//   "graph.json: node op3: field 'sizes[1]': expected integer, got string"
//   "graph.json: node op0: body op v1: field 'index': missing"
//   "graph.json: buffer buf0: field 'layout': unknown field (the IR schema does not allow it here)"
// A graph with a fallback node (an op Inductor could not lower) that spyre-sim has no lowering
// for (select.h) gives "unsupported op", naming the ATen op and the user's source line, unless
// `host_fallback` (compiler.host_fallback=on: such nodes run on the host, host_call.h).
struct LoadOptions {
  bool host_fallback = false;
};
Graph load_ir(const nlohmann::json& j, const std::string& file = "<ir>",
              const LoadOptions& opts = {});
// The JSON text of an IR file; malformed JSON is a spyre::Error naming `file` and the position.
nlohmann::json parse_ir_json(const std::string& text, const std::string& file);

// The IR's JSON Schema, compiled into the library at build time: its text and the compiled form.
const char* ir_schema_text();
const json_schema::Schema& ir_schema();

// "file: node op3" -- the prefix of every message about a node.
std::string where(const Graph& g, const Node& n);
// "node op3 (aten.addmm.default, at model.py:17)" -- for unsupported-op messages.
std::string describe(const Node& n);

}  // namespace spyre::compiler::ir
