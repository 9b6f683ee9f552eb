#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "spyre/compiler/tile_program.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

using isa::DType;

bool is_float(DType d) { return isa::dtype_is_float(d); }
DType compute_dtype(DType d) {
  return (d == DType::F16 || d == DType::BF16 || d == DType::F8E4M3) ? DType::F32 : d;
}
DType promote(DType a, DType b) {
  if (is_float(a) || is_float(b)) return DType::F32;
  return isa::dtype_size_bytes(a) >= isa::dtype_size_bytes(b) ? a : b;
}

const std::map<std::string, std::string>& unary_fns() {
  static const std::map<std::string, std::string> m = {
      {"neg", "neg"},       {"abs", "abs"},     {"relu", "relu"},   {"reciprocal", "reciprocal"},
      {"square", "square"}, {"sqrt", "sqrt"},   {"rsqrt", "rsqrt"}, {"exp", "exp"},
      {"log", "log"},       {"tanh", "tanh"},   {"erf", "erf"},     {"sigmoid", "sigmoid"},
      {"floor", "floor"},   {"ceil", "ceil"},   {"sign", "sign"},   {"logical_not", "not"},
      {"identity", "copy"}, {"log1p", "log1p"}, {"round", "round"}, {"sin", "sin"},
      {"cos", "cos"},       {"trunc", "trunc"}};
  return m;
}
const std::map<std::string, std::string>& binary_fns() {
  static const std::map<std::string, std::string> m = {
      {"add", "add"},         {"sub", "sub"},       {"mul", "mul"},     {"truediv", "div"},
      {"div", "div"},         {"maximum", "max"},   {"minimum", "min"}, {"pow", "pow"},
      {"logical_and", "and"}, {"logical_or", "or"}, {"lt", "lt"},       {"le", "le"},
      {"gt", "gt"},           {"ge", "ge"},         {"eq", "eq"},       {"ne", "ne"},
      {"and_", "and"},        {"or_", "or"}};
  return m;
}
bool is_compare(const std::string& fn) {
  return fn == "lt" || fn == "le" || fn == "gt" || fn == "ge" || fn == "eq" || fn == "ne";
}

// Drops size-1 dims and merges neighbours whose every coefficient allows it.
std::vector<Dim> canonical(std::vector<Dim> dims) {
  dims.erase(std::remove_if(dims.begin(), dims.end(), [](const Dim& d) { return d.size == 1; }),
             dims.end());
  std::vector<Dim> out;
  for (auto& d : dims) {
    if (!out.empty()) {
      Dim& o = out.back();
      bool ok = true;
      for (size_t a = 0; a < d.coeff.size(); ++a)
        if (o.coeff[a] != d.coeff[a] * d.size) ok = false;
      if (ok) {
        o.size *= d.size;
        o.coeff = d.coeff;
        continue;
      }
    }
    out.push_back(d);
  }
  return out;
}

double constant_value(const nlohmann::json& v, const std::string& where) {
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    auto s = v.get<std::string>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  throw Error(where, "constant value " + v.dump() + " is not a number");
}

class Builder {
 public:
  Builder(const ir::Graph& g, const ir::Node& n, const arch::ArchConfig& cfg, std::string where,
          bool keep_2d)
      : g_(g), n_(n), cfg_(cfg), where_(std::move(where)), keep_2d_(keep_2d) {}

  TileProgram build() {
    p_.is_reduction = n_.kind == "reduction";
    collect_accesses(n_.body);
    build_space();
    for (const auto& op : n_.body) lower(op);
    dce();
    return std::move(p_);
  }

 private:
  [[noreturn]] void fail(const ir::Op& op, const std::string& what) const {
    throw Error(where_, "op " + (op.id.empty() ? op.op : op.id) + " '" + op.op + "': " + what);
  }

