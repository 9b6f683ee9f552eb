#pragma once
// Tests-only reference: a small interpreter of the Inductor IR (compiler/frontend/SCHEMA.md v1)
// over a byte image of the graph's storages. Loop bodies are evaluated in double and rounded
// exactly where the IR says (to_dtype, stores: isa::store_element, the same rounding as the
// device). Extern mm/addmm/bmm and 2-D convolution accumulate in double; topk and median
// fallbacks sort (ir_interp_select.h). What it cannot evaluate (other fallbacks,
// to_dtype_bitcast, unknown ops) throws std::runtime_error.
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir_interp_select.h"
#include "spyre/isa/dtype.h"

namespace spyre::compiler::test {

// --- sympy index expressions: + - * // % ( ) integers, names, FloorDiv, ModularIndexing,
// Abs, Min, Max.
class IndexExpr {
 public:
  using Slots = std::map<std::string, int>;
  IndexExpr(const std::string& s, Slots& slots) : s_(s), slots_(slots) {
    fn_ = sum();
    skip();
    if (p_ != s_.size()) bad();
  }
  int64_t operator()(const std::vector<int64_t>& env) const { return fn_(env); }

 private:
  using Fn = std::function<int64_t(const std::vector<int64_t>&)>;
  static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
  static int64_t mod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }
  [[noreturn]] void bad() const { throw std::runtime_error("cannot parse index '" + s_ + "'"); }
  void skip() {
    while (p_ < s_.size() && s_[p_] == ' ') ++p_;
  }
  bool eat(const char* t) {
    skip();
    const std::string tok(t);
    if (s_.compare(p_, tok.size(), tok) == 0) {
      p_ += tok.size();
      return true;
    }
    return false;
  }
  Fn sum() {
    Fn f = product();
    for (;;) {
      if (eat("+")) {
        Fn g = product();
        f = [f, g](const auto& e) { return f(e) + g(e); };
      } else if (eat("-")) {
        Fn g = product();
        f = [f, g](const auto& e) { return f(e) - g(e); };
      } else {
        return f;
      }
    }
  }
  Fn product() {
    Fn f = unary();
    for (;;) {
      if (eat("//")) {
        Fn g = unary();
        f = [f, g](const auto& e) { return floordiv(f(e), g(e)); };
      } else if (eat("*")) {
        Fn g = unary();
        f = [f, g](const auto& e) { return f(e) * g(e); };
      } else if (eat("%")) {
        Fn g = unary();
        f = [f, g](const auto& e) { return mod(f(e), g(e)); };
      } else {
        return f;
      }
    }
  }
  std::vector<Fn> call_args() {
    std::vector<Fn> a;
    if (!eat("(")) bad();
    a.push_back(sum());
    while (eat(",")) a.push_back(sum());
    if (!eat(")")) bad();
    return a;
  }
  Fn unary() {
    if (eat("-")) {
      Fn g = unary();
      return [g](const auto& e) { return -g(e); };
    }
    if (eat("(")) {
      Fn g = sum();
      if (!eat(")")) bad();
      return g;
    }
    skip();
    if (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_]))) {
      int64_t v = 0;
      while (p_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p_])))
        v = v * 10 + (s_[p_++] - '0');
      return [v](const auto&) { return v; };
    }
    std::string name;
    while (p_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[p_])) || s_[p_] == '_'))
      name += s_[p_++];
    if (name.empty()) bad();
    if (name == "FloorDiv") {
      auto a = call_args();
      return [a](const auto& e) { return floordiv(a[0](e), a[1](e)); };
    }
    if (name == "ModularIndexing") {
      auto a = call_args();
      return [a](const auto& e) { return mod(floordiv(a[0](e), a[1](e)), a[2](e)); };
    }
    if (name == "Abs") {
      auto a = call_args();
      return [a](const auto& e) { return std::abs(a[0](e)); };
    }
    if (name == "Min" || name == "Max") {
      auto a = call_args();
      const bool mx = name == "Max";
      return [a, mx](const auto& e) {
        int64_t v = a[0](e);
        for (size_t i = 1; i < a.size(); ++i) v = mx ? std::max(v, a[i](e)) : std::min(v, a[i](e));
        return v;
      };
    }
    auto it = slots_.find(name);
    int slot;
    if (it == slots_.end()) {
      slot = static_cast<int>(slots_.size());
      slots_[name] = slot;
    } else {
      slot = it->second;
    }
    return [slot](const std::vector<int64_t>& e) { return e[static_cast<size_t>(slot)]; };
  }

  std::string s_;
  size_t p_ = 0;
  Slots& slots_;
  Fn fn_;
};

