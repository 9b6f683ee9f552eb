// The walk of each core over its matmul block (matmul_walk.h).
#include "matmul_walk.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

namespace spyre::compiler {

std::vector<MatmulCoreWork> matmul_walk(const MatmulGrid& grid, int64_t Bt, int64_t M, int64_t N,
                                        int64_t K) {
  const int64_t tm = grid.tm, tn = grid.tn, tk = grid.tk, nbuf = grid.bufs;
  std::vector<MatmulCoreWork> work(static_cast<size_t>(grid.cores_used));
  for (int64_t c = 0; c < grid.cores_used; ++c) {
    MatmulCoreWork& w = work[static_cast<size_t>(c)];
    w.ik = c % grid.gk;
    w.in = c / grid.gk % grid.gn;
    w.im = c / (grid.gk * grid.gn) % grid.gm;
    w.ib = c / (grid.gk * grid.gn * grid.gm);
    w.b0 = w.ib * grid.bb, w.b1 = std::min(Bt, w.b0 + grid.bb);
    w.m0 = w.im * grid.mb, w.m1 = std::min(M, w.m0 + grid.mb);
    w.n0 = w.in * grid.nb, w.n1 = std::min(N, w.n0 + grid.nb);
    w.k0 = w.ik * grid.kb, w.k1 = std::min(K, w.k0 + grid.kb);
    // Walk m, n, k; n, m, k for a B panel (its tiles stay while the m tiles pass).
    int64_t ct = 0;
    auto add_tile = [&](int64_t b, int64_t m0, int64_t n0) {
      for (int64_t k0 = w.k0; k0 < w.k1; k0 += tk)
        w.steps.push_back({b, m0, std::min(w.m1, m0 + tm), n0, std::min(w.n1, n0 + tn), k0,
                           std::min(w.k1, k0 + tk), k0 == w.k0, k0 + tk >= w.k1, ct});
      ++ct;
    };
    // The n tiles start at a tile that depends on `in` (divide.h, matmul_n_rotation): blocks
    // side by side then read and write different columns at the same time, so power-of-two
    // row strides do not put every core on the same DRAM channels. Multicast groups keep one
    // order: an A group shares (m, k) tiles whatever the n order, a B group shares `in`.
    std::vector<int64_t> n_tiles;
    for (int64_t n0 = w.n0; n0 < w.n1; n0 += tn) n_tiles.push_back(n0);
    const int64_t rot = matmul_n_rotation(w.in, grid.gn, static_cast<int64_t>(n_tiles.size()));
    std::rotate(n_tiles.begin(), n_tiles.begin() + static_cast<std::ptrdiff_t>(rot), n_tiles.end());
    for (int64_t b = w.b0; b < w.b1; ++b) {
      if (grid.b_panel) {
        for (int64_t n0 : n_tiles) {
          int64_t m0 = w.m0;
          if (grid.lead > 1) {  // the lead group: K-outer over its m tiles (divide.h)
            std::vector<int64_t> lead;
            for (; m0 < w.m1 && static_cast<int64_t>(lead.size()) < grid.lead; m0 += tm)
              lead.push_back(m0);
            const auto g = static_cast<int64_t>(lead.size());
            for (int64_t k0 = w.k0; k0 < w.k1; k0 += tk)
              for (int64_t li = 0; li < g; ++li) {
                const int64_t lm = lead[static_cast<size_t>(li)];
                w.steps.push_back({b, lm, std::min(w.m1, lm + tm), n0, std::min(w.n1, n0 + tn), k0,
                                   std::min(w.k1, k0 + tk), k0 == w.k0, k0 + tk >= w.k1, ct + li});
                // The panel's later K slices come in pieces with the previous step's A loads.
                if (li == 0 && k0 > w.k0) w.steps.back().b_pieces = g;
              }
            ct += g;
          }
          for (; m0 < w.m1; m0 += tm) add_tile(b, m0, n0);
        }
      } else {
        for (int64_t m0 = w.m0; m0 < w.m1; m0 += tm)
          for (int64_t n0 : n_tiles) add_tile(b, m0, n0);
      }
    }
    // Tiles already in a slot are not loaded again: an A tile over several n tiles when K is
    // one step, a panel's tiles (slot = K step) while its m (n) tile lasts. Tile sequence
    // numbers drive the ping-pong slots and the multicast handshakes.
    std::tuple<int64_t, int64_t, int64_t> a_key{-1, -1, -1}, b_key{-1, -1, -1};
    std::pair<int64_t, int64_t> a_panel_key{-1, -1}, b_panel_key{-1, -1};
    std::set<int64_t> a_in, b_in;  // K steps of the current panel already loaded
    int64_t a_seq = -1, b_seq = -1;
    for (auto& s : w.steps) {
      const int64_t kstep = (s.k0 - w.k0) / tk;
      if (grid.a_panel) {
        if (std::make_pair(s.b, s.m0) != a_panel_key) a_in.clear(), a_panel_key = {s.b, s.m0};
        if (a_in.insert(kstep).second) ++a_seq, s.load_a = true;
        s.a_slot = kstep;
      } else {
        auto ak = std::make_tuple(s.b, s.m0, s.k0);
        if (ak != a_key) ++a_seq, s.load_a = true, a_key = ak;
        s.a_slot = a_seq % nbuf;
      }
      if (grid.b_panel) {
        if (std::make_pair(s.b, s.n0) != b_panel_key) b_in.clear(), b_panel_key = {s.b, s.n0};
        if (b_in.insert(kstep).second) ++b_seq, s.load_b = true;
        s.b_slot = kstep;
      } else {
        auto bk = std::make_tuple(s.b, s.k0, s.n0);
        if (bk != b_key) ++b_seq, s.load_b = true, b_key = bk;
        s.b_slot = b_seq % nbuf;
      }
      s.a_idx = a_seq, s.b_idx = b_seq;
    }
    for (size_t i = 0; i < w.steps.size(); ++i) {
      MatmulStep& s = w.steps[i];
      s.a_last = i + 1 == w.steps.size() || w.steps[i + 1].a_idx != s.a_idx;
      s.b_last = i + 1 == w.steps.size() || w.steps[i + 1].b_idx != s.b_idx;
      s.a_count = a_seq + 1, s.b_count = b_seq + 1;
    }
  }
  return work;
}

}  // namespace spyre::compiler
