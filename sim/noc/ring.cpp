// Ring timing (formulas in ring.h).
#include <algorithm>

#include "spyre/sim/ring.h"

namespace spyre::sim {

Ring::Ring(const arch::ArchConfig& cfg)
    : n_(static_cast<int>(std::max<int64_t>(1, cfg.cores))),
      hop_latency_(std::max<int64_t>(0, cfg.ring_hop_latency_cycles)),
      link_bw_(std::max<int64_t>(1, cfg.ring_link_bytes_per_cycle)),
      link_free_(static_cast<size_t>(n_) * 2, 0) {}

bool Ring::clockwise(int src, int dst) const {
  int cw = ((dst - src) % n_ + n_) % n_;
  return cw <= n_ - cw || cw == 0;
}

int Ring::hops(int src, int dst) const {
  int cw = ((dst - src) % n_ + n_) % n_;
  return std::min(cw, (n_ - cw) % n_);
}

Cycle Ring::signal_latency(int src, int dst) const {
  return static_cast<Cycle>(hops(src, dst)) * static_cast<Cycle>(hop_latency_);
}

Cycle Ring::reserve(int src, int dst, uint64_t bytes, Cycle now) {
  const int h = hops(src, dst);
  const bool cw = clockwise(src, dst);
  const Cycle d = (bytes + static_cast<uint64_t>(link_bw_) - 1) / static_cast<uint64_t>(link_bw_);
  const Cycle lat = static_cast<Cycle>(hop_latency_);
  Cycle t = now;
  int node = src;
  for (int j = 0; j < h; ++j) {
    Cycle free = link_free_[static_cast<size_t>(link_index(node, cw))];
    Cycle off = static_cast<Cycle>(j) * lat;
    if (free > off) t = std::max(t, free - off);
    node = (node + (cw ? 1 : n_ - 1)) % n_;
  }
  node = src;
  for (int j = 0; j < h; ++j) {
    link_free_[static_cast<size_t>(link_index(node, cw))] = t + static_cast<Cycle>(j) * lat + d;
    node = (node + (cw ? 1 : n_ - 1)) % n_;
  }
  bytes_ += bytes;
  ++transfers_;
  link_busy_ += d * static_cast<Cycle>(h);
  return t + static_cast<Cycle>(h) * lat + d;
}

nlohmann::json Ring::stats() const {
  return {{"bytes", bytes_}, {"transfers", transfers_}, {"link_busy_cycles", link_busy_},
          {"links", n_ * 2}};
}

}  // namespace spyre::sim
