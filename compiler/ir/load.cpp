// Loading and validating SCHEMA.md v1: the JSON Schema first (json_schema.cpp, the schema file
// compiled in), then what it cannot say. Every check names file, node and field.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "load_refusals.h"
#include "spyre/compiler/ir.h"
#include "spyre/compiler/ir_schema_text.h"
#include "spyre/error.h"

namespace spyre::compiler::ir {
namespace {

using nlohmann::json;

// An integer JSON number that int64 holds (an unsigned one above 2^63 - 1 would wrap).
bool is_int64(const json& v) {
  return v.is_number_integer() &&
         (!v.is_number_unsigned() ||
          v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
}

// A JSON object together with the prefix naming where it is ("g.json: node op3").
std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

struct Obj {
  const json& j;
  std::string where;
  std::string context;  // appended to a dtype refusal: the ATen ops behind the value

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(where + ": field '" + key + "'", what);
  }
  const json& at(const std::string& key) const {
    if (!j.is_object()) throw Error(where, "expected an object");
    auto it = j.find(key);
    if (it == j.end()) fail(key, "missing");
    return *it;
  }
  bool has(const std::string& key) const { return j.is_object() && j.contains(key); }
  bool has_value(const std::string& key) const { return has(key) && !j.at(key).is_null(); }
  std::string str(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(key, "expected string");
    return v.get<std::string>();
  }
  std::string str_or_null(const std::string& key) const {
    if (!has_value(key)) return {};
    return str(key);
  }
  int64_t integer(const std::string& key) const {
    const json& v = at(key);
    if (!is_int64(v)) fail(key, "expected int");
    return v.get<int64_t>();
  }
  std::vector<int64_t> ints(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_array()) fail(key, "expected list of int");
    std::vector<int64_t> out;
    for (const auto& e : v) {
      if (!is_int64(e)) fail(key, "expected list of int");
      out.push_back(e.get<int64_t>());
    }
    return out;
  }
  std::vector<std::string> strs(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_array()) fail(key, "expected list of string");
    std::vector<std::string> out;
    for (const auto& e : v) {
      if (!e.is_string()) fail(key, "expected list of string");
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  const json& list(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_array()) fail(key, "expected list");
    return v;
  }
  isa::DType dtype(const std::string& key) const {
    std::string s = str(key);
    try {
      return isa::dtype_from_name(s);
    } catch (const Error&) {
      fail(key, "dtype '" + s + "': the chip has no such type (it has float16, bfloat16, " +
                    "float32, int8, int32 and bool; int64 for indices)" +
                    (context.empty() ? "" : "; " + context));
    }
  }
};

void check_layout(const Obj& o, const std::vector<int64_t>& size,
                  const std::vector<int64_t>& stride, int64_t offset) {
  if (size.size() != stride.size())
    o.fail("stride", "has " + std::to_string(stride.size()) + " entries for " +
                         std::to_string(size.size()) + " sizes");
  for (auto s : size)
    if (s < 0) o.fail("size", "expected sizes >= 0");
  if (offset < 0) o.fail("offset", "expected offset >= 0");
  // Element count and storage extent (offset + sum (size - 1) |stride| + 1) in bytes, at the
  // widest element (8 bytes), must fit in 64 bits: every later size computation relies on it.
  int64_t numel = 1, extent = offset, bytes = 0;
  bool overflow = false;
  for (size_t d = 0; d < size.size(); ++d) {
    int64_t step = 0;
    const int64_t st = stride[d] < 0 ? -stride[d] : stride[d];
    overflow = overflow || __builtin_mul_overflow(numel, size[d], &numel) ||
               (size[d] > 0 && (__builtin_mul_overflow(size[d] - 1, st, &step) ||
                                __builtin_add_overflow(extent, step, &extent)));
  }
  overflow = overflow || __builtin_add_overflow(extent, 1, &extent) ||
             __builtin_mul_overflow(extent, 8, &bytes);
  if (overflow) o.fail("size", "the tensor's byte count overflows 64 bits");
}

TensorView load_view(const Obj& o, bool with_buffer) {
  TensorView t;
  if (with_buffer) t.buffer = o.str("buffer");
  t.dtype = o.dtype("dtype");
  t.size = o.ints("size");
  t.stride = o.ints("stride");
  t.offset = o.integer("offset");
  check_layout(o, t.size, t.stride, t.offset);
  if (o.has_value("symbolic")) t.symbolic = o.at("symbolic");
  return t;
}

Index load_index(const Obj& op, const std::string& key) {
  Obj o{op.at(key), op.where + ": field '" + key + "'"};
  Index ix;
  ix.expr = o.str("expr");
  if (o.has_value("affine")) {
    Obj a{o.at("affine"), o.where + ": field 'affine'"};
    Affine af;
    af.offset = a.integer("offset");
    const json& c = a.at("coeffs");
    if (!c.is_object()) a.fail("coeffs", "expected object of int");
    for (auto it = c.begin(); it != c.end(); ++it) {
      if (!is_int64(it.value())) a.fail("coeffs", "expected object of int");
      af.coeffs[it.key()] = it.value().get<int64_t>();
    }
    ix.affine = af;
  }
  return ix;
}

Op load_op(const json& j, const std::string& node_where, size_t pos, const std::string& ops) {
  Obj o{j, node_where + ": body[" + std::to_string(pos) + "]", ops};
  if (!j.is_object()) throw Error(o.where, "expected an object");
  Op op;
  op.op = o.str("op");
  if (o.has_value("id")) {
    op.id = o.str("id");
    o.where = node_where + ": body op " + op.id;
  }
  op.args = o.has("args") ? o.strs("args") : std::vector<std::string>{};
  if (o.has_value("dtype")) op.dtype = o.dtype("dtype");
  const bool memory = op.op == "load" || op.op == "store" || op.op == "store_reduction";
  if (memory) op.buffer = o.str("buffer");
  if (memory || op.op == "index_expr") op.index = load_index(o, "index");
  if (op.op != "store" && op.op != "store_reduction" && op.op != "check_bounds" && op.id.empty())
    o.fail("id", "missing for op '" + op.op + "'");
  if (op.op == "store" || op.op == "store_reduction") {
    if (op.args.size() != 1) o.fail("args", "expected one value to store");
    op.mode = o.str_or_null("mode");
  }
  if (op.op == "constant" || op.op == "masked") op.value = o.at("value");
  if (op.op == "indirect_indexing" && o.has_value("size")) op.value = o.integer("size");
  // Results `<id>.<k>`: a Welford reduction's three, frexp's mantissa and exponent.
  op.outputs = o.has_value("outputs") ? static_cast<int>(o.integer("outputs")) : 1;
  if (op.op == "reduction") {
    op.reduction_type = o.str("reduction_type");
    if (op.args.empty()) o.fail("args", "expected the reduced value");
  }
  if (op.op == "to_dtype" && !op.dtype) o.fail("dtype", "missing (the target dtype)");
  if (op.op == "masked") {
    const json& b = o.list("body");
    for (size_t i = 0; i < b.size(); ++i) op.body.push_back(load_op(b[i], o.where, i, ops));
  }
  return op;
}

// SSA: every operand is defined earlier (or is a multi-output result `<id>.<k>`).
void check_ssa(const std::vector<Op>& body, const std::string& node_where,
               std::set<std::string>& defined) {
  for (size_t i = 0; i < body.size(); ++i) {
    const Op& op = body[i];
    std::string w =
        node_where + ": body op " + (op.id.empty() ? "[" + std::to_string(i) + "]" : op.id);
    for (const auto& a : op.args)
      if (!defined.count(a))
        throw Error(w + ": field 'args'", "operand '" + a + "' is not defined before use");
    if (op.op == "masked") {
      std::set<std::string> inner = defined;
      check_ssa(op.body, w, inner);
    }
    if (!op.id.empty()) {
      defined.insert(op.id);
      for (int k = 0; k < op.outputs && op.outputs > 1; ++k)
        defined.insert(op.id + "." + std::to_string(k));
    }
  }
}

Node load_node(const json& j, const std::string& file, size_t pos, const Graph& g) {
  Obj o{j, file + ": nodes[" + std::to_string(pos) + "]"};
  if (!j.is_object()) throw Error(o.where, "expected an object");
  Node n;
  n.name = o.str("name");
  o.where = file + ": node " + n.name;
  n.kind = o.str("kind");
  n.outputs = o.strs("outputs");
  n.origins = o.has("origins") ? o.strs("origins") : std::vector<std::string>{};
  n.aten = o.has("aten") ? o.strs("aten") : std::vector<std::string>{};
  n.source = o.str_or_null("source");
  for (const auto& b : n.outputs)
    if (!g.find_buffer(b)) o.fail("outputs", "unknown buffer '" + b + "'");
  if (n.kind == "pointwise" || n.kind == "reduction") {
    n.vars = o.strs("vars");
    n.sizes = o.ints("sizes");
    if (n.vars.size() != n.sizes.size()) o.fail("sizes", "expected one size per entry of 'vars'");
    n.reduce_vars = o.has("reduce_vars") ? o.strs("reduce_vars") : std::vector<std::string>{};
    n.reduce_sizes = o.has("reduce_sizes") ? o.ints("reduce_sizes") : std::vector<int64_t>{};
    if (n.reduce_vars.size() != n.reduce_sizes.size())
      o.fail("reduce_sizes", "expected one size per entry of 'reduce_vars'");
    for (auto s : n.sizes)
      if (s < 0) o.fail("sizes", "expected sizes >= 0");
    for (auto s : n.reduce_sizes)
      if (s < 0) o.fail("reduce_sizes", "expected sizes >= 0");
    n.reduction_type = o.str_or_null("reduction_type");
    if (n.kind == "reduction" && n.reduction_type.empty())
      o.fail("reduction_type", "missing for a reduction node");
    const json& body = o.list("body");
    const std::string ops = n.aten.empty() ? "" : "from " + join(n.aten);
    for (size_t i = 0; i < body.size(); ++i) n.body.push_back(load_op(body[i], o.where, i, ops));
    std::set<std::string> defined;
    check_ssa(n.body, o.where, defined);
    std::function<void(const std::vector<Op>&)> check_buffers = [&](const std::vector<Op>& ops) {
      for (const auto& op : ops) {
        if (!op.buffer.empty() && !g.find_buffer(op.buffer))
          throw Error(o.where + ": body op " + (op.id.empty() ? op.op : op.id) + ": field 'buffer'",
                      "unknown buffer '" + op.buffer + "'");
        check_buffers(op.body);
      }
    };
    check_buffers(n.body);
  } else if (n.kind == "extern" || n.kind == "fallback") {
    n.kernel = o.str_or_null("kernel");
    n.op_overload = o.str_or_null("op_overload");
    if (o.has_value("inputs")) {
      const json& ins = o.list("inputs");
      for (size_t i = 0; i < ins.size(); ++i) {
        Obj t{ins[i], o.where + ": field 'inputs'[" + std::to_string(i) + "]"};
        // A non-tensor entry (null) is allowed for fallbacks; skip it.
        if (ins[i].is_null()) continue;
        if (n.kind == "fallback" && t.has("dtype") && !t.has_value("dtype")) {
          // A MultiOutput's input: the fallback's tuple (dtype null, size []).
          TensorView tv;
          tv.buffer = t.str("buffer");
          n.inputs.push_back(tv);
        } else {
          n.inputs.push_back(load_view(t, true));
        }
        if (!g.find_buffer(n.inputs.back().buffer))
          t.fail("buffer", "unknown buffer '" + n.inputs.back().buffer + "'");
      }
    }
    if (o.has_value("constant_args")) n.constant_args = o.at("constant_args");
    if (o.has_value("kwargs")) n.kwargs = o.at("kwargs");
    if (o.has_value("layout"))
      n.layout = load_view(Obj{o.at("layout"), o.where + ": field 'layout'"}, false);
    if (n.kind == "extern" && n.kernel.empty()) o.fail("kernel", "missing for an extern node");
    if (o.has_value("indices")) n.indices = o.ints("indices");
    if (o.has_value("call")) n.call = o.at("call");
  } else {
    o.fail("kind", "expected pointwise, reduction, extern or fallback, got '" + n.kind + "'");
  }
  return n;
}

}  // namespace

