#pragma once
// Tests-only reference for the fallback nodes the compiler lowers (compiler/.../select.h):
// aten.topk, sort, kthvalue, median.dim and median (all elements) by sorting each row
// (std::stable_sort, an algorithm unlike the device's rounds), then their MultiOutput nodes.
// torch's order: largest puts NaN first, then descending; smallest ascending, NaN last; equal
// values keep ascending index (torch leaves the index of ties unspecified, its CPU kernel's
// nth_element decides). median: the element of rank (n-1)/2 ascending (the lower median), NaN at
// the row's first NaN when it has one; kthvalue: rank k-1 ascending (NaN largest).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace spyre::compiler::test {

// One tuple: element e's values, row-major over its shape.
using SelectTuple = std::vector<std::vector<double>>;

// A non-tensor argument: kwargs by name, else constant_args[pos], else `def`.
inline nlohmann::json select_arg(const nlohmann::json& n, size_t pos, const char* name,
                                 const nlohmann::json& def) {
  if (n["kwargs"].contains(name)) return n["kwargs"][name];
  return pos < n["constant_args"].size() ? n["constant_args"][pos] : def;
}

// `Interp` has read_view / write_view (ir_interp.h); `tuples` holds the fallbacks' results.
template <class Interp>
void eval_select(Interp& in, const nlohmann::json& n, std::map<std::string, SelectTuple>& tuples) {
  using json = nlohmann::json;
  if (n["kernel"] == "MultiOutput") {
    const auto& t = tuples.at(n["inputs"][0]["buffer"].get<std::string>());
    json out = n["layout"];
    out["buffer"] = n["outputs"][0];
    const json& ix = n["indices"];  // [] : a single tensor result (the values)
    in.write_view(out, t.at(ix.empty() ? 0 : ix[0].get<size_t>()));
    return;
  }
  const std::string op = n.value("op_overload", std::string());
  std::vector<int64_t> size = n["inputs"][0]["size"];
  int64_t dim = -1, k = 1, rank_at = -1;  // rank_at >= 0: one output, that rank (median)
  bool largest = false;
  if (op == "aten.topk.default") {
    k = select_arg(n, 0, "k", -1).get<int64_t>();
    dim = select_arg(n, 1, "dim", -1).get<int64_t>();
    largest = select_arg(n, 2, "largest", true).get<bool>();
  } else if (op == "aten.sort.default" || op == "aten.sort.stable") {
    const size_t at = op == "aten.sort.stable" ? 1 : 0;
    dim = select_arg(n, at, "dim", -1).get<int64_t>();
    largest = select_arg(n, at + 1, "descending", false).get<bool>();
  } else if (op == "aten.kthvalue.default") {
    rank_at = select_arg(n, 0, "k", -1).get<int64_t>() - 1;
    dim = select_arg(n, 1, "dim", -1).get<int64_t>();
  } else if (op == "aten.median.dim" || op == "aten.median.default") {
    if (op == "aten.median.dim") dim = select_arg(n, 0, "dim", -1).get<int64_t>();
    rank_at = -2;  // set below from the row length
  } else {
    throw std::runtime_error("reference: no evaluation of fallback " + op);
  }
  if (op == "aten.median.default" || size.empty()) {  // over all elements, as one row
    int64_t all = 1;
    for (auto s : size) all *= s;
    size = {all};
    dim = 0;
  }
  const int64_t rank = static_cast<int64_t>(size.size());
  if (dim < 0) dim += rank;
  int64_t outer = 1, inner = 1, len = size[static_cast<size_t>(dim)];
  for (int64_t d = 0; d < rank; ++d) {
    if (d < dim) outer *= size[static_cast<size_t>(d)];
    if (d > dim) inner *= size[static_cast<size_t>(d)];
  }
  const bool median = rank_at == -2;
  if (median) rank_at = (len - 1) / 2;
  if (op == "aten.sort.default" || op == "aten.sort.stable") k = len;
  const std::vector<double> x = in.read_view(n["inputs"][0]);
  SelectTuple t(2, std::vector<double>(static_cast<size_t>(outer * k * inner)));
  std::vector<int64_t> idx(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return x[static_cast<size_t>((o * len + j) * inner + i)]; };
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
        const double xa = at(a), xb = at(b);
        return largest ? (std::isnan(xa) && !std::isnan(xb)) || xa > xb
                       : (!std::isnan(xa) && std::isnan(xb)) || xa < xb;
      });
      for (int64_t r = 0; r < k; ++r) {
        int64_t j = idx[static_cast<size_t>(rank_at >= 0 ? rank_at : r)];
        if (median)
          for (int64_t q = 0; q < len; ++q)
            if (std::isnan(at(q))) {
              j = q;
              break;
            }
        const auto e = static_cast<size_t>((o * k + r) * inner + i);
        t[0][e] = at(j);
        t[1][e] = static_cast<double>(j);
      }
    }
  tuples[n["outputs"][0].get<std::string>()] = t;
}

}  // namespace spyre::compiler::test
