#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
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
    plan_splits();
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

  // Loads inside a masked sub-block (`masked`) are clamped gathers: see lower().
  void collect_accesses(const std::vector<ir::Op>& body, bool masked = false) {
    for (const auto& op : body) {
      if (op.op == "masked") {
        if (op.args.empty() || op.body.empty()) fail(op, "masked op without mask or sub-block");
        collect_accesses(op.body, true);
        continue;
      }
      if (op.op == "indirect_indexing") {
        indirect_syms_.insert(op.id);
        continue;
      }
      if (op.op == "index_expr") {
        auto lin = op.index ? linear(*op.index) : std::nullopt;
        if (!lin)
          fail(op, "index_expr '" + (op.index ? op.index->expr : std::string()) +
                       "' is not affine in the loop variables");
        const std::string key = "|" + op.index->expr;
        if (access_of_.count(key)) continue;
        access_of_[key] = static_cast<int>(p_.accesses.size());
        MemAccess m;
        m.expr = op.index->expr;
        m.dt = DType::I64;
        m.offset = lin->first;
        p_.accesses.push_back(m);
        coeffs_.push_back(lin->second);
        continue;
      }
      if (op.op != "load" && op.op != "store" && op.op != "store_reduction") continue;
      if (op.op == "load" && op.index && (masked || !op.index->affine) &&
          collect_indirect(op, masked))
        continue;
      auto lin = op.index ? linear(*op.index) : std::nullopt;
      if (!lin)
        fail(op, "index '" + (op.index ? op.index->expr : std::string()) + "' of buffer " +
                     op.buffer + " is not affine in the loop variables");
      if (op.op == "load") {
        auto key = op.buffer + "|" + op.index->expr;
        if (access_of_.count(key)) continue;
        access_of_[key] = static_cast<int>(p_.accesses.size());
      }
      if (op.op != "load") store_access_.push_back(static_cast<int>(p_.accesses.size()));
      MemAccess m;
      m.buffer = op.buffer;
      m.expr = op.index->expr;
      m.dt = g_.storage_of(op.buffer).dtype;
      m.offset = lin->first + storage_offset(g_, op.buffer);
      if (m.offset < 0) fail(op, "negative index offset");
      for (size_t j = 0; j < sub_.size(); ++j)
        if (lin->second[j] < 0)
          fail(op, "negative stride " + std::to_string(lin->second[j]) + " for " +
                       var_name(sub_[j].var) + " is not supported yet");
      p_.accesses.push_back(m);
      coeffs_.push_back(lin->second);
    }
  }

  // A load at `c1*s1 + ... + affine(vars)` with indirect_indexing symbols s: the affine rest
  // becomes an iota access (its coefficients take part in merging), the buffer a Gather access
  // with coefficients 0. False when the index has no such symbol.
  bool collect_indirect(const ir::Op& op, bool masked) {
    const std::string& e = op.index->expr;
    Indirect ind;
    ir::Affine rest;
    if (op.index->affine) rest = *op.index->affine;
    // A masked load with a FloorDiv/ModularIndexing index: that index, clamped like the rest.
    const auto masked_lin = masked && !op.index->affine ? linear(*op.index) : std::nullopt;
    std::string norm;
    for (char ch : e)
      if (ch != ' ') norm += ch;
    size_t i = op.index->affine || masked_lin ? norm.size() : 0;
    bool any = false;
    while (i < norm.size()) {
      int sign = 1;
      if (norm[i] == '+' || norm[i] == '-') sign = norm[i++] == '-' ? -1 : 1;
      size_t j = i;
      while (j < norm.size() && norm[j] != '+' && norm[j] != '-') ++j;
      const std::string term = norm.substr(i, j - i);
      i = j;
      int64_t c = sign;
      std::string name = term;
      if (auto star = term.find('*'); star != std::string::npos) {
        const std::string a = term.substr(0, star);
        if (a.empty() || a.find_first_not_of("0123456789") != std::string::npos) return false;
        c *= std::stoll(a);
        name = term.substr(star + 1);
      }
      if (name.empty()) return false;
      if (name.find_first_not_of("0123456789") == std::string::npos) {
        rest.offset += c * std::stoll(name);
        continue;
      }
      if (indirect_syms_.count(name)) {
        ind.syms.emplace_back(name, c);
        any = true;
        continue;
      }
      bool var = false;
      for (const auto* vars : {&n_.vars, &n_.reduce_vars})
        for (const auto& v : *vars) var = var || v == name;
      if (!var) return false;
      rest.coeffs[name] += c;
    }
    if (!any && !masked) return false;
    const std::string key = load_key(op, masked);
    if (access_of_.count(key)) return true;
    if (masked_lin) rest.offset = masked_lin->first;
    const std::vector<int64_t> coeffs = masked_lin ? masked_lin->second : expand(rest),
                               zeros(sub_.size(), 0);
    bool affine_part = rest.offset != 0;
    for (int64_t c : coeffs) affine_part = affine_part || c != 0;
    if (affine_part) {
      ind.iota = static_cast<int>(p_.accesses.size());
      MemAccess m;
      m.expr = "@" + e;
      m.dt = DType::I64;
      m.offset = rest.offset;
      p_.accesses.push_back(m);
      coeffs_.push_back(coeffs);
    }
    access_of_[key] = static_cast<int>(p_.accesses.size());
    MemAccess m;
    m.buffer = op.buffer;
    m.expr = e;
    m.dt = g_.storage_of(op.buffer).dtype;
    m.offset = storage_offset(g_, op.buffer);
    const ir::Buffer& b = g_.buffer(op.buffer);
    m.limit = 1;
    for (size_t d = 0; d < b.size.size(); ++d) {
      if (b.size[d] == 0) m.limit = 0;
      if (b.stride[d] < 0) fail(op, "negative buffer stride");
      m.limit += (b.size[d] - 1) * b.stride[d];
    }
    if (b.size.empty()) m.limit = 1;
    p_.accesses.push_back(m);
    coeffs_.push_back(zeros);
    indirect_[key] = ind;
    return true;
  }

  Dim dim_of(size_t j) const {  // sub-dimension j
    Dim d;
    d.size = sub_[j].size;
    for (const auto& c : coeffs_) d.coeff.push_back(c[j]);
    return d;
  }

  // --- FloorDiv / ModularIndexing: each variable is split at the divisors its non-affine
  // indices use (x -> x_hi, x_mid, x_lo), so every index is affine in the sub-dimensions.
  struct SubDim {
    size_t var;  // index into vars then reduce_vars
    int64_t stride, size;
  };
  struct Atom {
    enum Kind { Const, Var, Div, Mod } kind = Const;
    size_t var = 0;
    int64_t c = 1, d = 1, m = 0;
  };
  size_t nvars() const { return n_.vars.size() + n_.reduce_vars.size(); }
  int64_t var_size(size_t v) const {
    return v < n_.vars.size() ? n_.sizes[v] : n_.reduce_sizes[v - n_.vars.size()];
  }
  std::string var_name(size_t v) const {
    return v < n_.vars.size() ? n_.vars[v] : n_.reduce_vars[v - n_.vars.size()];
  }
  std::optional<size_t> var_index(const std::string& name) const {
    for (size_t v = 0; v < nvars(); ++v)
      if (var_name(v) == name) return v;
    return std::nullopt;
  }
  static std::string strip_parens(std::string t) {
    while (t.size() >= 2 && t.front() == '(' && t.back() == ')') {
      int depth = 0;
      bool whole = true;
      for (size_t i = 0; i + 1 < t.size(); ++i) {
        depth += t[i] == '(' ? 1 : t[i] == ')' ? -1 : 0;
        if (depth == 0) whole = false;
      }
      if (!whole) break;
      t = t.substr(1, t.size() - 2);
    }
    return t;
  }
  static bool is_int(const std::string& t) {
    return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
  }
  static std::vector<std::string> split_args(const std::string& t) {
    std::vector<std::string> out(1);
    int depth = 0;
    for (char ch : t) {
      depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
      if (ch == ',' && depth == 0)
        out.emplace_back();
      else
        out.back() += ch;
    }
    return out;
  }
  // `expr` as a sum of atoms (c*x, c*(x//d), c*FloorDiv(x, d), c*ModularIndexing(x, d, m),
  // constants); nullopt for anything else.
  std::optional<std::vector<Atom>> parse(const std::string& expr) const {
    std::string e;
    for (char ch : expr)
      if (ch != ' ') e += ch;
    std::vector<std::pair<int, std::string>> terms;
    int depth = 0, sign = 1;
    std::string cur;
    for (char ch : e) {
      if (depth == 0 && (ch == '+' || ch == '-')) {
        if (!cur.empty()) terms.emplace_back(sign, cur);
        cur.clear();
        sign = ch == '-' ? -1 : 1;
        continue;
      }
      depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
      cur += ch;
    }
    if (!cur.empty()) terms.emplace_back(sign, cur);
    std::vector<Atom> out;
    for (auto [sg, t] : terms) {
      Atom a;
      a.c = sg;
      if (auto star = t.find('*'); star != std::string::npos && is_int(t.substr(0, star))) {
        a.c *= std::stoll(t.substr(0, star));
        t = t.substr(star + 1);
      }
      t = strip_parens(t);
      if (is_int(t)) {
        a.kind = Atom::Const;
        a.d = std::stoll(t);
      } else if (auto v = var_index(t)) {
        a.kind = Atom::Var;
        a.var = *v;
      } else if (auto dd = t.find("//"); dd != std::string::npos) {
        auto v = var_index(strip_parens(t.substr(0, dd)));
        if (!v || !is_int(t.substr(dd + 2))) return std::nullopt;
        a.kind = Atom::Div, a.var = *v, a.d = std::stoll(t.substr(dd + 2));
      } else {
        const bool fd = t.rfind("FloorDiv(", 0) == 0, mi = t.rfind("ModularIndexing(", 0) == 0;
        if ((!fd && !mi) || t.back() != ')') return std::nullopt;
        auto args = split_args(t.substr(t.find('(') + 1, t.size() - t.find('(') - 2));
        if (args.size() != (fd ? 2u : 3u)) return std::nullopt;
        auto v = var_index(strip_parens(args[0]));
        for (size_t i = 1; i < args.size(); ++i)
          if (!is_int(args[i])) return std::nullopt;
        if (!v) return std::nullopt;
        a.kind = fd ? Atom::Div : Atom::Mod, a.var = *v, a.d = std::stoll(args[1]);
        if (mi) a.m = std::stoll(args[2]);
        if (a.d <= 0 || (mi && a.m <= 0)) return std::nullopt;
      }
      out.push_back(a);
    }
    return out;
  }
  void scan_splits(const std::vector<ir::Op>& body, std::vector<std::set<int64_t>>& pts) const {
    for (const auto& op : body) {
      scan_splits(op.body, pts);
      if (!op.index || op.index->affine) continue;
      auto atoms = parse(op.index->expr);
      if (!atoms) continue;
      for (const Atom& a : *atoms) {
        if (a.kind == Atom::Div) pts[a.var].insert(a.d);
        if (a.kind == Atom::Mod) pts[a.var].insert(a.d), pts[a.var].insert(a.d * a.m);
      }
    }
  }
  void plan_splits() {
    std::vector<std::set<int64_t>> pts(nvars());
    scan_splits(n_.body, pts);
    for (size_t v = 0; v < nvars(); ++v) {
      const int64_t size = var_size(v);
      std::vector<int64_t> b{1};
      for (int64_t p : pts[v])
        if (p > 1 && p < size) b.push_back(p);
      b.push_back(size);
      for (size_t i = 1; i < b.size(); ++i)
        if (b[i] % b[i - 1] != 0)
          throw Error(where_, "index divisors of " + var_name(v) + " (size " +
                                  std::to_string(size) +
                                  ") do not nest; FloorDiv/ModularIndexing not supported there");
      if (b.size() > 2 && keep_2d_)
        throw Error(where_, "FloorDiv/ModularIndexing index in a matmul epilogue");
      for (size_t i = b.size() - 1; i-- > 0;)  // outermost first
        sub_.push_back(SubDim{v, b[i], std::max<int64_t>(1, b[i + 1] / b[i])});
    }
  }
  std::vector<int64_t> expand(const ir::Affine& af) const {
    std::vector<int64_t> out;
    for (const auto& sd : sub_) out.push_back(af.coeff(var_name(sd.var)) * sd.stride);
    return out;
  }
  // (offset, coefficient per sub-dimension) of an index; nullopt when not expressible.
  std::optional<std::pair<int64_t, std::vector<int64_t>>> linear(const ir::Index& ix) const {
    if (ix.affine) return std::make_pair(ix.affine->offset, expand(*ix.affine));
    auto atoms = parse(ix.expr);
    if (!atoms) return std::nullopt;
    std::pair<int64_t, std::vector<int64_t>> out{0, std::vector<int64_t>(sub_.size(), 0)};
    for (const Atom& a : *atoms) {
      if (a.kind == Atom::Const) {
        out.first += a.c * a.d;
        continue;
      }
      for (size_t j = 0; j < sub_.size(); ++j) {
        const SubDim& sd = sub_[j];
        if (sd.var != a.var) continue;
        const int64_t st = sd.stride;
        int64_t k = 0;
        if (a.kind == Atom::Var) k = st;
        if (a.kind == Atom::Div && st >= a.d) k = st / a.d;
        if (a.kind == Atom::Mod && st >= a.d && st < a.d * a.m) k = st / a.d;
        out.second[j] += a.c * k;
      }
    }
    return out;
  }

  void build_space() {
    const size_t na = p_.accesses.size();
    Dim unit{1, std::vector<int64_t>(na, 0)};
    std::vector<Dim> pw, red;
    for (size_t j = 0; j < sub_.size(); ++j)
      (sub_[j].var < n_.vars.size() ? pw : red).push_back(dim_of(j));
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
    if (op.op == "indirect_indexing") {  // a negative index counts from the end: + size
      const int v = convert(arg(op, 0), DType::I64);
      if (!op.value.is_number_integer()) {
        val_[op.id] = v;
        return;
      }
      const int zero = scalar(DType::I64, 0), size = scalar(DType::I64, op.value.get<double>());
      int neg = new_val(joined({v}, DType::Bool));
      emit(TOp{TOp::Binary, sfp_fn("lt"), neg, {v, zero}, -1, 0});
      int wrapped = new_val(joined({v}, DType::I64));
      emit(TOp{TOp::Binary, sfp_fn("add"), wrapped, {v, size}, -1, 0});
      int d = new_val(joined({v}, DType::I64));
      emit(TOp{TOp::Select, isa::SfpFn::Copy, d, {neg, wrapped, v}, -1, 0});
      val_[op.id] = d;
      return;
    }
    if (op.op == "masked") {
      // dst = mask ? sub-block : value; the sub-block's loads read index 0 where the mask is
      // false (clamped gathers), so nothing outside the buffer is read.
      const int mask = convert(arg(op, 0), DType::Bool);
      mask_.push_back(mask);
      for (const auto& sub : op.body) lower(sub);
      mask_.pop_back();
      const std::string& last = op.body.back().id;
      DType dt = compute_dtype(op_dtype(op, p_.vals[static_cast<size_t>(val_.at(last))].dt));
      int a = convert(val_.at(last), dt);
      int f = scalar(dt, constant_value(op.value, where_));
      int d = new_val(joined({mask, a, f}, dt));
      emit(TOp{TOp::Select, isa::SfpFn::Copy, d, {mask, a, f}, -1, 0});
      val_[op.id] = d;
      return;
    }
    if (op.op == "load" && indirect_.count(load_key(op, !mask_.empty()))) {
      const std::string key = load_key(op, !mask_.empty());
      const int a = access_of_.at(key);
      if (auto it = load_val_.find(a); it != load_val_.end()) {
        val_[op.id] = it->second;
        return;
      }
      const Indirect& ind = indirect_.at(key);
      int idx = -1;
      auto add = [&](int v) {
        if (idx < 0) {
          idx = v;
          return;
        }
        int d = new_val(joined({idx, v}, DType::I64));
        emit(TOp{TOp::Binary, sfp_fn("add"), d, {idx, v}, -1, 0});
        idx = d;
      };
      for (const auto& [sym, c] : ind.syms) {
        int v = val_.at(sym);
        if (c != 1) {
          int k = scalar(DType::I64, static_cast<double>(c));
          int d = new_val(joined({v}, DType::I64));
          emit(TOp{TOp::Binary, sfp_fn("mul"), d, {v, k}, -1, 0});
          v = d;
        }
        add(v);
      }
      if (ind.iota >= 0) {
        TVal t;
        t.dt = DType::I64;
        access_class(ind.iota, t.r, t.c, t.tiled);
        int d = new_val(t);
        emit(TOp{TOp::Iota, isa::SfpFn::Copy, d, {}, ind.iota, 0});
        add(d);
      }
      if (!mask_.empty()) {  // clamp: index 0 where the mask is false
        const int m = mask_.back();
        const int zero = scalar(DType::I64, 0);
        int d = new_val(joined({m, idx, zero}, DType::I64));
        emit(TOp{TOp::Select, isa::SfpFn::Copy, d, {m, idx, zero}, -1, 0});
        idx = d;
      }
      if (p_.vals[static_cast<size_t>(idx)].transposed) {
        TVal t = p_.vals[static_cast<size_t>(idx)];
        t.transposed = false;
        int d = new_val(t);
        emit(TOp{TOp::Unary, isa::SfpFn::Copy, d, {idx}, -1, 0});
        idx = d;
      }
      TVal t = p_.vals[static_cast<size_t>(idx)];
      t.dt = p_.accesses[static_cast<size_t>(a)].dt;
      int d = new_val(t);
      emit(TOp{TOp::Gather, isa::SfpFn::Copy, d, {idx}, a, 0});
      val_[op.id] = d;
      if (mask_.empty()) load_val_[a] = d;  // a masked load depends on its mask
      return;
    }
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
  struct Indirect {
    std::vector<std::pair<std::string, int64_t>> syms;  // symbol, coefficient
    int iota = -1;                                      // the affine rest (an iota access)
  };
  std::set<std::string> indirect_syms_;
  std::vector<SubDim> sub_;  // the iteration variables' sub-dimensions, outermost first
  std::vector<int> mask_;    // masks of the enclosing masked sub-blocks
  static std::string load_key(const ir::Op& op, bool masked) {
    return (masked ? "?" : "") + op.buffer + "|" + op.index->expr;
  }
  std::map<std::string, Indirect> indirect_;
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
