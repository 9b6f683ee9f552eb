// Refusals on the raw IR JSON before it is loaded (load_refusals.h).
#include "load_refusals.h"

#include <map>
#include <set>
#include <vector>

#include "spyre/compiler/select.h"
#include "spyre/error.h"

namespace spyre::compiler::ir {

namespace {

std::string json_text(const nlohmann::json& n, const char* key) {
  return n.contains(key) && n[key].is_string() ? n[key].get<std::string>() : std::string();
}

// "file: node op3 (aten.nonzero.default, at model.py:7)" for a node of the raw IR.
std::string raw_node_where(const nlohmann::json& n, const std::string& file) {
  std::string op = json_text(n, "op_overload");
  if (op.empty() && n.contains("aten") && n["aten"].is_array() && !n["aten"].empty() &&
      n["aten"][0].is_string())
    op = n["aten"][0].get<std::string>();
  const std::string src = json_text(n, "source");
  return file + ": node " + json_text(n, "name") + " (" + (op.empty() ? "unknown op" : op) +
         ", at " + (src.empty() ? "unknown source" : src) + ")";
}

// The buffers a node of the raw IR names: its outputs, its tensor inputs, its loop body's.
void raw_node_buffers(const nlohmann::json& n, std::vector<std::string>& out) {
  auto add = [&](const nlohmann::json& v) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  };
  if (n.contains("outputs") && n["outputs"].is_array())
    for (const auto& o : n["outputs"]) add(o);
  if (n.contains("inputs") && n["inputs"].is_array())
    for (const auto& t : n["inputs"])
      if (t.is_object() && t.contains("buffer")) add(t["buffer"]);
  if (n.contains("body") && n["body"].is_array())
    for (const auto& op : n["body"]) {
      if (!op.is_object()) continue;
      if (op.contains("buffer")) add(op["buffer"]);
      raw_node_buffers(op, out);  // a masked op's sub-block
    }
}

}  // namespace

// A size a data-dependent op computes (nonzero, unique, masked_select: a `symbolic` layout) is
// known only once the op has run. Under compiler.host_fallback the host runs such an op (the
// host call learns the size, host_call.h), and the MultiOutput nodes that name its results
// pass; any other node that reads or writes such a buffer, or a view of one, is refused,
// naming the op that computes the size when that is what cannot run.
void reject_value_dependent_sizes(const nlohmann::json& j, const std::string& file,
                                  bool host_fallback) {
  if (!j.contains("buffers") || !j["buffers"].is_array() || !j.contains("nodes") ||
      !j["nodes"].is_array())
    return;
  std::map<std::string, std::string> symbol, view_of;  // buffer -> a symbolic size; its base
  for (const auto& b : j["buffers"]) {
    const std::string name = json_text(b, "name");
    if (!json_text(b, "view_of").empty()) view_of[name] = json_text(b, "view_of");
    if (!b.contains("symbolic") || !b["symbolic"].is_object()) continue;
    std::string expr;
    for (const auto& e : b["symbolic"].value("size", nlohmann::json::array()))
      if (e.is_string() && expr.empty()) expr = e.get<std::string>();
    symbol[name] = expr.empty() ? "(a stride or offset)" : expr;
  }
  if (symbol.empty()) return;
  auto symbolic_size = [&](std::string name) -> const std::string* {
    for (int hops = 0; hops < 64; ++hops) {
      if (auto s = symbol.find(name); s != symbol.end()) return &s->second;
      auto v = view_of.find(name);
      if (v == view_of.end()) return nullptr;
      name = v->second;
    }
    return nullptr;  // a cycle of views: the loader names it
  };
  auto on_host = [&](const nlohmann::json& n) {
    return host_fallback && json_text(n, "kind") == "fallback" &&
           json_text(n, "kernel") != "MultiOutput" && !select_lowers(json_text(n, "op_overload"));
  };
  std::map<std::string, const nlohmann::json*> producer;  // a fallback's tuple -> the fallback
  for (const auto& n : j["nodes"]) {
    if (!n.is_object()) continue;
    if (json_text(n, "kind") == "fallback" && json_text(n, "kernel") != "MultiOutput" &&
        n.contains("outputs") && n["outputs"].is_array())
      for (const auto& o : n["outputs"])
        if (o.is_string()) producer[o.get<std::string>()] = &n;
    std::vector<std::string> names;
    raw_node_buffers(n, names);
    const std::string* expr = nullptr;
    std::string buffer;
    for (const auto& b : names)
      if ((expr = symbolic_size(b))) {
        buffer = b;
        break;
      }
    if (!expr || on_host(n)) continue;
    const nlohmann::json* culprit = &n;  // a MultiOutput names a result of its fallback
    if (json_text(n, "kernel") == "MultiOutput" && n.contains("inputs") && n["inputs"].is_array() &&
        n["inputs"].size() == 1 && n["inputs"][0].is_object()) {
      auto p = producer.find(json_text(n["inputs"][0], "buffer"));
      if (p != producer.end()) {
        if (on_host(*p->second)) continue;
        culprit = p->second;
      }
    }
    const bool fallback = json_text(*culprit, "kind") == "fallback";
    throw Error(raw_node_where(*culprit, file),
                "buffer " + buffer + " has the size " + *expr +
                    ", which depends on the values of a tensor (nonzero, unique, "
                    "masked_select, ...): the chip's programs need every size known at compile "
                    "time" +
                    (fallback && !host_fallback
                         ? "; --set compiler.host_fallback=on runs the op on the host"
                         : ""));
  }
}