class IrInterp {
 public:
  using json = nlohmann::json;
  // f32: evaluate loop bodies and extern accumulations in fp32 (every float result rounded to
  // fp32, fp16/bf16 constants promoted to fp32 as Inductor's CPU code does) instead of double:
  // a second, equally valid evaluation, to measure how sensitive a graph is to rounding.
  explicit IrInterp(const json& ir, bool f32 = false) : ir_(ir), f32_(f32) {
    for (const auto& b : ir["buffers"]) {
      Buf x;
      x.name = b["name"];
      x.dt = b["dtype"].is_null() ? isa::DType::F32 : dtype(b["dtype"]);
      x.offset = b["offset"];
      x.view_of = b["view_of"].is_null() ? "" : b["view_of"].get<std::string>();
      int64_t n = x.offset + 1;
      bool empty = false;
      for (size_t i = 0; i < b["size"].size(); ++i) {
        int64_t s = b["size"][i];
        if (s == 0) empty = true;
        n += (s - 1) * b["stride"][i].get<int64_t>();
      }
      if (b["size"].empty()) n = x.offset + 1;
      x.elems = empty ? 0 : n;
      bufs_[x.name] = x;
    }
    for (auto& [name, b] : bufs_) {
      if (!b.view_of.empty()) continue;
      storage_[name].assign(static_cast<size_t>(b.elems * isa::dtype_size_bytes(b.dt)) + 8, 0);
    }
  }

  static isa::DType dtype(const json& j) {
    static const std::map<std::string, isa::DType> m = {
        {"float16", isa::DType::F16}, {"bfloat16", isa::DType::BF16}, {"float32", isa::DType::F32},
        {"int8", isa::DType::I8},     {"int32", isa::DType::I32},     {"int64", isa::DType::I64},
        {"bool", isa::DType::Bool}};
    auto it = m.find(j.get<std::string>());
    if (it == m.end()) throw std::runtime_error("dtype " + j.dump());
    return it->second;
  }

  // Element `elem` (counted from `buffer`'s own start) of a buffer.
  uint8_t* at(const std::string& buffer, int64_t elem) {
    const Buf* b = &bufs_.at(buffer);
    int64_t off = b->offset + elem;
    while (!b->view_of.empty()) {
      b = &bufs_.at(b->view_of);
      off += b->offset;
    }
    auto& st = storage_.at(b->name);
    const int64_t es = isa::dtype_size_bytes(b->dt);
    if (off < 0 || static_cast<size_t>((off + 1) * es) > st.size())
      throw std::runtime_error("reference: out-of-range access to " + buffer + " at " +
                               std::to_string(off));
    return st.data() + off * es;
  }
  isa::DType storage_dtype(const std::string& buffer) const {
    const Buf* b = &bufs_.at(buffer);
    while (!b->view_of.empty()) b = &bufs_.at(b->view_of);
    return b->dt;
  }
  double get(const std::string& buffer, int64_t elem) {
    return isa::load_element(at(buffer, elem), storage_dtype(buffer));
  }
  void set(const std::string& buffer, int64_t elem, double v) {
    isa::store_element(at(buffer, elem), storage_dtype(buffer), v);
  }