int64_t Buffer::storage_elems() const {
  int64_t n = offset;
  for (size_t i = 0; i < size.size(); ++i) {
    if (size[i] == 0) return 0;
    n += (size[i] - 1) * stride[i];
  }
  return n + 1;
}

void Graph::index_buffers() {
  buffer_index.clear();
  for (size_t i = 0; i < buffers.size(); ++i) buffer_index.emplace(buffers[i].name, i);
  indexed = buffers.size();
}

const Buffer* Graph::find_buffer(const std::string& n) const {
  if (auto it = buffer_index.find(n);
      it != buffer_index.end() && it->second < buffers.size() && buffers[it->second].name == n)
    return &buffers[it->second];
  const size_t from = std::min(indexed, buffers.size());
  for (size_t i = from; i < buffers.size(); ++i)
    if (buffers[i].name == n) return &buffers[i];
  for (size_t i = 0; i < from; ++i)  // an index that does not describe `buffers` (edited)
    if (buffers[i].name == n) return &buffers[i];
  return nullptr;
}

const Buffer& Graph::buffer(const std::string& n) const {
  const Buffer* b = find_buffer(n);
  if (!b) throw Error(file, "unknown buffer '" + n + "'");
  return *b;
}

const Buffer& Graph::storage_of(const std::string& n) const {
  const Buffer* b = &buffer(n);
  for (int hops = 0; b->kind == "view" && hops < 64; ++hops) b = &buffer(b->view_of);
  return *b;
}