  void collect_accesses(const std::vector<ir::Op>& body) {
    for (const auto& op : body) {
      if (op.op == "masked")
        fail(op, "masked loads (padding, concatenation) are not supported yet");
      if (op.op == "indirect_indexing")
        fail(op, "indirect indexing (gather, embedding) is not supported yet");
      if (op.op == "index_expr") {
        if (!op.index || !op.index->affine)
          fail(op, "index_expr '" + (op.index ? op.index->expr : std::string()) +
                       "' is not affine in the loop variables");
        const std::string key = "|" + op.index->expr;
        if (access_of_.count(key)) continue;
        access_of_[key] = static_cast<int>(p_.accesses.size());
        MemAccess m;
        m.expr = op.index->expr;
        m.dt = DType::I64;
        m.offset = op.index->affine->offset;
        std::vector<int64_t> coeffs;
        for (const auto* vars : {&n_.vars, &n_.reduce_vars})
          for (const auto& v : *vars) coeffs.push_back(op.index->affine->coeff(v));
        p_.accesses.push_back(m);
        coeffs_.push_back(coeffs);
        continue;
      }
      if (op.op != "load" && op.op != "store" && op.op != "store_reduction") continue;
      if (!op.index || !op.index->affine)
        fail(op, "index '" + (op.index ? op.index->expr : std::string()) + "' of buffer " +
                     op.buffer + " is not affine in the loop variables");
      if (op.op == "load") {
        auto key = op.buffer + "|" + op.index->expr;
        if (access_of_.count(key)) continue;
        access_of_[key] = static_cast<int>(p_.accesses.size());
      }
      if (op.op != "load") store_access_.push_back(static_cast<int>(p_.accesses.size()));
      const ir::Affine& af = *op.index->affine;
      MemAccess m;
      m.buffer = op.buffer;
      m.expr = op.index->expr;
      m.dt = g_.storage_of(op.buffer).dtype;
      m.offset = af.offset + storage_offset(g_, op.buffer);
      if (m.offset < 0) fail(op, "negative index offset");
      std::vector<int64_t> coeffs;
      for (const auto* vars : {&n_.vars, &n_.reduce_vars})
        for (const auto& v : *vars) {
          int64_t c = af.coeff(v);
          if (c < 0)
            fail(op,
                 "negative stride " + std::to_string(c) + " for " + v + " is not supported yet");
          coeffs.push_back(c);
        }
      p_.accesses.push_back(m);
      coeffs_.push_back(coeffs);
    }
  }

  Dim dim_of(size_t var) const {
    Dim d;
    d.size = var < n_.vars.size() ? n_.sizes[var] : n_.reduce_sizes[var - n_.vars.size()];
    for (const auto& c : coeffs_) d.coeff.push_back(c[var]);
    return d;
  }

  void build_space() {
    const size_t na = p_.accesses.size();
    Dim unit{1, std::vector<int64_t>(na, 0)};
    std::vector<Dim> pw, red;
    for (size_t i = 0; i < n_.vars.size(); ++i) pw.push_back(dim_of(i));
    for (size_t i = 0; i < n_.reduce_vars.size(); ++i) red.push_back(dim_of(n_.vars.size() + i));
    pw = canonical(pw);
    red = canonical(red);
    IterSpace& s = p_.space;
    if (keep_2d_ && !p_.is_reduction && n_.vars.size() == 2) {
      s.row = dim_of(0);
      s.col = dim_of(1);
      return;
    }
    if (p_.is_reduction) {
      if (red.size() > 1)
        throw Error(where_,
                    "reduction over variables that cannot be merged into one (strides of "
                    "the reduced dimensions are not contiguous) is not supported yet");
      s.col = red.empty() ? unit : red[0];
      s.row = pw.empty() ? unit : pw.back();
      if (!pw.empty()) pw.pop_back();
      s.outer = pw;
      return;
    }
    if (pw.empty()) {
      s.row = s.col = unit;
      return;
    }
    if (pw.size() == 1) {  // split one variable into rows x cols
      const Dim d = pw[0];
      const int64_t workers = cfg_.cores * cfg_.corelets;
      const int64_t cap = std::max<int64_t>(64, std::min<int64_t>(2048, d.size / workers));
      int64_t cols = 1;
      for (int64_t c = std::min(cap, d.size); c >= 1; --c)
        if (d.size % c == 0) {
          cols = c;
          break;
        }
      if (cols < 16 && d.size <= 65536) cols = d.size;  // a prime-ish size: one long row
      s.col = Dim{cols, d.coeff};
      s.row = Dim{d.size / cols, {}};
      for (auto c : d.coeff) s.row.coeff.push_back(c * cols);
      return;
    }
    s.col = pw.back();
    pw.pop_back();
    s.row = pw.back();
    pw.pop_back();
    s.outer = pw;
  }