  // A tensor view (size, stride, offset over `buffer`), row-major.
  std::vector<double> read_view(const json& t) {
    std::vector<int64_t> size = t["size"], stride = t["stride"];
    int64_t n = 1;
    for (auto s : size) n *= s;
    std::vector<double> out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = get(t["buffer"], view_off(t, i));
    return out;
  }
  void write_view(const json& t, const std::vector<double>& v) {
    for (size_t i = 0; i < v.size(); ++i)
      set(t["buffer"], view_off(t, static_cast<int64_t>(i)), v[i]);
  }
  static int64_t view_off(const json& t, int64_t flat) {
    std::vector<int64_t> size = t["size"], stride = t["stride"];
    int64_t off = t.value("offset", int64_t{0});
    for (size_t d = size.size(); d-- > 0;) {
      off += (flat % size[d]) * stride[d];
      flat /= size[d];
    }
    return off;
  }

  void run() {
    for (const auto& n : ir_["nodes"]) {
      const std::string kind = n["kind"];
      if (kind == "pointwise" || kind == "reduction")
        run_loop(n);
      else if (kind == "extern")
        run_extern(n);
      else if (kind == "fallback")  // topk, median and their MultiOutput nodes
        eval_select(*this, n, tuples_);
      else
        throw std::runtime_error("reference: no evaluation of " + kind + " nodes");
    }
  }

 private:
  struct Buf {
    std::string name, view_of;
    isa::DType dt = isa::DType::F32;
    int64_t offset = 0, elems = 0;
  };

  static double round_to(isa::DType dt, double v) {
    switch (dt) {
      case isa::DType::F32: return static_cast<double>(static_cast<float>(v));
      case isa::DType::Bool: return v != 0.0 ? 1.0 : 0.0;
      default: {
        if (dt != isa::DType::F16 && dt != isa::DType::BF16) {
          if (std::isnan(v)) return 0;
          return std::trunc(v);
        }
        uint8_t b[8];
        isa::store_element(b, dt, v);
        return isa::load_element(b, dt);
      }
    }
  }
  static bool is_int(isa::DType d) {
    return d == isa::DType::I8 || d == isa::DType::I32 || d == isa::DType::I64;
  }

  struct Body {
    IndexExpr::Slots slots;
    std::map<const json*, std::unique_ptr<IndexExpr>> idx;
  };

  double elementwise(const std::string& o, const std::vector<double>& a, const json& op) const {
    auto I = [&](size_t i) { return static_cast<int64_t>(a[i]); };
    if (o == "add") return a[0] + a[1];
    if (o == "sub") return a[0] - a[1];
    if (o == "mul") return a[0] * a[1];
    if (o == "truediv" || o == "div") return a[0] / a[1];
    if (o == "neg") return -a[0];
    if (o == "abs") return std::fabs(a[0]);
    if (o == "exp") return std::exp(a[0]);
    if (o == "log") return std::log(a[0]);
    if (o == "log1p") return std::log1p(a[0]);
    if (o == "sqrt") return std::sqrt(a[0]);
    if (o == "rsqrt") return 1.0 / std::sqrt(a[0]);
    if (o == "sin") return std::sin(a[0]);
    if (o == "cos") return std::cos(a[0]);
    if (o == "tanh") return std::tanh(a[0]);
    if (o == "erf") return std::erf(a[0]);
    if (o == "sigmoid") return 1.0 / (1.0 + std::exp(-a[0]));
    if (o == "relu") return a[0] > 0 ? a[0] : (std::isnan(a[0]) ? a[0] : 0.0);
    if (o == "reciprocal") return 1.0 / a[0];
    if (o == "square") return a[0] * a[0];
    if (o == "floor") return std::floor(a[0]);
    if (o == "ceil") return std::ceil(a[0]);
    if (o == "round") return std::nearbyint(a[0]);
    if (o == "trunc") return std::trunc(a[0]);
    if (o == "sign") return a[0] > 0 ? 1.0 : a[0] < 0 ? -1.0 : a[0];
    if (o == "identity") return a[0];
    if (o == "maximum") return std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::max(a[0], a[1]);
    if (o == "minimum") return std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::min(a[0], a[1]);
    if (o == "pow") return std::pow(a[0], a[1]);
    if (o == "where") return a[0] != 0.0 ? a[1] : a[2];
    if (o == "lt") return a[0] < a[1];
    if (o == "le") return a[0] <= a[1];
    if (o == "gt") return a[0] > a[1];
    if (o == "ge") return a[0] >= a[1];
    if (o == "eq") return a[0] == a[1];
    if (o == "ne") return a[0] != a[1];
    if (o == "logical_and" || o == "and_") return (a[0] != 0.0) && (a[1] != 0.0);
    if (o == "logical_or" || o == "or_") return (a[0] != 0.0) || (a[1] != 0.0);
    if (o == "logical_not") return a[0] == 0.0;
    const bool b = op.contains("dtype") && !op["dtype"].is_null() && op["dtype"] == "bool";
    if (o == "bitwise_and") return b ? double((a[0] != 0) && (a[1] != 0)) : double(I(0) & I(1));
    if (o == "bitwise_or") return b ? double((a[0] != 0) || (a[1] != 0)) : double(I(0) | I(1));
    if (o == "bitwise_xor") return b ? double((a[0] != 0) != (a[1] != 0)) : double(I(0) ^ I(1));
    if (o == "bitwise_not") return b ? double(a[0] == 0) : double(~I(0));
    throw std::runtime_error("reference: no evaluation of op '" + o + "'");
  }