std::string where(const Graph& g, const Node& n) { return g.file + ": node " + n.name; }

std::string describe(const Node& n) {
  std::string op = !n.op_overload.empty() ? n.op_overload
                   : !n.aten.empty()      ? n.aten.front()
                                          : n.kind;
  if (n.aten.size() > 1 && n.op_overload.empty()) {
    op.clear();
    for (const auto& a : n.aten) op += (op.empty() ? "" : ", ") + a;
  }
  return "node " + n.name + " (" + op + ", at " + (n.source.empty() ? "unknown source" : n.source) +
         ")";
}

const char* ir_schema_text() { return generated::kIrSchemaText; }

const json_schema::Schema& ir_schema() {
  static const json_schema::Schema schema = json_schema::Schema::parse(generated::kIrSchemaText);
  return schema;
}

namespace {

// A schema violation as the loader's other messages say it: the node (by name), buffer or body
// op (by id) it is in, then the field path inside it.
//   path nodes[3].body[1].index.expr -> "graph.json: node op3: body op v1: field 'index.expr'"
[[noreturn]] void throw_violation(const nlohmann::json& j, const std::string& file,
                                  const json_schema::Violation& v) {
  const auto& p = v.path;
  std::string where = file;
  size_t i = 0;
  auto name_of = [](const nlohmann::json& obj, const char* key) -> std::string {
    if (!obj.is_object()) return {};
    auto it = obj.find(key);
    return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto indexed = [&](size_t at, const char* list) {
    return p.size() > at + 1 && !p[at].is_index && p[at].key == list && p[at + 1].is_index;
  };
  auto element = [&](const std::string& list, size_t k) {
    return list + "[" + std::to_string(k) + "]";
  };
  if (indexed(0, "buffers") || indexed(0, "nodes") || indexed(0, "outputs")) {
    const std::string& list = p[0].key;
    const nlohmann::json& elem = j[list][p[1].index];
    const std::string name = name_of(elem, "name");
    if (list == "outputs" || name.empty())
      where += ": " + element(list, p[1].index);
    else
      where += (list == "nodes" ? ": node " : ": buffer ") + name;
    i = 2;
    // Into a node's loop body, and a masked op's sub-block: "body op v3".
    const nlohmann::json* cur = &elem;
    while (list == "nodes" && indexed(i, "body")) {
      cur = &(*cur)["body"][p[i + 1].index];
      const std::string id = name_of(*cur, "id");
      where += id.empty() ? ": " + element("body", p[i + 1].index) : ": body op " + id;
      i += 2;
    }
  }
  if (i < p.size()) where += ": field '" + json_schema::path_string({p.begin() + i, p.end()}) + "'";
  throw Error(where, v.message);
}

}  // namespace

nlohmann::json parse_ir_json(const std::string& text, const std::string& file) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // syntax, or a number beyond double
    throw Error(file, std::string("malformed JSON: ") + e.what());
  }
}

