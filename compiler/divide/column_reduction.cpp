// Column reductions: row adds, else a transposed copy (column_reduction.h).
#include "spyre/compiler/column_reduction.h"

#include <algorithm>
#include <map>

#include "spyre/compiler/graph_edit.h"

namespace spyre::compiler {
namespace {

// The rows one level combines, for `rows` rows left: all of them when at most kRowsPerStep,
// else the longest divisor up to kRowsPerStep; the first level (it streams the input) also
// aims to leave every one of `workers` `per_worker` rows of partials, combining at least 2
// rows however few that leaves. 0 when there is no divisor of at least 2.
int64_t rows_per_level(int64_t rows, int64_t workers, int64_t per_worker, bool first) {
  if (rows <= kRowsPerStep) return rows;
  int64_t most = kRowsPerStep;
  if (first) most = std::min(most, std::max<int64_t>(2, rows / (workers * per_worker)));
  for (int64_t k = most; k >= 2; --k)
    if (rows % k == 0) return k;
  return 0;
}

// The levels' row counts (k per level, their product `rows`), or empty when some level finds no
// divisor.
std::vector<int64_t> plan_levels(int64_t rows, int64_t workers, int64_t per_worker) {
  std::vector<int64_t> ks;
  while (rows > 1) {
    const int64_t k = rows_per_level(rows, workers, per_worker, ks.empty());
    if (k == 0) return {};
    ks.push_back(k);
    rows /= k;
  }
  return ks;
}

// The variable of a level's rows of partials: a name the kept variable x does not use.
std::string rows_var(const std::string& x) { return x == "x0" ? "x1" : "x0"; }

// Where a level reads its rows: element index = offset + row * step + x * along.
struct Rows {
  std::string buffer;
  isa::DType dtype;
  int64_t offset = 0, step = 0, along = 0;
};

// A pointwise node over [rows / k, X] (the rows dimension dropped when one is left) whose
// element combines k rows of `in` with `combine`, in `acc`, stored by `store`. With `blocks`,
// row p combines rows p, p + rows / k, p + 2 rows / k, ...: each of its k loads then reads a
// tile's consecutive rows as one contiguous run (a worker with several rows of partials);
// else rows k p .. k p + k - 1, one contiguous run over the k loads (a worker with one).
ir::Node level(const ir::Node& like, const std::string& name, const Rows& in, int64_t k,
               int64_t out_rows, int64_t X, const std::string& combine, isa::DType acc,
               const std::string& x, ir::Op store, bool blocks) {
  ir::Node n;
  n.name = name;
  n.kind = "pointwise";
  n.one_op = true;
  n.origins = like.origins;
  n.aten = like.aten;
  n.source = like.source;
  n.outputs = {store.buffer};
  const std::string p = rows_var(x);
  if (out_rows > 1) n.vars.push_back(p), n.sizes.push_back(out_rows);
  n.vars.push_back(x);
  n.sizes.push_back(X);
  std::string last;
  for (int64_t i = 0; i < k; ++i) {
    ir::Op ld;
    ld.id = "l" + std::to_string(i);
    ld.op = "load";
    ld.buffer = in.buffer;
    ld.dtype = in.dtype;
    ir::Affine a;
    a.offset = in.offset + i * (blocks ? out_rows : 1) * in.step;
    a.coeffs[x] = in.along;
    if (out_rows > 1) a.coeffs[p] = (blocks ? 1 : k) * in.step;
    ld.index = graph_edit::index_of(a);
    n.body.push_back(ld);
    std::string v = ld.id;
    if (in.dtype != acc) {
      ir::Op cv;
      cv.id = "c" + std::to_string(i);
      cv.op = "to_dtype";
      cv.args = {v};
      cv.dtype = acc;
      n.body.push_back(cv);
      v = cv.id;
    }
    if (!last.empty()) {
      ir::Op op;
      op.id = "a" + std::to_string(i);
      op.op = combine;
      op.args = {last, v};
      op.dtype = acc;
      n.body.push_back(op);
      v = op.id;
    }
    last = v;
  }
  store.op = "store";
  store.id.clear();
  store.args = {last};
  store.mode.clear();
  n.body.push_back(store);
  return n;
}

// Row adds for `n` (its load `load`, kept variable x of X, reduced r of R), or false when it
// does not apply; appends the new nodes to `out`.
bool row_adds(ir::Graph& g, graph_edit::Names& names, const ir::Node& n, const ir::Op& load,
              const ir::Op& store, const std::string& x, int64_t X, const std::string& r, int64_t R,
              int64_t workers, int64_t burst, int64_t word, std::vector<ir::Node>& out,
              ColumnReduction& rec) {
  static const std::map<std::string, std::string> combine = {
      {"sum", "add"}, {"max", "maximum"}, {"min", "minimum"}};
  auto floating = [](isa::DType d) {
    return d == isa::DType::F16 || d == isa::DType::BF16 || d == isa::DType::F32;
  };
  const isa::DType in = *load.dtype;
  // The combines add the loaded values: every conversion on the way to the reduction must
  // widen (to fp32, or to the input's own type), and the reduction must be a float one, else
  // eager's per-element rounding or truncation would be skipped (x.sum(0, dtype=torch.int32)).
  std::string type;
  bool widening = floating(in);
  for (const auto& op : n.body) {
    if (op.op == "reduction") {
      type = op.outputs == 1 ? op.reduction_type : "";
      widening = widening && op.dtype && floating(*op.dtype);
    } else if (op.op == "to_dtype") {
      const bool before = type.empty();
      widening = widening && op.dtype && floating(*op.dtype) &&
                 (!before || *op.dtype == isa::DType::F32 || *op.dtype == in);
    }
  }
  const auto it = combine.find(type);
  if (it == combine.end() || !widening || !store.index || !store.index->affine) return false;
  // A worker's load of one row carries X elements; rows enough to fill the DMA engine's
  // in-flight budget keep the input streaming at the DRAM's rate rather than one round trip
  // per row (dma.h). Rows shorter than a DRAM word would be read in runs of a few bytes: the
  // transposed copy reads those better.
  const int64_t row_bytes = X * static_cast<int64_t>(isa::dtype_size_bytes(in));
  if (row_bytes < word) return false;
  const int64_t per_worker = std::max<int64_t>(1, (burst + row_bytes - 1) / row_bytes);
  const std::vector<int64_t> ks = plan_levels(R, workers, per_worker);
  if (ks.empty()) return false;
  const isa::DType acc = type == "sum" ? isa::DType::F32 : in;
  const ir::Affine& src = *load.index->affine;
  Rows rows{load.buffer, in, src.offset, src.coeff(r), src.coeff(x)};
  int64_t left = R;
  for (size_t l = 0; l < ks.size(); ++l) {
    left /= ks[l];
    const bool last = l + 1 == ks.size();
    ir::Op st = last ? store : ir::Op{};
    std::string name = n.name;
    if (!last) {
      st.buffer = names.buffer(n.name + "_partials" + std::to_string(l));
      graph_edit::add_intermediate(g, st.buffer, acc, {left, X});
      ir::Affine at;
      at.coeffs = {{rows_var(x), X}, {x, 1}};
      st.index = graph_edit::index_of(at);
      name = names.node(n.name + "_rows" + std::to_string(l));
      rec.levels.push_back(name);
      rec.partials.push_back(st.buffer);
    }
    out.push_back(level(n, name, rows, ks[l], left, X, it->second, acc, x, st, left > workers));
    if (!last) rows = Rows{st.buffer, acc, 0, X, 1};
  }
  return true;
}

}  // namespace

nlohmann::json ColumnReduction::to_json() const {
  if (!levels.empty() || copy_node.empty())
    return {{"node", node}, {"method", "row_adds"}, {"levels", levels}, {"partials", partials}};
  return {{"node", node}, {"copy_node", copy_node}, {"buffer", buffer}};
}

std::vector<ColumnReduction> rewrite_column_reductions(ir::Graph& g, const arch::ArchConfig& cfg) {
  std::vector<ColumnReduction> done;
  graph_edit::Names names(g);
  std::vector<ir::Node> out;
  const int64_t workers = int64_t{cfg.cores} * cfg.corelets;
  for (auto& n : g.nodes) {
    ir::Op* load = nullptr;
    const ir::Op* store = nullptr;
    int loads = 0, others = 0;
    for (auto& op : n.body) {
      if (op.op == "load")
        ++loads, load = &op;
      else if (op.op == "store_reduction")
        store = &op;
      else if (op.op != "reduction" && op.op != "to_dtype")
        ++others;
    }
    const bool shape = n.kind == "reduction" && n.vars.size() == 1 && n.reduce_vars.size() == 1 &&
                       loads == 1 && others == 0 && store && graph_edit::indices_affine(n.body) &&
                       load->index && load->dtype;
    const std::string x = shape ? n.vars[0] : "", r = shape ? n.reduce_vars[0] : "";
    const int64_t X = shape ? n.sizes[0] : 0, R = shape ? n.reduce_sizes[0] : 0;
    if (!shape || load->index->affine->coeff(x) != 1 || load->index->affine->coeff(r) <= 1 ||
        R < 64 || X < 8) {
      out.push_back(std::move(n));
      continue;
    }
    ColumnReduction rec;
    rec.node = n.name;
    if (row_adds(g, names, n, *load, *store, x, X, r, R, workers, cfg.dma_max_outstanding_bytes,
                 cfg.dram_word_bytes, out, rec)) {
      done.push_back(rec);
      continue;
    }
    rec.buffer = names.buffer(n.name + "_columns");
    rec.copy_node = names.node(n.name + "_transpose");

    graph_edit::add_intermediate(g, rec.buffer, *load->dtype, {X, R});

    // The copy: t[x, r] = source at the load's own index, over (x0 = x, x1 = r).
    ir::Node c;
    c.name = rec.copy_node;
    c.kind = "pointwise";
    c.outputs = {rec.buffer};
    c.origins = n.origins;
    c.aten = n.aten;
    c.source = n.source;
    c.vars = {"x0", "x1"};
    c.sizes = {X, R};
    ir::Op ld = *load;
    ir::Affine src = *load->index->affine;
    ir::Affine at;
    at.offset = src.offset;
    at.coeffs = {{"x0", src.coeff(x)}, {"x1", src.coeff(r)}};
    ld.index = graph_edit::index_of(at);
    ir::Op st;
    st.op = "store";
    st.args = {ld.id};
    st.buffer = rec.buffer;
    ir::Affine dst;
    dst.coeffs = {{"x0", R}, {"x1", 1}};
    st.index = graph_edit::index_of(dst);
    c.body = {ld, st};
    out.push_back(std::move(c));

    // The reduction reads t row by row.
    load->buffer = rec.buffer;
    ir::Affine rows;
    rows.coeffs = {{x, R}, {r, 1}};
    load->index = graph_edit::index_of(rows);
    out.push_back(std::move(n));
    done.push_back(rec);
  }
  g.nodes = std::move(out);
  return done;
}

}  // namespace spyre::compiler
