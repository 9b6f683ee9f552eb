// Loads at a piecewise-affine index (reflection padding) or at FloorDiv/ModularIndexing of a
// reduction variable that is kept whole (whole_reduce): the index expression is parsed into
// a tree of sums, constant multiples, Abs, Min, Max, FloorDiv and Mod over the loop variables
// (collect_computed) and evaluated on the SFP in int64 from one iota per variable and the values
// of the indirect_indexing symbols it names (lower_tree);
// the load becomes an element gather at that index (lower_gather, tile_program.cpp).
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "spyre/compiler/tile_program.h"
#include "tile_program_builder.h"

namespace spyre::compiler::tile_program_detail {
namespace {

// Recursive descent over a sympy index (spaces removed): sums, products with an integer factor,
// unary minus, parentheses, integers, names, Abs/Min/Max. nullopt for anything else.
using Tree = IdxTree;
struct TreeParser {
  const std::string& e;
  size_t p = 0;
  bool eat(char ch) {
    if (p < e.size() && e[p] == ch) return ++p, true;
    return false;
  }
  static Tree node(Tree::Kind k, std::vector<Tree> kids, int64_t c = 0) {
    Tree t;
    t.kind = k, t.c = c, t.kids = std::move(kids);
    return t;
  }
  std::optional<Tree> sum() {
    auto a = product();
    while (a && p < e.size() && (e[p] == '+' || e[p] == '-')) {
      const bool neg = e[p++] == '-';
      auto b = product();
      if (!b) return std::nullopt;
      if (neg) b = node(Tree::Mul, {*b}, -1);
      a = node(Tree::Add, {*a, *b});
    }
    return a;
  }
  std::optional<Tree> product() {
    auto a = unary();
    while (a && p + 1 < e.size() && e[p] == '/' && e[p + 1] == '/') {  // x//d, d > 0
      p += 2;
      auto d = unary();
      if (!d || d->kind != Tree::Const || d->c <= 0) return std::nullopt;
      a = node(Tree::FloorDiv, {*a}, d->c);
    }
    while (a && eat('*')) {
      auto b = unary();
      if (!b) return std::nullopt;
      if (b->kind == Tree::Const) std::swap(*a, *b);
      if (a->kind != Tree::Const) return std::nullopt;  // only constant factors
      a = b->kind == Tree::Const ? node(Tree::Const, {}, a->c * b->c) : node(Tree::Mul, {*b}, a->c);
    }
    return a;
  }
  std::optional<Tree> unary() {
    if (eat('-')) {
      auto a = unary();
      if (!a) return std::nullopt;
      return a->kind == Tree::Const ? node(Tree::Const, {}, -a->c) : node(Tree::Mul, {*a}, -1);
    }
    if (eat('(')) {
      auto a = sum();
      return a && eat(')') ? a : std::nullopt;
    }
    if (p < e.size() && std::isdigit(static_cast<unsigned char>(e[p]))) {
      int64_t v = 0;
      while (p < e.size() && std::isdigit(static_cast<unsigned char>(e[p])))
        v = v * 10 + (e[p++] - '0');
      return node(Tree::Const, {}, v);
    }
    std::string name;
    while (p < e.size() && (std::isalnum(static_cast<unsigned char>(e[p])) || e[p] == '_'))
      name += e[p++];
    if (name.empty()) return std::nullopt;
    if (name == "FloorDiv" || name == "ModularIndexing") {  // (x, d) / (x, d, m), d, m > 0
      if (!eat('(')) return std::nullopt;
      auto x = sum();
      std::vector<int64_t> k;
      while (x && eat(',')) {
        auto a = sum();
        if (!a || a->kind != Tree::Const || a->c <= 0) return std::nullopt;
        k.push_back(a->c);
      }
      if (!x || !eat(')') || k.size() != (name == "FloorDiv" ? 1u : 2u)) return std::nullopt;
      Tree t = node(name == "FloorDiv" ? Tree::FloorDiv : Tree::Mod, {*x}, k[0]);
      if (k.size() == 2) t.m = k[1];
      return t;
    }
    const bool fn = name == "Abs" || name == "Min" || name == "Max";
    if (!fn) {
      Tree t;
      t.kind = Tree::Var, t.var = name;
      return t;
    }
    if (!eat('(')) return std::nullopt;
    std::vector<Tree> args;
    do {
      auto a = sum();
      if (!a) return std::nullopt;
      args.push_back(*a);
    } while (eat(','));
    if (!eat(')') || args.empty() || (name == "Abs" && args.size() != 1)) return std::nullopt;
    const Tree::Kind k = name == "Abs" ? Tree::Abs : name == "Min" ? Tree::Min : Tree::Max;
    Tree t = args[0];
    if (k == Tree::Abs) return node(k, {t});
    for (size_t i = 1; i < args.size(); ++i) t = node(k, {t, args[i]});
    return t;
  }
};

}  // namespace

namespace {

// `expr` with every whole name found in `to` replaced by its text.
std::string substitute(const std::string& expr, const std::map<std::string, std::string>& to) {
  std::string out;
  for (size_t i = 0; i < expr.size();) {
    const auto word = [](char ch) {
      return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
    };
    if (!word(expr[i])) {
      out += expr[i++];
      continue;
    }
    size_t j = i;
    while (j < expr.size() && word(expr[j])) ++j;
    const std::string name = expr.substr(i, j - i);
    const auto it = to.find(name);
    out += it == to.end() ? name : it->second;
    i = j;
  }
  return out;
}

void substitute_body(std::vector<ir::Op>& body, const std::map<std::string, std::string>& to) {
  for (ir::Op& op : body) {
    substitute_body(op.body, to);
    if (!op.index) continue;
    const std::string e = substitute(op.index->expr, to);
    if (e == op.index->expr) continue;
    op.index->expr = e;
    op.index->affine.reset();
  }
}

}  // namespace

std::optional<ir::Node> merge_reduce_vars(const ir::Node& n) {
  if (n.reduce_vars.size() < 2) return std::nullopt;
  std::string r = "rmerged";
  for (bool taken = true; taken;) {
    taken = false;
    for (const auto* vars : {&n.vars, &n.reduce_vars})
      for (const auto& v : *vars) taken = taken || v == r;
    if (taken) r += "_";
  }
  std::map<std::string, std::string> to;
  int64_t inner = 1;
  for (size_t k = n.reduce_vars.size(); k-- > 0;) {
    const int64_t size = n.reduce_sizes[k];
    to[n.reduce_vars[k]] = k == 0 ? "FloorDiv(" + r + ", " + std::to_string(inner) + ")"
                                  : "ModularIndexing(" + r + ", " + std::to_string(inner) + ", " +
                                        std::to_string(size) + ")";
    inner *= size;
  }
  ir::Node m = n;
  m.reduce_vars = {r};
  m.reduce_sizes = {inner};
  substitute_body(m.body, to);
  return m;
}

std::optional<IdxTree> Builder::index_tree(const std::string& expr) {
  std::string e;
  for (char ch : expr)
    if (ch != ' ') e += ch;
  TreeParser tp{e};
  auto tree = tp.sum();
  if (!tree || tp.p != e.size()) return std::nullopt;
  // Every name must be a loop variable; each gets an iota access (its value at the element).
  bool ok = true;
  std::function<void(IdxTree&)> resolve = [&](IdxTree& t) {
    for (auto& k : t.kids) resolve(k);
    if (t.kind != IdxTree::Var) return;
    if (indirect_syms_.count(t.var)) {  // its value, computed before the index is
      t.kind = IdxTree::Sym;
      return;
    }
    if (!var_index(t.var)) {
      ok = false;
      return;
    }
    const std::string key = "|#" + t.var;
    if (!access_of_.count(key)) {
      access_of_[key] = static_cast<int>(p_.accesses.size());
      MemAccess m;
      m.expr = t.var;
      m.dt = DType::I64;
      p_.accesses.push_back(m);
      ir::Affine af;
      af.coeffs[t.var] = 1;
      coeffs_.push_back(expand(af));
    }
    t.access = access_of_.at(key);
  };
  resolve(*tree);
  if (!ok) return std::nullopt;
  return tree;
}

bool Builder::collect_computed(const ir::Op& op, bool masked) {
  auto tree = index_tree(op.index->expr);
  if (!tree) return false;
  const std::string key = load_key(op, masked);
  if (access_of_.count(key)) return true;
  access_of_[key] = static_cast<int>(p_.accesses.size());
  MemAccess m;
  m.buffer = op.buffer;
  m.expr = op.index->expr;
  m.dt = g_.storage_of(op.buffer).dtype;
  m.offset = storage_offset(g_, op.buffer);
  m.limit = extent(op);
  p_.accesses.push_back(m);
  coeffs_.push_back(std::vector<int64_t>(sub_.size(), 0));
  computed_[key] = *tree;
  return true;
}

bool Builder::has_sym(const IdxTree& t) {
  if (t.kind == IdxTree::Sym) return true;
  for (const auto& k : t.kids)
    if (has_sym(k)) return true;
  return false;
}

int Builder::lower_tree(const IdxTree& t) {
  if (t.kind == IdxTree::Const) return scalar(DType::I64, static_cast<double>(t.c));
  if (t.kind == IdxTree::Var) {
    TVal v;
    v.dt = DType::I64;
    access_class(t.access, v.r, v.c, v.tiled);
    int d = new_val(v);
    emit(TOp{TOp::Iota, isa::SfpFn::Copy, d, {}, t.access, 0});
    return d;
  }
  if (t.kind == IdxTree::Sym) return convert(val_.at(t.var), DType::I64);
  const int a = lower_tree(t.kids[0]);
  int b = -1;
  std::string fn;
  switch (t.kind) {
    case IdxTree::Abs: {
      int d = new_val(joined({a}, DType::I64));
      emit(TOp{TOp::Unary, sfp_fn("abs"), d, {a}, -1, 0});
      return d;
    }
    case IdxTree::FloorDiv:
    case IdxTree::Mod: {
      // x // d: an int64 sfp.bin div truncates, which is the floor for the non-negative
      // indices of a loop (x >= 0); a symbol may be negative: then sfp floordiv (Python's //).
      // Then q - m * (q // m) for the modulus.
      const char* div = has_sym(t.kids[0]) ? "floordiv" : "div";
      auto floordiv = [&](int x, int64_t d) {
        int q = new_val(joined({x}, DType::I64));
        emit(TOp{
            TOp::Binary, sfp_fn(div), q, {x, scalar(DType::I64, static_cast<double>(d))}, -1, 0});
        return q;
      };
      const int q = floordiv(a, t.c);
      if (t.kind == IdxTree::FloorDiv) return q;
      const int hi = floordiv(q, t.m);
      int prod = new_val(joined({hi}, DType::I64));
      emit(TOp{TOp::Binary,
               sfp_fn("mul"),
               prod,
               {hi, scalar(DType::I64, static_cast<double>(t.m))},
               -1,
               0});
      int d = new_val(joined({q, prod}, DType::I64));
      emit(TOp{TOp::Binary, sfp_fn("sub"), d, {q, prod}, -1, 0});
      return d;
    }
    case IdxTree::Mul: b = scalar(DType::I64, static_cast<double>(t.c)), fn = "mul"; break;
    case IdxTree::Add:
    case IdxTree::Min:
    case IdxTree::Max:
      b = lower_tree(t.kids[1]);
      fn = t.kind == IdxTree::Add ? "add" : t.kind == IdxTree::Min ? "min" : "max";
      break;
    case IdxTree::Const:
    case IdxTree::Var:
    case IdxTree::Sym:  // leaves: handled above
      throw Error("index expression", "a leaf where an operation was expected (internal error)");
  }
  int d = new_val(joined({a, b}, DType::I64));
  emit(TOp{TOp::Binary, sfp_fn(fn), d, {a, b}, -1, 0});
  return d;
}

}  // namespace spyre::compiler::tile_program_detail
