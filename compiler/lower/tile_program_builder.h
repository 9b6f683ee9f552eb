// Private to compiler/lower/: the Builder that turns one SSA loop-body node into a
// TileProgram. Its index analysis (affine / FloorDiv / ModularIndexing decomposition,
// indirect and masked loads, the iteration space) lives in tile_program_index.cpp; the
// translation of the body into tile ops in tile_program.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "spyre/compiler/tile_program.h"
#include "spyre/error.h"

namespace spyre::compiler::tile_program_detail {

using isa::DType;

// Inductor's one-instruction unary and binary ops: name -> SFP function name
// (tile_program_fns.cpp); is_compare: whether that SFP function writes bool.
const std::map<std::string, std::string>& unary_fns();
const std::map<std::string, std::string>& binary_fns();
bool is_compare(const std::string& fn);
bool is_random(const std::string& fn);  // rand, randn: 32-bit integer operands

// A piecewise-affine index (Abs, Min, Max of affine terms) as a tree; see collect_computed.
struct IdxTree {
  // Sym: an indirect_indexing symbol (a loaded value, e.g. max_pool's window offset).
  enum Kind { Const, Var, Sym, Add, Mul, Abs, Min, Max, FloorDiv, Mod } kind = Const;
  int64_t c = 0;    // Const: the value; Mul: the constant factor; FloorDiv, Mod: the divisor
  int64_t m = 0;    // Mod: the modulus (ModularIndexing(x, c, m) = (x // c) % m)
  std::string var;  // Var: the loop variable; Sym: the symbol
  int access = -1;  // Var: the iota access of the variable
  std::vector<IdxTree> kids;
};

// A reduction whose reduced sub-dimensions do not merge into one: build_tile_program retries
// with its reduction variables whole (whole_reduce), their FloorDiv/ModularIndexing indices
// computed on the SFP (a RoPE table read at r mod 32 inside a q.k reduction).
struct UnmergedReduction : Error {
  using Error::Error;
};

// When even whole reduction variables do not merge (batch norm's N and H*W, with the channel
// between them), the node with its reduction variables replaced by one, R, of their product's
// size, walked in their order: each former variable becomes FloorDiv / ModularIndexing of R in
// the index expressions, so its loads take their index computed on the SFP (gathers).
// nullopt when the node has fewer than two reduction variables.
std::optional<ir::Node> merge_reduce_vars(const ir::Node& n);

class Builder {
 public:
  Builder(const ir::Graph& g, const ir::Node& n, const arch::ArchConfig& cfg, std::string where,
          bool keep_2d, bool whole_reduce = false)
      : g_(g),
        n_(n),
        cfg_(cfg),
        where_(std::move(where)),
        keep_2d_(keep_2d),
        whole_reduce_(whole_reduce) {}

  TileProgram build();

 private:
  [[noreturn]] void fail(const ir::Op& op, const std::string& what) const {
    throw Error(where_, "op " + (op.id.empty() ? op.op : op.id) + " '" + op.op + "': " + what);
  }

  // --- Index analysis (tile_program_index.cpp).

  // Loads inside a masked sub-block (`masked`) are clamped gathers: see lower().
  void collect_accesses(const std::vector<ir::Op>& body, bool masked = false);

  // A load at `c1*s1 + ... + affine(vars)` with indirect_indexing symbols s: the affine rest
  // becomes an iota access (its coefficients take part in merging), the buffer a Gather access
  // with coefficients 0. False when the index has no such symbol. A store's (a Scatter) is
  // keyed apart from the loads of the same buffer and index (access_key).
  bool collect_indirect(const ir::Op& op, bool masked);

  Dim dim_of(size_t j) const;  // sub-dimension j