  struct Red {
    std::string type;
    double acc = 0, acc2 = 0, n = 0;
    int64_t best_idx = -1;
    std::vector<double> xs;
  };

  void run_loop(const json& n) {
    Body body;
    std::vector<std::string> vars = n["vars"], rvars = n["reduce_vars"];
    std::vector<int64_t> sizes = n["sizes"], rsizes = n["reduce_sizes"];
    for (const auto& v : vars) body.slots[v] = static_cast<int>(body.slots.size());
    for (const auto& v : rvars) body.slots[v] = static_cast<int>(body.slots.size());
    prepare(n["body"], body);
    const size_t nslots = body.slots.size();
    int64_t np = 1, nr = 1;
    for (auto s : sizes) np *= s;
    for (auto s : rsizes) nr *= s;
    // Ops that depend on a reduction result run once per point after the reduction loop.
    std::map<std::string, bool> post;
    for (const auto& op : n["body"]) {
      bool p = op["op"] == "reduction" || op["op"] == "store_reduction";
      for (const auto& a : op["args"])
        if (post.count(base(a))) p = p || post[base(a)];
      if (op.contains("id")) post[op["id"]] = p;
    }
    for (int64_t pt = 0; pt < np; ++pt) {
      std::vector<int64_t> env(nslots, 0);
      int64_t f = pt;
      for (size_t d = sizes.size(); d-- > 0;) {
        env[d] = f % sizes[d];
        f /= sizes[d];
      }
      std::map<std::string, double> vals;
      std::map<std::string, Red> reds;
      for (int64_t r = 0; r < (rvars.empty() ? 1 : nr); ++r) {
        int64_t g = r;
        for (size_t d = rsizes.size(); d-- > 0;) {
          env[vars.size() + d] = g % rsizes[d];
          g /= rsizes[d];
        }
        for (const auto& op : n["body"]) {
          if (op.contains("id") && post[op["id"]] && op["op"] != "reduction") continue;
          if (op["op"] == "store_reduction") continue;
          if (op["op"] == "reduction") {
            Red& rd = reds[op["id"]];
            rd.type = op["reduction_type"];
            step(rd, op, vals, r);
            continue;
          }
          eval(op, body, env, vals);
        }
      }
      for (const auto& [id, rd] : reds) finish(id, rd, vals, nr);
      for (const auto& op : n["body"]) {
        if (op["op"] == "reduction") continue;
        if (op["op"] == "store_reduction" || (op.contains("id") && post[op["id"]]))
          eval(op, body, env, vals);
      }
    }
  }