  int new_val(TVal v) {
    p_.vals.push_back(v);
    return static_cast<int>(p_.vals.size()) - 1;
  }
  int emit(TOp op) {
    p_.ops.push_back(std::move(op));
    return p_.ops.back().dst;
  }

  int convert(int v, DType dt) {
    if (p_.vals[static_cast<size_t>(v)].dt == dt) return v;
    auto key = std::make_pair(v, dt);
    if (auto it = conv_.find(key); it != conv_.end()) return it->second;
    TVal t = p_.vals[static_cast<size_t>(v)];
    t.dt = dt;
    t.transposed = false;
    int d = new_val(t);
    emit(TOp{TOp::Convert, isa::SfpFn::Copy, d, {v}, -1, 0});
    conv_[key] = d;
    return d;
  }
  int materialize(int v, bool r, bool c) {
    const TVal& cur = p_.vals[static_cast<size_t>(v)];
    if ((cur.r || !r) && (cur.c || !c)) return v;
    TVal t = cur;
    t.r = t.r || r;
    t.c = t.c || c;
    t.tiled = t.tiled || r;
    t.transposed = false;
    int d = new_val(t);
    emit(TOp{TOp::Unary, isa::SfpFn::Copy, d, {v}, -1, 0});
    return d;
  }
  int scalar(DType dt, double value) {
    int d = new_val(TVal{dt, false, false, false, false});
    emit(TOp{TOp::Fill, isa::SfpFn::Copy, d, {}, -1, value});
    return d;
  }
  TVal joined(std::initializer_list<int> vs, DType dt) const {
    TVal t{dt, false, false, false, false};
    for (int v : vs) {
      const TVal& x = p_.vals[static_cast<size_t>(v)];
      t.r = t.r || x.r;
      t.c = t.c || x.c;
      t.tiled = t.tiled || x.tiled;
    }
    return t;
  }
  int arg(const ir::Op& op, size_t i) {
    if (i >= op.args.size()) fail(op, "expected " + std::to_string(i + 1) + " operands");
    return val_.at(op.args[i]);
  }
  DType op_dtype(const ir::Op& op, DType def) const { return op.dtype ? *op.dtype : def; }