// An op Inductor could not lower (a fallback kernel) is the user's real problem; name it before
// any complaint about the odd buffers such kernels produce (tuples without a dtype).
// Fallbacks that select.h lowers pass, and so do the MultiOutput nodes that read their tuples.
void reject_fallbacks(const nlohmann::json& j, const std::string& file, bool host_fallback) {
  if (!j.contains("nodes") || !j["nodes"].is_array()) return;
  std::set<std::string> lowered_tuples;
  for (const auto& n : j["nodes"]) {
    if (!n.is_object()) continue;
    auto text = [&](const char* k) { return json_text(n, k); };
    // An extern kernel without a tensor result (layout null) updates its inputs in place
    // (aten.bernoulli_, index_put_) or reads a value back to the host (aten._local_scalar_dense:
    // Tensor.item()): no lowering exists for any of them.
    const bool in_place_extern =
        n.value("kind", "") == "extern" && n.contains("layout") && n["layout"].is_null();
    if (n.value("kind", "") != "fallback" && !in_place_extern) continue;
    // A fallback runs on the host under compiler.host_fallback (host_call.h), and so does
    // what its MultiOutput nodes read.
    if (!in_place_extern && (host_fallback || select_lowers(text("op_overload")))) {
      if (n.contains("outputs") && n["outputs"].is_array())
        for (const auto& o : n["outputs"])
          if (o.is_string()) lowered_tuples.insert(o.get<std::string>());
      continue;
    }
    if (text("kernel") == "MultiOutput" && n.contains("inputs") && n["inputs"].is_array() &&
        n["inputs"].size() == 1 && n["inputs"][0].is_object() &&
        lowered_tuples.count(n["inputs"][0].value("buffer", "")))
      continue;
    if (in_place_extern)
      throw Error(raw_node_where(n, file),
                  "unsupported op: Inductor calls an ATen kernel with no tensor result (it "
                  "updates its inputs in place or reads a value back to the host: " +
                      text("kernel") + ") and spyre-sim has no lowering for it");
    // The capture's `why`: spyre-sim decomposes the op, but not for these operands.
    const std::string why = text("why");
    throw Error(
        raw_node_where(n, file),
        "unsupported op: Inductor has no lowering for it " +
            (why.empty() ? "and neither has spyre-sim (fallback kernel " + text("kernel") + ")"
                         : "(fallback kernel " + text("kernel") + "), and " + why) +
            "; --set compiler.host_fallback=on runs it on the host");
  }
}

}  // namespace spyre::compiler::ir