  static std::string base(const std::string& a) { return a.substr(0, a.find('.')); }

  void prepare(const json& ops, Body& body) {
    for (const auto& op : ops) {
      if (op.contains("index") && !op["index"].is_null())
        body.idx[&op["index"]] = std::make_unique<IndexExpr>(op["index"]["expr"], body.slots);
      if (op.contains("body") && op["body"].is_array()) prepare(op["body"], body);
    }
    for (const auto& op : ops)
      if (op["op"] == "indirect_indexing" && !body.slots.count(op["id"]))
        body.slots[op["id"]] = static_cast<int>(body.slots.size());
  }

  void step(Red& rd, const json& op, std::map<std::string, double>& vals, int64_t r) {
    const double x = vals.at(op["args"][0]);
    const std::string& t = rd.type;
    if (r == 0) {
      rd.acc = t == "prod" ? 1 : t == "max" ? -INFINITY : t == "min" ? INFINITY : 0;
      rd.best_idx = -1;
    }
    if (t == "sum" || t == "xor_sum")
      rd.acc = f32_ ? static_cast<float>(rd.acc + x) : rd.acc + x;
    else if (t == "prod")
      rd.acc *= x;
    else if (t == "max")
      rd.acc = std::isnan(x) || std::isnan(rd.acc) ? NAN : std::max(rd.acc, x);
    else if (t == "min")
      rd.acc = std::isnan(x) || std::isnan(rd.acc) ? NAN : std::min(rd.acc, x);
    else if (t == "any")
      rd.acc = (rd.acc != 0 || x != 0) ? 1 : 0;
    else if (t == "argmax" || t == "argmin") {
      const bool better = rd.best_idx < 0 || (t == "argmax" ? x > rd.acc : x < rd.acc) ||
                          (std::isnan(x) && !std::isnan(rd.acc));
      if (better) rd.acc = x, rd.best_idx = r;
    } else if (t == "welford_reduce") {
      rd.xs.push_back(x);
    } else if (t == "welford_combine") {
      const double m = x, m2 = vals.at(op["args"][1]), w = vals.at(op["args"][2]);
      if (w == 0) return;
      const double nn = rd.n + w, d = m - rd.acc;
      rd.acc += d * w / nn;
      rd.acc2 += m2 + d * d * rd.n * w / nn;
      rd.n = nn;
    } else {
      throw std::runtime_error("reference: no reduction '" + t + "'");
    }
  }

  static void finish(const std::string& id, const Red& rd, std::map<std::string, double>& vals,
                     int64_t nr) {
    if (rd.type == "argmax" || rd.type == "argmin") {
      vals[id] = static_cast<double>(rd.best_idx);
    } else if (rd.type == "welford_reduce") {
      double mean = 0, m2 = 0;
      for (double x : rd.xs) mean += x;
      mean /= static_cast<double>(rd.xs.size());
      for (double x : rd.xs) m2 += (x - mean) * (x - mean);
      vals[id + ".0"] = mean;
      vals[id + ".1"] = m2;
      vals[id + ".2"] = static_cast<double>(nr);
    } else if (rd.type == "welford_combine") {
      vals[id + ".0"] = rd.acc;
      vals[id + ".1"] = rd.acc2;
      vals[id + ".2"] = rd.n;
    } else {
      vals[id] = rd.acc;
    }
  }