  void lower(const ir::Op& op) {
    const IterSpace& s = p_.space;
    auto access_class = [&](int a, bool& r, bool& c, bool& tiled) {
      const auto& co = coeffs_[static_cast<size_t>(a)];
      (void)co;
      r = s.row.size > 1 && s.row.coeff[static_cast<size_t>(a)] != 0;
      c = s.col.size > 1 && s.col.coeff[static_cast<size_t>(a)] != 0;
      tiled = r;
      for (const auto& d : s.outer)
        if (d.coeff[static_cast<size_t>(a)] != 0) tiled = true;
      if (s.rows_total() == 1) tiled = true;  // one tile: everything is per tile
    };
    if (op.op == "load") {
      int a = access_of_.at(op.buffer + "|" + op.index->expr);
      if (auto it = load_val_.find(a); it != load_val_.end()) {
        val_[op.id] = it->second;
        return;
      }
      TVal t;
      t.dt = p_.accesses[static_cast<size_t>(a)].dt;
      access_class(a, t.r, t.c, t.tiled);
      t.transposed = t.r && t.c && s.row.coeff[static_cast<size_t>(a)] == 1 &&
                     s.col.coeff[static_cast<size_t>(a)] != 1;
      int d = new_val(t);
      emit(TOp{TOp::Load, isa::SfpFn::Copy, d, {}, a, 0});
      val_[op.id] = load_val_[a] = d;
      return;
    }
    if (op.op == "store" || op.op == "store_reduction") {
      if (!op.mode.empty()) fail(op, "store mode '" + op.mode + "' is not supported yet");
      int a = store_access_.at(next_store_++);
      bool r, c, tiled;
      access_class(a, r, c, tiled);
      int v = convert(val_.at(op.args[0]), p_.accesses[static_cast<size_t>(a)].dt);
      v = materialize(v, r, c);
      emit(TOp{TOp::Store, isa::SfpFn::Copy, -1, {v}, a, 0});
      return;
    }
    if (op.op == "constant") {
      val_[op.id] =
          scalar(compute_dtype(op_dtype(op, DType::F32)), constant_value(op.value, where_));
      return;
    }
    if (op.op == "index_expr") {
      const int a = access_of_.at("|" + op.index->expr);
      TVal t;
      t.dt = compute_dtype(op_dtype(op, DType::I64));
      access_class(a, t.r, t.c, t.tiled);
      int d = new_val(t);
      emit(TOp{TOp::Iota, isa::SfpFn::Copy, d, {}, a, 0});
      val_[op.id] = d;
      return;
    }
    if (op.op == "check_bounds") return;  // indices are valid by construction of the capture
    if (op.op == "bitwise_not" || op.op == "bitwise_and" || op.op == "bitwise_or" ||
        op.op == "bitwise_xor") {
      DType dt = op_dtype(op, p_.vals[static_cast<size_t>(arg(op, 0))].dt);
      if (is_float(dt)) fail(op, "bitwise op on a floating-point dtype");
      std::vector<int> a;
      for (size_t i = 0; i < op.args.size(); ++i) a.push_back(convert(arg(op, i), dt));
      const bool b = dt == DType::Bool;
      const std::string fn = op.op == "bitwise_not"   ? (b ? "not" : "bitnot")
                             : op.op == "bitwise_and" ? "bitand"
                             : op.op == "bitwise_or"  ? "bitor"
                                                      : "bitxor";
      if (a.size() != (op.op == "bitwise_not" ? 1u : 2u)) fail(op, "wrong number of operands");
      int d = new_val(a.size() == 1 ? joined({a[0]}, dt) : joined({a[0], a[1]}, dt));
      emit(TOp{a.size() == 1 ? TOp::Unary : TOp::Binary, sfp_fn(fn), d, a, -1, 0});
      val_[op.id] = d;
      return;
    }
    if (op.op == "to_dtype") {
      val_[op.id] = convert(arg(op, 0), *op.dtype);
      return;
    }
    if (auto it = unary_fns().find(op.op); it != unary_fns().end()) {
      DType dt = compute_dtype(op_dtype(op, p_.vals[static_cast<size_t>(arg(op, 0))].dt));
      int a = convert(arg(op, 0), dt);
      int d = new_val(joined({a}, dt));
      emit(TOp{TOp::Unary, sfp_fn(it->second), d, {a}, -1, 0});
      val_[op.id] = d;
      return;
    }
    if (auto it = binary_fns().find(op.op); it != binary_fns().end()) {
      int a0 = arg(op, 0), b0 = arg(op, 1);
      DType in_dt = is_compare(it->second) ? promote(p_.vals[static_cast<size_t>(a0)].dt,
                                                     p_.vals[static_cast<size_t>(b0)].dt)
                                           : compute_dtype(op_dtype(op, DType::F32));
      in_dt = compute_dtype(in_dt);
      int a = convert(a0, in_dt), b = convert(b0, in_dt);
      int d = new_val(joined({a, b}, is_compare(it->second) ? DType::Bool : in_dt));
      emit(TOp{TOp::Binary, sfp_fn(it->second), d, {a, b}, -1, 0});
      val_[op.id] = d;
      return;
    }
    if (op.op == "where") {
      DType dt = compute_dtype(op_dtype(op, DType::F32));
      int c = convert(arg(op, 0), DType::Bool), a = convert(arg(op, 1), dt),
          b = convert(arg(op, 2), dt);
      int d = new_val(joined({c, a, b}, dt));
      emit(TOp{TOp::Select, isa::SfpFn::Copy, d, {c, a, b}, -1, 0});
      val_[op.id] = d;
      return;
    }
    if (op.op == "reduction") {
      lower_reduction(op);
      return;
    }
    fail(op, "operation is not supported on the SFP yet");
  }

  int reduce(isa::SfpFn fn, int x) {
    x = materialize(x, false, p_.space.col.size > 1);
    const TVal& xv = p_.vals[static_cast<size_t>(x)];
    int d = new_val(TVal{xv.dt, xv.r, false, xv.tiled, false});
    emit(TOp{TOp::Reduce, fn, d, {x}, -1, 0});
    return d;
  }

