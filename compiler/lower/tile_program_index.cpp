// Index analysis for the tile-program Builder: affine indices, FloorDiv/ModularIndexing
// splitting into sub-dimensions, indirect and masked loads, and the iteration space.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spyre/compiler/tile_program.h"
#include "spyre/error.h"
#include "tile_program_builder.h"

namespace spyre::compiler::tile_program_detail {
namespace {

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

}  // namespace

int64_t Builder::extent(const ir::Op& op) const {
  const ir::Buffer& b = g_.buffer(op.buffer);
  int64_t limit = 1;
  for (size_t d = 0; d < b.size.size(); ++d) {
    if (b.size[d] == 0) return 0;
    if (b.stride[d] < 0) fail(op, "negative buffer stride");
    limit += (b.size[d] - 1) * b.stride[d];
  }
  return limit;
}

void Builder::collect_accesses(const std::vector<ir::Op>& body, bool masked) {
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
      if (!lin && op.index) {  // FloorDiv, Mod, Abs, Min, Max of the loop variables
        if (auto tree = index_tree(op.index->expr)) {
          computed_expr_[op.index->expr] = *tree;
          continue;
        }
      }
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
    if (op.op == "store" && op.index && !op.index->affine && !masked &&
        collect_indirect(op, false)) {
      store_access_.push_back(access_of_.at(access_key(op, false)));
      continue;
    }
    auto lin = op.index ? linear(*op.index) : std::nullopt;
    if (!lin && op.op == "load" && op.index && collect_computed(op, masked)) continue;
    if (!lin)
      fail(op, "index '" + (op.index ? op.index->expr : std::string()) + "' of buffer " +
                   op.buffer + " is not affine in the loop variables");
    // A load that walks a variable backwards (flip, rot90) is an element gather at the
    // computed index: DMA moves whole ascending runs only.
    const bool backwards =
        std::any_of(lin->second.begin(), lin->second.end(), [](int64_t c) { return c < 0; });
    if (backwards && op.op == "load" && collect_computed(op, masked)) continue;
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

bool Builder::collect_indirect(const ir::Op& op, bool masked) {
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
  const std::string key = access_key(op, masked);
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
  m.limit = extent(op);
  p_.accesses.push_back(m);
  coeffs_.push_back(zeros);
  indirect_[key] = ind;
  return true;
}

Dim Builder::dim_of(size_t j) const {  // sub-dimension j
  Dim d;
  d.size = sub_[j].size;
  for (const auto& c : coeffs_) d.coeff.push_back(c[j]);
  return d;
}

std::optional<size_t> Builder::var_index(const std::string& name) const {
  for (size_t v = 0; v < nvars(); ++v)
    if (var_name(v) == name) return v;
  return std::nullopt;
}

std::string Builder::strip_parens(std::string t) {
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

bool Builder::is_int(const std::string& t) {
  return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos;
}

std::vector<std::string> Builder::split_args(const std::string& t) {
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

std::optional<std::vector<Builder::Atom>> Builder::parse(const std::string& expr) const {
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

void Builder::scan_splits(const std::vector<ir::Op>& body,
                          std::vector<std::set<int64_t>>& pts) const {
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

void Builder::plan_splits() {
  std::vector<std::set<int64_t>> pts(nvars());
  scan_splits(n_.body, pts);
  for (size_t v = 0; v < nvars(); ++v) {
    const int64_t size = var_size(v);
    std::vector<int64_t> b{1};
    if (whole_reduce_ && v >= n_.vars.size()) pts[v].clear();  // indices computed on the SFP
    for (int64_t p : pts[v])
      if (p > 1 && p < size) b.push_back(p);
    b.push_back(size);
    // Divisors that do not nest (x // 2 with x of odd size, x // 2 beside x // 3): the variable
    // stays whole, and the loads and index_exprs that divide it take their index computed on
    // the SFP (collect_computed) instead of a split into affine sub-dimensions.
    for (size_t i = 1; i < b.size(); ++i)
      if (b[i] % b[i - 1] != 0) {
        b = {1, size};
        break;
      }
    if (b.size() > 2 && keep_2d_)
      throw Error(where_, "FloorDiv/ModularIndexing index in a matmul epilogue");
    for (size_t i = b.size() - 1; i-- > 0;)  // outermost first
      sub_.push_back(SubDim{v, b[i], std::max<int64_t>(1, b[i + 1] / b[i])});
  }
}

std::vector<int64_t> Builder::expand(const ir::Affine& af) const {
  std::vector<int64_t> out;
  for (const auto& sd : sub_) out.push_back(af.coeff(var_name(sd.var)) * sd.stride);
  return out;
}

std::optional<std::pair<int64_t, std::vector<int64_t>>> Builder::linear(const ir::Index& ix) const {
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
      // A sub-dimension lies wholly inside one period of the divisor or spans whole ones
      // (plan_splits cuts the variables there); otherwise the index is not linear in it.
      const int64_t span = st * sd.size;
      if (a.kind != Atom::Var && span > a.d && (st % a.d != 0)) return std::nullopt;
      if (a.kind == Atom::Mod && span > a.d * a.m && st < a.d * a.m) return std::nullopt;
      if (a.kind == Atom::Var) k = st;
      if (a.kind == Atom::Div && st >= a.d) k = st / a.d;
      if (a.kind == Atom::Mod && st >= a.d && st < a.d * a.m) k = st / a.d;
      out.second[j] += a.c * k;
    }
  }
  return out;
}

void Builder::build_space() {
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
      throw UnmergedReduction(where_,
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
    int64_t cols = row_length(d.size, 1);
    if (cols < 16 && d.size <= 65536) cols = d.size;  // a prime-ish size: one long row
    const int64_t w = layout_row(d);
    if (cfg_.dram_tensor_layout == "stick" && w > 0) cols = w;
    s.cut = cols != w;
    s.col = Dim{cols, d.coeff};
    s.row = Dim{d.size / cols, {}};
    for (auto c : d.coeff) s.row.coeff.push_back(c * cols);
    return;
  }
  const Dim col = pw.back();
  pw.pop_back();
  pick_rows(pw, col);
  if (s.blocked) return;
  // Fewer rows than workers, and long ones (torch.cat([x, x]) of a [512, 512] x: 2 rows of
  // 262144): the cols are cut into rows as a single variable is, and the rows become an outer
  // loop, so that every worker gets rows. Rows of at most 2048 elements (GPT-2's decode
  // attention, [12 heads, 256]) stay whole: shorter pieces would cost a DMA round trip each
  // for a few hundred bytes (its step took 0.7 % longer cut).
  int64_t rows = s.row.size;
  for (const auto& d : s.outer) rows *= d.size;
  const int64_t workers = cfg_.cores * cfg_.corelets;
  if (rows >= workers || s.col.size <= 2048) return;
  const int64_t cols = row_length(s.col.size, rows);
  if (cols < 64 || cols == s.col.size) return;
  Dim hi{s.col.size / cols, {}};
  for (auto c : s.col.coeff) hi.coeff.push_back(c * cols);
  s.outer.push_back(s.row);
  s.row = hi;
  s.col.size = cols;
  s.cut = true;
}

int64_t Builder::row_length(int64_t size, int64_t rows) const {
  // The longest divisor of `size` up to the share of one worker when `rows` rows of `size`
  // become rows of it (at least 64, at most 2048 elements).
  const int64_t workers = cfg_.cores * cfg_.corelets;
  const int64_t cap = std::max<int64_t>(64, std::min<int64_t>(2048, size * rows / workers));
  for (int64_t c = std::min(cap, size); c >= 1; --c)
    if (size % c == 0) return c;
  return 1;
}

// Under the stick layout, the rows of the tensors a flattened pointwise variable walks: the
// last dimension they all share, so that a tile's columns are stick columns of whole tensor
// rows (a row of 2048 cut from two of 1024 would take every other row of a stick column, runs
// of 128 B). Tensors of one row are not laid out; 0 when an access is not a contiguous walk of
// a 2-D tensor (dimensions of 1 aside: with more, consecutive rows lie in different planes of
// the layout) of whole-stick rows starting on a row, or the tensors' rows differ.
int64_t Builder::layout_row(const Dim& d) const {
  int64_t w = 0;
  for (size_t a = 0; a < p_.accesses.size(); ++a) {
    const MemAccess& m = p_.accesses[a];
    if (m.buffer.empty() || d.coeff[a] == 0) continue;  // an index; a broadcast element
    const ir::Buffer& b = g_.storage_of(m.buffer);
    const int64_t es = static_cast<int64_t>(isa::dtype_size_bytes(m.dt));
    const auto dims = std::count_if(b.size.begin(), b.size.end(), [](int64_t n) { return n > 1; });
    if (dims < 2) continue;  // one row (a scratch vector): row-major in the layout too
    if (d.coeff[a] != 1 || dims > 2) return 0;
    for (size_t i = b.size.size(), want = 1; i-- > 0; want *= static_cast<size_t>(b.size[i]))
      if (b.size[i] > 1 && b.stride[i] != static_cast<int64_t>(want)) return 0;  // contiguous
    const int64_t row = b.size.back();
    if ((w != 0 && row != w) || row * es % cfg_.stick_bytes != 0 || m.offset % row != 0) return 0;
    w = row;
  }
  return w > 0 && d.size % w == 0 && d.size > w ? w : 0;
}

void Builder::pick_rows(std::vector<Dim> pw, const Dim& col) {
  IterSpace& s = p_.space;
  s.col = col;
  // A transposed access: contiguous along dim d, strided along the cols. Walking it in tiles of
  // a few rows would move a few bytes per DMA run (a whole DRAM word each); instead the rows
  // are d cut into blocks of one word of that access, the cols into blocks of one word of the
  // col-contiguous accesses, and both remainders become outer loops.
  const int64_t word = cfg_.dram_word_bytes;
  auto es = [&](size_t a) {
    return static_cast<int64_t>(isa::dtype_size_bytes(p_.accesses[a].dt));
  };
  bool plain = true;  // only affine loads/stores and iotas (no gathers)
  for (const auto& m : p_.accesses) plain = plain && m.limit == 0;
  int row = -1;
  int64_t gr = 1, gc = 1;
  for (size_t d = pw.size(); plain && row < 0 && d-- > 0;)
    for (size_t a = 0; a < p_.accesses.size(); ++a)
      if (!p_.accesses[a].buffer.empty() && pw[d].coeff[a] == 1 && col.coeff[a] > 1) {
        row = static_cast<int>(d);
        gr = std::max(gr, word / es(a));
      }
  if (row < 0 || col.size < 2) {
    s.row = pw.back();
    pw.pop_back();
    s.outer = pw;
    return;
  }
  for (size_t a = 0; a < p_.accesses.size(); ++a)
    if (!p_.accesses[a].buffer.empty() && col.coeff[a] == 1) gc = std::max(gc, word / es(a));
  Dim r = pw[static_cast<size_t>(row)];
  pw.erase(pw.begin() + row);
  auto cut = [&](Dim& d, int64_t g) {  // d -> outer (d.size / g) x d (g)
    if (d.size <= g || d.size % g != 0) return;
    Dim hi{d.size / g, {}};
    for (auto c : d.coeff) hi.coeff.push_back(c * g);
    pw.push_back(hi);
    d.size = g;
  };
  cut(r, gr);
  cut(s.col, gc);
  s.row = r;
  s.outer = pw;
  s.blocked = true;
}

}  // namespace spyre::compiler::tile_program_detail