  double eval(const json& op, Body& body, std::vector<int64_t>& env,
              std::map<std::string, double>& vals) {
    const std::string o = op["op"];
    auto index = [&]() { return (*body.idx.at(&op["index"]))(env); };
    auto arg = [&](size_t i) { return vals.at(op["args"][i]); };
    auto def = [&](double v) {
      if (op.contains("id")) vals[op["id"]] = v;
      return v;
    };
    auto dt = [&]() -> isa::DType {
      if (!op.contains("dtype") || op["dtype"].is_null()) return isa::DType::F32;
      return dtype(op["dtype"]);
    };
    if (o == "load") return def(get(op["buffer"], index()));
    if (o == "store" || o == "store_reduction") {
      double v = arg(0);
      if (op.value("mode", json()).is_string() && op["mode"] == "atomic_add")
        v += get(op["buffer"], index());
      set(op["buffer"], index(), v);
      return 0;
    }
    if (o == "constant") {
      const json& v = op["value"];
      double x;
      if (v.is_string())
        x = v == "inf" ? INFINITY : v == "-inf" ? -INFINITY : NAN;
      else if (v.is_boolean())
        x = v.get<bool>();
      else
        x = v.get<double>();
      // An fp16/bf16 constant is an fp32 literal in Inductor's CPU code (loads are promoted to
      // fp32 and constants with them); rounding it to fp16 would be eager fp16's numerics.
      const isa::DType cd = dt();
      const bool low = cd == isa::DType::F16 || cd == isa::DType::BF16;
      return def(round_to(low ? isa::DType::F32 : cd, x));
    }
    if (o == "index_expr") return def(static_cast<double>(index()));
    if (o == "to_dtype") return def(round_to(dt(), arg(0)));
    if (o == "indirect_indexing") {
      int64_t v = static_cast<int64_t>(arg(0));
      if (v < 0) v += op["size"].get<int64_t>();
      env[static_cast<size_t>(body.slots.at(op["id"]))] = v;
      return def(static_cast<double>(v));
    }
    if (o == "check_bounds") return 0;
    if (o == "masked") {
      double r;
      if (arg(0) != 0.0) {
        for (const auto& s : op["body"]) eval(s, body, env, vals);
        r = vals.at(op["body"].back()["id"]);
      } else {
        const json& v = op["value"];
        r = v.is_string()    ? (v == "inf"    ? INFINITY
                                : v == "-inf" ? -INFINITY
                                              : NAN)
            : v.is_boolean() ? double(v.get<bool>())
                             : v.get<double>();
      }
      return def(r);
    }
    std::vector<double> a;
    for (size_t i = 0; i < op["args"].size(); ++i) a.push_back(arg(i));
    double r = elementwise(o, a, op);
    if (op.contains("dtype") && !op["dtype"].is_null()) {
      const isa::DType d = dt();
      if (is_int(d) || d == isa::DType::Bool) r = round_to(d, r);
    }
    if (f32_ && !(op.contains("dtype") && !op["dtype"].is_null() &&
                  (is_int(dt()) || dt() == isa::DType::Bool)))
      r = round_to(isa::DType::F32, r);
    return def(r);
  }