  void lower_reduction(const ir::Op& op) {
    const std::string& rt = op.reduction_type;
    if (rt == "argmax" || rt == "argmin") {  // the column index, exact in fp32 (< 2^24)
      if (p_.space.col.size > (int64_t{1} << 24)) fail(op, "argmax over more than 2^24 elements");
      val_[op.id] = reduce(sfp_fn(rt), convert(arg(op, 0), DType::F32));
      return;
    }
    if (rt == "any") {  // max of 0/1
      int m = reduce(sfp_fn("rmax"), convert(convert(arg(op, 0), DType::Bool), DType::F32));
      val_[op.id] = convert(m, DType::Bool);
      return;
    }
    DType dt = compute_dtype(op_dtype(op, DType::F32));
    int x = convert(arg(op, 0), dt);
    static const std::map<std::string, std::string> simple = {
        {"sum", "sum"}, {"max", "rmax"}, {"min", "rmin"}, {"prod", "prod"}};
    if (auto it = simple.find(rt); it != simple.end()) {
      val_[op.id] = reduce(sfp_fn(it->second), x);
      return;
    }
    if (rt == "welford_reduce") {
      const double n = static_cast<double>(p_.space.col.size);
      int sum = reduce(sfp_fn("sum"), x);
      int inv = scalar(dt, 1.0 / n);
      int mean = new_val(joined({sum}, dt));
      emit(TOp{TOp::Binary, sfp_fn("mul"), mean, {sum, inv}, -1, 0});
      int diff = new_val(joined({x, mean}, dt));
      emit(TOp{TOp::Binary,
               sfp_fn("sub"),
               diff,
               {materialize(x, false, p_.space.col.size > 1), mean},
               -1,
               0});
      int sq = new_val(joined({diff}, dt));
      emit(TOp{TOp::Binary, sfp_fn("mul"), sq, {diff, diff}, -1, 0});
      int m2 = reduce(sfp_fn("sum"), sq);
      int weight = scalar(dt, n);
      val_[op.id + ".0"] = mean;
      val_[op.id + ".1"] = m2;
      val_[op.id + ".2"] = weight;
      return;
    }
    fail(op, "reduction '" + rt + "' is not supported yet");
  }

  static isa::SfpFn sfp_fn(const std::string& name) {
    const isa::SfpFnInfo* f = isa::find_sfp_fn(name);
    if (!f) throw Error("sfp_fn.def", "no SFP function '" + name + "'");
    return f->fn;
  }

  void dce() {
    std::vector<bool> live_val(p_.vals.size(), false);
    std::vector<bool> keep(p_.ops.size(), false);
    for (size_t i = p_.ops.size(); i-- > 0;) {
      const TOp& op = p_.ops[i];
      bool live = op.kind == TOp::Store || (op.dst >= 0 && live_val[static_cast<size_t>(op.dst)]);
      if (!live) continue;
      keep[i] = true;
      for (int s : op.src) live_val[static_cast<size_t>(s)] = true;
    }
    std::vector<TOp> ops;
    for (size_t i = 0; i < p_.ops.size(); ++i)
      if (keep[i]) ops.push_back(p_.ops[i]);
    p_.ops = std::move(ops);
  }

  const ir::Graph& g_;
  const ir::Node& n_;
  const arch::ArchConfig& cfg_;
  std::string where_;
  bool keep_2d_ = false;
  TileProgram p_;
  std::vector<std::vector<int64_t>> coeffs_;
  std::map<std::string, int> access_of_;
  std::vector<int> store_access_;
  size_t next_store_ = 0;
  std::map<int, int> load_val_;
  std::map<std::string, int> val_;
  std::map<std::pair<int, DType>, int> conv_;
};

}  // namespace

int64_t storage_offset(const ir::Graph& g, const std::string& buffer) {
  int64_t off = 0;
  for (const ir::Buffer* b = &g.buffer(buffer);; b = &g.buffer(b->view_of)) {
    off += b->offset;
    if (b->view_of.empty()) return off;
  }
}

int64_t IterSpace::outer_count() const {
  int64_t n = 1;
  for (const auto& d : outer) n *= d.size;
  return n;
}

TileProgram build_tile_program(const ir::Graph& g, const ir::Node& n, const arch::ArchConfig& cfg,
                               const std::string& where, bool keep_2d) {
  return Builder(g, n, cfg, where, keep_2d).build();
}

}  // namespace spyre::compiler