  // A load whose index is a piecewise-affine expression of the loop variables (Abs, Min, Max
  // of affine terms: reflection padding) is a gather at an index computed on the SFP from one
  // iota per variable. False when the index is not of that form.
  bool collect_computed(const ir::Op& op, bool masked);
  // The tree of a FloorDiv / Mod / Abs / Min / Max index over the loop variables (an iota access
  // per variable added), or nullopt when it is not one.
  std::optional<IdxTree> index_tree(const std::string& expr);
  int64_t extent(const ir::Op& op) const;  // elements of op's buffer: valid indices [0, extent)
  int lower_tree(const IdxTree& t);
  static bool has_sym(const IdxTree& t);
  // A copy of iota access `a` with column coefficient 0: its value at each row's first column.
  int column_start(int a);

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
  std::optional<size_t> var_index(const std::string& name) const;
  static std::string strip_parens(std::string t);
  static bool is_int(const std::string& t);
  static std::vector<std::string> split_args(const std::string& t);
  // `expr` as a sum of atoms (c*x, c*(x//d), c*FloorDiv(x, d), c*ModularIndexing(x, d, m),
  // constants); nullopt for anything else.
  std::optional<std::vector<Atom>> parse(const std::string& expr) const;
  void scan_splits(const std::vector<ir::Op>& body, std::vector<std::set<int64_t>>& pts) const;
  void plan_splits();
  std::vector<int64_t> expand(const ir::Affine& af) const;
  // (offset, coefficient per sub-dimension) of an index; nullopt when not expressible.
  std::optional<std::pair<int64_t, std::vector<int64_t>>> linear(const ir::Index& ix) const;

  void build_space();
  // Rows x cols of a pointwise space whose innermost dim `col` is chosen, `pw` the rest
  // (outermost first): a transpose is blocked (IterSpace::blocked), else the innermost of `pw`
  // is the rows.
  void pick_rows(std::vector<Dim> pw, const Dim& col);
  int64_t row_length(int64_t size, int64_t rows) const;
  int64_t layout_row(const Dim& d) const;

  // --- Translation of the body into tile ops (tile_program.cpp).

  int new_val(TVal v);
  int emit(TOp op);

  int convert(int v, DType dt);
  int materialize(int v, bool r, bool c);
  int untransposed(int v);  // v, or a row-major ([rows, cols]) copy of a transposed value
  int scalar(DType dt, double value);
  TVal joined(std::initializer_list<int> vs, DType dt) const;
  int arg(const ir::Op& op, size_t i);
  DType op_dtype(const ir::Op& op, DType def) const { return op.dtype ? *op.dtype : def; }

  void lower(const ir::Op& op);
  void access_class(int a, bool& r, bool& c, bool& tiled) const;
  // The Gather of `op`'s buffer at the int64 element indices `idx` (clamped inside a mask).
  void lower_gather(const ir::Op& op, int a, int idx);
  struct Indirect;
  // The int64 element index of an indirect access: its symbols times their coefficients plus
  // the affine rest. `rows`: set when each row is a contiguous run of the columns and no
  // symbol varies along them; then the index is each row's first element (allowed: `rows_ok`).
  int indirect_index(const Indirect& ind, bool rows_ok, bool& rows);
  void lower_scatter(const ir::Op& op, int a, const Indirect& ind);

  int reduce(isa::SfpFn fn, int x);

  void lower_reduction(const ir::Op& op);

  static isa::SfpFn sfp_fn(const std::string& name);

  void dce();

  const ir::Graph& g_;
  const ir::Node& n_;
  const arch::ArchConfig& cfg_;
  std::string where_;
  bool keep_2d_ = false;
  bool whole_reduce_ = false;  // reduction variables are not split at index divisors
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
  static std::string access_key(const ir::Op& op, bool masked) {
    return (op.op == "load" ? "" : "!") + load_key(op, masked);
  }
  std::map<std::string, Indirect> indirect_;
  std::map<std::string, IdxTree> computed_;       // load key -> index computed on the SFP
  std::map<std::string, IdxTree> computed_expr_;  // non-affine index_expr -> its tree
  std::vector<int> store_access_;
  size_t next_store_ = 0;
  std::map<int, int> load_val_;
  std::map<std::string, int> val_;
  std::map<std::pair<int, DType>, int> conv_;
};

}  // namespace spyre::compiler::tile_program_detail
