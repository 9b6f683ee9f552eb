#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "spyre/compiler/tile_program.h"
#include "spyre/error.h"

#include "tile_program_builder.h"

namespace spyre::compiler::tile_program_detail {
namespace {

bool is_float(DType d) { return isa::dtype_is_float(d); }
DType compute_dtype(DType d) {
  return (d == DType::F16 || d == DType::BF16 || d == DType::F8E4M3) ? DType::F32 : d;
}
DType promote(DType a, DType b) {
  if (is_float(a) || is_float(b)) return DType::F32;
  return isa::dtype_size_bytes(a) >= isa::dtype_size_bytes(b) ? a : b;
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

}  // namespace

TileProgram Builder::build() {
  p_.is_reduction = n_.kind == "reduction";
  plan_splits();
  collect_accesses(n_.body);
  build_space();
  for (const auto& op : n_.body) lower(op);
  dce();
  return std::move(p_);
}

int Builder::new_val(TVal v) {
  p_.vals.push_back(v);
  return static_cast<int>(p_.vals.size()) - 1;
}

int Builder::emit(TOp op) {
  p_.ops.push_back(std::move(op));
  return p_.ops.back().dst;
}

int Builder::convert(int v, DType dt) {
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

int Builder::materialize(int v, bool r, bool c) {
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

int Builder::scalar(DType dt, double value) {
  int d = new_val(TVal{dt, false, false, false, false});
  emit(TOp{TOp::Fill, isa::SfpFn::Copy, d, {}, -1, value});
  return d;
}

TVal Builder::joined(std::initializer_list<int> vs, DType dt) const {
  TVal t{dt, false, false, false, false};
  for (int v : vs) {
    const TVal& x = p_.vals[static_cast<size_t>(v)];
    t.r = t.r || x.r;
    t.c = t.c || x.c;
    t.tiled = t.tiled || x.tiled;
  }
  return t;
}

int Builder::arg(const ir::Op& op, size_t i) {
  if (i >= op.args.size()) fail(op, "expected " + std::to_string(i + 1) + " operands");
  return val_.at(op.args[i]);
}

void Builder::access_class(int a, bool& r, bool& c, bool& tiled) const {
  const IterSpace& s = p_.space;
  r = s.row.size > 1 && s.row.coeff[static_cast<size_t>(a)] != 0;
  c = s.col.size > 1 && s.col.coeff[static_cast<size_t>(a)] != 0;
  tiled = r;
  for (const auto& d : s.outer)
    if (d.coeff[static_cast<size_t>(a)] != 0) tiled = true;
  if (s.rows_total() == 1) tiled = true;  // one tile: everything is per tile
}

int Builder::column_start(int a) {
  IterSpace& s = p_.space;
  MemAccess m = p_.accesses[static_cast<size_t>(a)];
  m.expr = "^" + m.expr;
  p_.accesses.push_back(m);
  const auto ai = static_cast<size_t>(a);
  coeffs_.push_back(coeffs_[ai]);
  for (Dim* d : {&s.row, &s.col}) d->coeff.push_back(d == &s.col ? 0 : d->coeff[ai]);
  for (auto& d : s.outer) d.coeff.push_back(d.coeff[ai]);
  return static_cast<int>(p_.accesses.size()) - 1;
}

int Builder::untransposed(int v) {
  if (!p_.vals[static_cast<size_t>(v)].transposed) return v;
  TVal t = p_.vals[static_cast<size_t>(v)];
  t.transposed = false;
  int d = new_val(t);
  emit(TOp{TOp::Unary, isa::SfpFn::Copy, d, {v}, -1, 0});
  return d;
}

void Builder::lower_gather(const ir::Op& op, int a, int idx) {
  if (!mask_.empty()) {  // clamp: index 0 where the mask is false
    const int m = mask_.back();
    const int zero = scalar(DType::I64, 0);
    int d = new_val(joined({m, idx, zero}, DType::I64));
    emit(TOp{TOp::Select, isa::SfpFn::Copy, d, {m, idx, zero}, -1, 0});
    idx = d;
  }
  idx = untransposed(idx);
  TVal t = p_.vals[static_cast<size_t>(idx)];
  t.dt = p_.accesses[static_cast<size_t>(a)].dt;
  int d = new_val(t);
  emit(TOp{TOp::Gather, isa::SfpFn::Copy, d, {idx}, a, 0});
  val_[op.id] = d;
  if (mask_.empty()) load_val_[a] = d;  // a masked load depends on its mask
}

int Builder::indirect_index(const Indirect& ind, bool rows_ok, bool& rows) {
  const IterSpace& s = p_.space;
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
  // Whole rows: when the affine rest walks the columns contiguously and no symbol varies
  // along them, one index per row (its first element) and one transfer of rows of cols.
  rows =
      rows_ok && ind.iota >= 0 && s.col.size > 1 && s.col.coeff[static_cast<size_t>(ind.iota)] == 1;
  for (const auto& sc : ind.syms) rows = rows && !p_.vals[static_cast<size_t>(val_.at(sc.first))].c;
  int iota = ind.iota;
  if (rows) iota = column_start(ind.iota);
  if (iota >= 0) {
    TVal t;
    t.dt = DType::I64;
    access_class(iota, t.r, t.c, t.tiled);
    int d = new_val(t);
    emit(TOp{TOp::Iota, isa::SfpFn::Copy, d, {}, iota, 0});
    add(d);
  }
  if (idx < 0) idx = scalar(DType::I64, 0);
  return idx;
}

void Builder::lower_scatter(const ir::Op& op, int a, const Indirect& ind) {
  const IterSpace& s = p_.space;
  bool rows = false;
  int idx = indirect_index(ind, true, rows);
  // Every element of the tile is written: the value (and, element by element, the index)
  // cover the tile's rows and cols, row-major.
  const bool r = s.row.size > 1, c = s.col.size > 1;
  int v = convert(val_.at(op.args[0]), p_.accesses[static_cast<size_t>(a)].dt);
  v = untransposed(materialize(v, r, c));
  idx = untransposed(materialize(idx, r, !rows && c));
  emit(TOp{TOp::Scatter, isa::SfpFn::Copy, -1, {v, idx}, a, 0});
}

void Builder::lower(const ir::Op& op) {
  const IterSpace& s = p_.space;
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
    // false (clamped gathers), so nothing outside the buffer is read. A nested block's
    // gathers are clamped by every enclosing mask: an inner mask can be true where an outer
    // one is false and the inner index out of range.
    const int mask = convert(arg(op, 0), DType::Bool);
    int all = mask;
    if (!mask_.empty()) {
      all = new_val(joined({mask_.back(), mask}, DType::Bool));
      emit(TOp{TOp::Binary, sfp_fn("and"), all, {mask_.back(), mask}, -1, 0});
    }
    mask_.push_back(all);
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
  if (op.op == "load" && computed_.count(load_key(op, !mask_.empty()))) {
    const std::string key = load_key(op, !mask_.empty());
    const int a = access_of_.at(key);
    if (auto it = load_val_.find(a); it != load_val_.end()) {
      val_[op.id] = it->second;
      return;
    }
    lower_gather(op, a, lower_tree(computed_.at(key)));
    return;
  }
  if (op.op == "load" && indirect_.count(load_key(op, !mask_.empty()))) {
    const std::string key = load_key(op, !mask_.empty());
    const int a = access_of_.at(key);
    if (auto it = load_val_.find(a); it != load_val_.end()) {
      val_[op.id] = it->second;
      return;
    }
    bool rows = false;
    const int idx = indirect_index(indirect_.at(key), mask_.empty(), rows);
    if (rows) {
      TVal t = p_.vals[static_cast<size_t>(idx)];
      t.dt = p_.accesses[static_cast<size_t>(a)].dt;
      t.c = true;
      t.transposed = false;
      int d = new_val(t);
      emit(TOp{TOp::Gather, isa::SfpFn::Copy, d, {idx}, a, 0});
      val_[op.id] = load_val_[a] = d;
      return;
    }
    lower_gather(op, a, idx);
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
    if (auto it = indirect_.find(access_key(op, false)); it != indirect_.end()) {
      lower_scatter(op, a, it->second);
      return;
    }
    bool r, c, tiled;
    access_class(a, r, c, tiled);
    int v = convert(val_.at(op.args[0]), p_.accesses[static_cast<size_t>(a)].dt);
    v = materialize(v, r, c);
    // A store contiguous along the rows writes runs of a tile's rows: the value is copied into
    // the [cols, rows] layout first (and back for a transposed load stored row-wise).
    const auto ai = static_cast<size_t>(a);
    const bool want_t = r && c && s.row.coeff[ai] == 1 && s.col.coeff[ai] != 1;
    if (p_.vals[static_cast<size_t>(v)].transposed != want_t) {
      TVal t = p_.vals[static_cast<size_t>(v)];
      t.transposed = want_t;
      int d = new_val(t);
      emit(TOp{TOp::Unary, isa::SfpFn::Copy, d, {v}, -1, 0});
      v = d;
    }
    emit(TOp{TOp::Store, isa::SfpFn::Copy, -1, {v}, a, 0});
    return;
  }
  if (op.op == "constant") {
    val_[op.id] = scalar(compute_dtype(op_dtype(op, DType::F32)), constant_value(op.value, where_));
    return;
  }
  if (op.op == "index_expr" && computed_expr_.count(op.index->expr)) {
    val_[op.id] = convert(lower_tree(computed_expr_.at(op.index->expr)),
                          compute_dtype(op_dtype(op, DType::I64)));
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
      op.op == "bitwise_xor" || op.op == "bitwise_left_shift" || op.op == "bitwise_right_shift") {
    DType dt = op_dtype(op, p_.vals[static_cast<size_t>(arg(op, 0))].dt);
    if (is_float(dt)) fail(op, "bitwise op on a floating-point dtype");
    std::vector<int> a;
    for (size_t i = 0; i < op.args.size(); ++i) a.push_back(convert(arg(op, i), dt));
    const bool b = dt == DType::Bool;
    const std::string fn = op.op == "bitwise_not"          ? (b ? "not" : "bitnot")
                           : op.op == "bitwise_and"        ? "bitand"
                           : op.op == "bitwise_or"         ? "bitor"
                           : op.op == "bitwise_xor"        ? "bitxor"
                           : op.op == "bitwise_left_shift" ? "shl"
                                                           : "shr";
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
  if (op.op == "isnan" || op.op == "isinf" || op.op == "signbit") {  // float in, bool out
    DType dt = compute_dtype(p_.vals[static_cast<size_t>(arg(op, 0))].dt);
    if (!is_float(dt)) dt = DType::F32;
    const int a = convert(arg(op, 0), dt);
    int d;
    if (op.op == "isnan") {  // x != x
      d = new_val(joined({a}, DType::Bool));
      emit(TOp{TOp::Binary, isa::SfpFn::Ne, d, {a, a}, -1, 0});
    } else if (op.op == "isinf") {  // |x| == inf
      const int m = new_val(joined({a}, dt));
      emit(TOp{TOp::Unary, isa::SfpFn::Abs, m, {a}, -1, 0});
      const int inf = scalar(dt, std::numeric_limits<double>::infinity());
      d = new_val(joined({m, inf}, DType::Bool));
      emit(TOp{TOp::Binary, isa::SfpFn::Eq, d, {m, inf}, -1, 0});
    } else {  // the sign bit as 0 / 1 in the float dtype, then bool
      const int b = new_val(joined({a}, dt));
      emit(TOp{TOp::Unary, isa::SfpFn::SignBit, b, {a}, -1, 0});
      d = convert(b, DType::Bool);
    }
    val_[op.id] = d;
    return;
  }
  if (op.op == "frexp") {  // two results: v.0 the mantissa (x's dtype), v.1 the exponent (int32)
    DType dt = compute_dtype(op_dtype(op, p_.vals[static_cast<size_t>(arg(op, 0))].dt));
    if (!is_float(dt)) fail(op, "frexp of an integer dtype");
    const int a = convert(arg(op, 0), dt);
    const int m = new_val(joined({a}, dt)), e = new_val(joined({a}, dt));
    emit(TOp{TOp::Unary, isa::SfpFn::FrexpMantissa, m, {a}, -1, 0});
    emit(TOp{TOp::Unary, isa::SfpFn::FrexpExponent, e, {a}, -1, 0});
    val_[op.id + ".0"] = m;
    val_[op.id + ".1"] = convert(e, DType::I32);
    return;
  }
  if (op.op == "nextafter") {  // one unit in the last place of the op's own dtype
    const DType dt = op_dtype(op, DType::F32), cdt = compute_dtype(dt);
    if (!is_float(dt)) fail(op, "nextafter of an integer dtype");
    const int a = convert(arg(op, 0), cdt), b = convert(arg(op, 1), cdt);
    const int d = new_val(joined({a, b}, cdt));
    const isa::SfpFn fn = dt == DType::F16    ? isa::SfpFn::NextAfterF16
                          : dt == DType::BF16 ? isa::SfpFn::NextAfterBF16
                                              : isa::SfpFn::NextAfter;
    emit(TOp{TOp::Binary, fn, d, {a, b}, -1, 0});
    val_[op.id] = d;
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
    // A compare reads its operands' common type and gives a bool; rand/randn read a 32-bit
    // seed and offset exactly (an fp32 seed would lose its low bits) and give the op's float.
    const bool random = is_random(it->second);
    DType in_dt = is_compare(it->second) ? promote(p_.vals[static_cast<size_t>(a0)].dt,
                                                   p_.vals[static_cast<size_t>(b0)].dt)
                  : random               ? DType::I32
                                         : compute_dtype(op_dtype(op, DType::F32));
    in_dt = compute_dtype(in_dt);
    int a = convert(a0, in_dt), b = convert(b0, in_dt);
    const DType out_dt = is_compare(it->second) ? DType::Bool
                         : random               ? compute_dtype(op_dtype(op, DType::F32))
                                                : in_dt;
    int d = new_val(joined({a, b}, out_dt));
    emit(TOp{TOp::Binary, sfp_fn(it->second), d, {a, b}, -1, 0});
    val_[op.id] = d;
    return;
  }
  if (op.op == "fma") {  // a * b + c: a multiply and an add (one rounding each, in fp32)
    const DType dt = compute_dtype(op_dtype(op, DType::F32));
    const int a = convert(arg(op, 0), dt), b = convert(arg(op, 1), dt), c = convert(arg(op, 2), dt);
    const int m = new_val(joined({a, b}, dt));
    emit(TOp{TOp::Binary, isa::SfpFn::Mul, m, {a, b}, -1, 0});
    const int d = new_val(joined({m, c}, dt));
    emit(TOp{TOp::Binary, isa::SfpFn::Add, d, {m, c}, -1, 0});
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

int Builder::reduce(isa::SfpFn fn, int x) {
  x = materialize(x, false, p_.space.col.size > 1);
  const TVal& xv = p_.vals[static_cast<size_t>(x)];
  int d = new_val(TVal{xv.dt, xv.r, false, xv.tiled, false});
  emit(TOp{TOp::Reduce, fn, d, {x}, -1, 0});
  return d;
}

void Builder::lower_reduction(const ir::Op& op) {
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

isa::SfpFn Builder::sfp_fn(const std::string& name) {
  const isa::SfpFnInfo* f = isa::find_sfp_fn(name);
  if (!f) throw Error("sfp_fn.def", "no SFP function '" + name + "'");
  return f->fn;
}

void Builder::dce() {
  std::vector<bool> live_val(p_.vals.size(), false);
  std::vector<bool> keep(p_.ops.size(), false);
  for (size_t i = p_.ops.size(); i-- > 0;) {
    const TOp& op = p_.ops[i];
    bool live = op.kind == TOp::Store || op.kind == TOp::Scatter ||
                (op.dst >= 0 && live_val[static_cast<size_t>(op.dst)]);
    if (!live) continue;
    keep[i] = true;
    for (int s : op.src) live_val[static_cast<size_t>(s)] = true;
  }
  std::vector<TOp> ops;
  for (size_t i = 0; i < p_.ops.size(); ++i)
    if (keep[i]) ops.push_back(p_.ops[i]);
  p_.ops = std::move(ops);
}

}  // namespace spyre::compiler::tile_program_detail

namespace spyre::compiler {

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
  try {
    return tile_program_detail::Builder(g, n, cfg, where, keep_2d).build();
  } catch (const tile_program_detail::UnmergedReduction&) {
    try {
      return tile_program_detail::Builder(g, n, cfg, where, keep_2d, true).build();
    } catch (const tile_program_detail::UnmergedReduction&) {
      const auto merged = tile_program_detail::merge_reduce_vars(n);
      if (!merged) throw;
      return tile_program_detail::Builder(g, *merged, cfg, where, keep_2d, true).build();
    }
  }
}

}  // namespace spyre::compiler
