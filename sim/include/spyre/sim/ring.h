#pragma once
// The ring between cores: cfg.cores nodes, one link per direction between neighbours.
//   - route: the shorter direction (ties go clockwise, i -> i+1); hops = that distance.
//   - transfer of `bytes`: D = ceil(bytes / ring_link_bytes_per_cycle); the message enters
//     link j of its path (j = 0..hops-1) at T + j * hop_latency and holds it for D cycles;
//     T = max(now, max_j(link_free[j] - j * hop_latency)) (per-link reservation: contention).
//     Completion = T + hops * ring_hop_latency_cycles + D; uncontended: now + hops*lat + D.
//   - a token signal to another core (sync.sig core=X) takes hops * ring_hop_latency_cycles
//     and reserves no link.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/sim/scheduler.h"

namespace spyre::sim {

class Ring {
 public:
  explicit Ring(const arch::ArchConfig& cfg);
  int hops(int src, int dst) const;
  bool clockwise(int src, int dst) const;
  // Reserves the links for a transfer starting no earlier than `now`; returns its completion.
  Cycle reserve(int src, int dst, uint64_t bytes, Cycle now);
  Cycle signal_latency(int src, int dst) const;
  nlohmann::json stats() const;  // {"bytes":..,"transfers":..,"link_busy_cycles":..}

 private:
  int link_index(int node, bool cw) const { return node * 2 + (cw ? 0 : 1); }
  int n_;
  int64_t hop_latency_, link_bw_;
  std::vector<Cycle> link_free_;  // per (node, direction): the link leaving `node`
  uint64_t bytes_ = 0, transfers_ = 0, link_busy_ = 0;
};

}  // namespace spyre::sim