  void run_extern(const json& n) {
    const std::string k = n["kernel"];
    const json& in = n["inputs"];
    json out = n["layout"];
    out["buffer"] = n["outputs"][0];
    auto dims = [](const json& t) { return t["size"].get<std::vector<int64_t>>(); };
    if (k == "extern_kernels.mm" || k == "extern_kernels.addmm" || k == "extern_kernels.bmm") {
      const bool add = k == "extern_kernels.addmm";
      const json& A = in[add ? 1 : 0];
      const json& B = in[add ? 2 : 1];
      auto a = read_view(A), b = read_view(B);
      auto da = dims(A), db = dims(B);
      const bool bmm = da.size() == 3;
      const int64_t batch = bmm ? da[0] : 1, M = da[da.size() - 2], K = da.back(), N = db.back();
      std::vector<double> c(static_cast<size_t>(batch * M * N));
      std::vector<double> bias;
      std::vector<int64_t> bsz;
      if (add) bias = read_view(in[0]), bsz = dims(in[0]);
      const double alpha = n["kwargs"].value("alpha", 1.0), beta = n["kwargs"].value("beta", 1.0);
      for (int64_t q = 0; q < batch; ++q)
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double s = 0;
            for (int64_t kk = 0; kk < K; ++kk) {
              s += a[static_cast<size_t>((q * M + i) * K + kk)] *
                   b[static_cast<size_t>((q * K + kk) * N + j)];
              if (f32_) s = static_cast<float>(s);  // fp32 accumulation
            }
            s = static_cast<float>(s);
            if (add) {
              double bv;
              if (bsz.size() == 1)
                bv = bias[static_cast<size_t>(bsz[0] == 1 ? 0 : j)];
              else
                bv = bias[static_cast<size_t>((bsz[0] == 1 ? 0 : i) * bsz[1] +
                                              (bsz[1] == 1 ? 0 : j))];
              s = alpha * s + beta * bv;
            }
            c[static_cast<size_t>((q * M + i) * N + j)] = s;
          }
      write_view(out, c);
      return;
    }
    if (k == "extern_kernels.convolution") {  // 2-D, not transposed, accumulate in double
      const json& kw = n["kwargs"];
      if (kw.value("transposed", false))
        throw std::runtime_error("reference: transposed convolution");
      auto pr = [&](const char* key, int64_t def) {
        if (!kw.contains(key)) return std::array<int64_t, 2>{def, def};
        const json& v = kw[key];
        if (v.is_number()) return std::array<int64_t, 2>{v.get<int64_t>(), v.get<int64_t>()};
        if (v.size() == 1) return std::array<int64_t, 2>{v[0].get<int64_t>(), v[0].get<int64_t>()};
        return std::array<int64_t, 2>{v[0].get<int64_t>(), v[1].get<int64_t>()};
      };
      const auto st = pr("stride", 1), pd = pr("padding", 0), dl = pr("dilation", 1);
      const int64_t groups = kw.value("groups", int64_t{1});
      auto x = read_view(in[0]), w = read_view(in[1]);
      std::vector<double> bias;
      if (in.size() > 2) bias = read_view(in[2]);
      const auto dx = dims(in[0]), dw = dims(in[1]), dout = dims(out);
      if (dx.size() != 4) throw std::runtime_error("reference: convolution that is not 2-D");
      const int64_t N = dx[0], C = dx[1], H = dx[2], W = dx[3], OC = dw[0], ICg = dw[1], KH = dw[2],
                    KW = dw[3], OH = dout[2], OW = dout[3], OCg = OC / groups;
      std::vector<double> c(static_cast<size_t>(N * OC * OH * OW));
      for (int64_t b = 0; b < N; ++b)
        for (int64_t o = 0; o < OC; ++o)
          for (int64_t oh = 0; oh < OH; ++oh)
            for (int64_t ow = 0; ow < OW; ++ow) {
              double s = 0;
              const int64_t g = o / OCg;
              for (int64_t ic = 0; ic < ICg; ++ic)
                for (int64_t kh = 0; kh < KH; ++kh)
                  for (int64_t kx = 0; kx < KW; ++kx) {
                    const int64_t ih = oh * st[0] - pd[0] + kh * dl[0];
                    const int64_t iw = ow * st[1] - pd[1] + kx * dl[1];
                    if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                    s += x[static_cast<size_t>(((b * C + g * ICg + ic) * H + ih) * W + iw)] *
                         w[static_cast<size_t>(((o * ICg + ic) * KH + kh) * KW + kx)];
                  }
              s = static_cast<float>(s);
              if (!bias.empty()) s += bias[static_cast<size_t>(o)];
              c[static_cast<size_t>(((b * OC + o) * OH + oh) * OW + ow)] = s;
            }
      write_view(out, c);
      return;
    }
    throw std::runtime_error("reference: no evaluation of extern " + k);
  }

  const json& ir_;
  bool f32_ = false;
  std::map<std::string, Buf> bufs_;
  std::map<std::string, std::vector<uint8_t>> storage_;
  std::map<std::string, SelectTuple> tuples_;  // fallbacks' results (ir_interp_select.h)
};

}  // namespace spyre::compiler::test
