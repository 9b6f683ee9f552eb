#pragma once
// A ring between cores: cfg.cores nodes, one link per direction between neighbours (link
// (i, cw) carries i -> i+1, link (i, ccw) carries i -> i-1). The chip has two: the data ring
// (ring.send, dma.load multicast) and the reduce ring (ring.red), each with its own links.
//
// Route (ring.routing): "shortest" (the shorter direction, ties clockwise), "cw" or "ccw";
//   hops = the distance along that direction.
// Transfer of `bytes` over links L_0..L_{h-1} of its route, requested at cycle `now`:
//   D = ceil(bytes / ring_link_bytes_per_cycle), lat = ring_hop_latency_cycles,
//   Bc = floor(ring_buffer_bytes / ring_link_bytes_per_cycle) (cycles of data one link's
//   input buffer holds).
//   enter_0 = max(now, free(L_0)); enter_j = max(enter_{j-1} + lat, free(L_j)): the head waits
//     in the buffer of node j for a busy link (wormhole, cut-through).
//   tail_{h-1} = enter_{h-1} + D; tail_j = max(enter_j + D, tail_{j+1} - lat - Bc): a link is
//     held until the message's tail has left it; when the downstream buffer is full the tail
//     cannot leave (back-pressure).
//   free(L_j) := tail_j; arrival = enter_{h-1} + lat + D (uncontended: now + h*lat + D);
//   h = 0 (to itself): arrival = now + D, no link.
// Arbitration: requests are placed in the order they were made; requests of one cycle are
//   collected and placed at the end of that cycle ordered by source core id, then by order of
//   request (oldest first, ties by core id). A placed transfer keeps its reservation; later
//   ones queue behind it (links are booked up to free(L), gaps before are not back-filled).
// Multicast from src to a set of cores: each target goes by its route direction; per
//   direction it is one transfer to the farthest target whose head and data pass through every
//   node on the way: a target k hops away receives the block at enter_{k-1} + lat + D.
// A token signal (sync.sig to another core) takes hops * lat and reserves no link.
// Stats per link: busy_cycles (held), bytes, stall_cycles (heads waiting for this link while it
//   was busy), backpressure_cycles (held beyond D because the downstream buffer was full).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/sim/scheduler.h"
#include "spyre/traces/sink.h"

namespace spyre::sim {

// One arrival of a placed transfer: core `core` has the whole block at `cycle`; the source
// sent its head onto the first link at `start` (the source reads [start, start + D)).
struct RingArrival {
  int core;
  Cycle cycle;
  Cycle start;
};

// Where a core's units request ring transfers: the Ring itself (plain unit tests), or under
// the kernel the core's network interface, a TLM-2.0 initiator (ring_tlm.h).
class RingPort {
 public:
  using Arrival = RingArrival;
  using Placed = std::function<void(const std::vector<Arrival>&)>;
  virtual ~RingPort() = default;
  // Requests a transfer from src to every core of `targets` (one for a unicast) at now();
  // `placed` runs when arbitration has placed it (at the end of this cycle), with the arrival
  // at each target in the order of `targets`.
  virtual void request(int src, std::vector<int> targets, uint64_t bytes, Placed placed) = 0;
};

class Ring : public RingPort {
 public:
  enum class Routing { Shortest, Clockwise, CounterClockwise };
  // Throws spyre::Error for an unknown ring.routing or a non-positive link bandwidth.
  // Without a scheduler, request() places at once (unit tests of the closed form).
  explicit Ring(const arch::ArchConfig& cfg, Scheduler* sched = nullptr);

  int size() const { return n_; }
  int hops(int src, int dst) const;        // along the route
  bool clockwise(int src, int dst) const;  // the route's direction
  Cycle signal_latency(int src, int dst) const;

  void request(int src, std::vector<int> targets, uint64_t bytes, Placed placed) override;
  // Places a unicast at once starting no earlier than `now`; returns its arrival.
  Cycle reserve(int src, int dst, uint64_t bytes, Cycle now);

  nlohmann::json stats() const;  // layout in sim/README.md

  // Tracing: each link gets a windowed utilisation counter "link a->b util" (busy fraction of
  // each window) and, with `spans`, its busy intervals as spans on track "link a->b" of `group`.
  // Tracks are declared on first use. finish_trace() flushes the counters at the end of the run.
  void set_trace(traces::TraceSink* sink, bool spans, std::string group, uint64_t window);
  void finish_trace();

 private:
  struct Link {
    Cycle free = 0;
    uint64_t busy = 0, bytes = 0, stall = 0, backpressure = 0;
  };
  struct Pending {
    int src;
    std::vector<int> targets;
    uint64_t bytes;
    Placed placed;
  };
  int link_index(int node, bool cw) const { return node * 2 + (cw ? 0 : 1); }
  int step(int node, bool cw) const { return (node + (cw ? 1 : n_ - 1)) % n_; }
  // Places a transfer of `h` hops from src in one direction; fills arrive[k] = arrival at the
  // node k+1 hops away (k < h).
  void place_chain(int src, bool cw, int h, uint64_t bytes, Cycle now, std::vector<Cycle>& arrive,
                   Cycle& start);
  std::vector<Arrival> place(const Pending& p, Cycle now);
  void arbitrate();
  void trace_link(int node, bool cw, int src, uint64_t bytes, Cycle enter, Cycle tail, Cycle now);

  int n_;
  int64_t hop_latency_, link_bw_, buffer_cycles_;
  Routing routing_;
  Scheduler* sched_;
  std::vector<Link> links_;  // per (node, direction): the link leaving `node`
  std::vector<Pending> pending_;
  bool arbitration_armed_ = false;
  uint64_t bytes_ = 0, transfers_ = 0;
  std::vector<Cycle> scratch_;
  traces::TraceSink* trace_ = nullptr;
  bool trace_spans_ = false;
  std::string trace_group_;
  uint64_t trace_window_ = 1024;
  std::vector<int> link_track_;  // per link: -1 until used, then its track (-2: no spans)
  std::vector<traces::WindowCounter> link_util_;  // per link
};

}  // namespace spyre::sim