Graph load_ir(const nlohmann::json& j, const std::string& file, const LoadOptions& opts) {
  Obj top{j, file};
  if (!j.is_object()) throw Error(file, "expected a JSON object (the IR)");
  // What the file is comes first: another format or version would fail the schema anywhere.
  if (top.at("schema") != "spyre-sim-ir")
    top.fail("schema", "expected \"spyre-sim-ir\", got " + j["schema"].dump());
  if (top.at("version") != 1) top.fail("version", "expected 1, got " + j["version"].dump());
  if (auto violation = ir_schema().validate(j)) throw_violation(j, file, *violation);
  reject_value_dependent_sizes(j, file, opts.host_fallback);
  reject_fallbacks(j, file, opts.host_fallback);
  Graph g;
  g.file = file;
  g.torch_version = top.has_value("torch_version") ? top.str("torch_version") : "";
  g.stage = top.has_value("stage") ? top.str("stage") : "";
  g.name = top.has_value("graph") ? top.str("graph") : "";
  const json& bufs = top.list("buffers");
  // Which node writes each buffer, for a dtype refusal (the schema has checked the shapes).
  std::map<std::string, std::string> writer;
  for (const auto& nj : top.list("nodes"))
    for (const auto& out : nj["outputs"]) {
      std::vector<std::string> aten;
      if (nj.contains("aten"))
        for (const auto& a : nj["aten"]) aten.push_back(a.get<std::string>());
      writer[out.get<std::string>()] = "written by node " + nj["name"].get<std::string>() +
                                       (aten.empty() ? "" : " (" + join(aten) + ")");
    }
  std::set<std::string> names;
  for (size_t i = 0; i < bufs.size(); ++i) {
    Obj o{bufs[i], file + ": buffers[" + std::to_string(i) + "]"};
    Buffer b;
    b.name = o.str("name");
    o.where = file + ": buffer " + b.name;
    if (auto w = writer.find(b.name); w != writer.end()) o.context = w->second;
    if (!names.insert(b.name).second) o.fail("name", "duplicate buffer name");
    b.kind = o.str("kind");
    static const std::set<std::string> kinds = {"input",        "parameter", "constant",
                                                "intermediate", "output",    "view"};
    if (!kinds.count(b.kind)) o.fail("kind", "unknown buffer kind '" + b.kind + "'");
    b.tuple = !o.has_value("dtype");
    if (!b.tuple) b.dtype = o.dtype("dtype");
    b.size = o.ints("size");
    b.stride = o.ints("stride");
    b.offset = o.integer("offset");
    check_layout(o, b.size, b.stride, b.offset);
    if (o.has_value("symbolic")) b.symbolic = o.at("symbolic");
    b.view_of = o.str_or_null("view_of");
    if (b.kind == "view" && b.view_of.empty()) o.fail("view_of", "missing for a view");
    g.buffers.push_back(std::move(b));
  }
  g.index_buffers();
  for (const auto& b : g.buffers) {
    if (b.kind != "view") continue;
    std::string w = file + ": buffer " + b.name + ": field 'view_of'";
    const Buffer* t = g.find_buffer(b.view_of);
    if (!t) throw Error(w, "unknown buffer '" + b.view_of + "'");
    const Buffer* cur = t;
    for (int hops = 0; cur && cur->kind == "view"; ++hops) {
      if (hops > 64 || cur == &b) throw Error(w, "views form a cycle");
      cur = g.find_buffer(cur->view_of);
    }
  }
  g.inputs = top.strs("inputs");
  for (const auto& in : g.inputs)
    if (!g.find_buffer(in)) top.fail("inputs", "unknown buffer '" + in + "'");
  const json& outs = top.list("outputs");
  for (size_t i = 0; i < outs.size(); ++i) {
    Obj o{outs[i], file + ": outputs[" + std::to_string(i) + "]"};
    g.outputs.push_back(load_view(o, true));
    if (!g.find_buffer(g.outputs.back().buffer))
      o.fail("buffer", "unknown buffer '" + g.outputs.back().buffer + "'");
  }
  const json& nodes = top.list("nodes");
  std::set<std::string> node_names;
  for (size_t i = 0; i < nodes.size(); ++i) {
    g.nodes.push_back(load_node(nodes[i], file, i, g));
    if (!node_names.insert(g.nodes.back().name).second)
      throw Error(file + ": node " + g.nodes.back().name + ": field 'name'", "duplicate node name");
  }
  // A tuple (dtype null) is a fallback's output, read only by its MultiOutput nodes.
  for (const auto& b : g.buffers) {
    if (!b.tuple) continue;
    bool made = false;
    for (const auto& n : g.nodes) {
      const bool multi = n.kind == "fallback" && n.kernel == "MultiOutput";
      for (const auto& o : n.outputs)
        made = made || (o == b.name && n.kind == "fallback" && !multi);
      for (const auto& in : n.inputs)
        if (in.buffer == b.name && !multi)
          throw Error(where(g, n) + ": field 'inputs'",
                      "buffer " + b.name +
                          " is a fallback's tuple (dtype null); only MultiOutput "
                          "nodes read it");
    }
    if (!made)
      throw Error(file + ": buffer " + b.name + ": field 'dtype'",
                  "null, but no fallback node outputs it (only a fallback's tuple has no dtype)");
  }
  return g;
}

}  // namespace spyre::compiler::ir
