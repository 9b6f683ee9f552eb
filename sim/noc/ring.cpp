// Ring timing (formulas in ring.h).
#include <algorithm>

#include "spyre/error.h"
#include "spyre/sim/report.h"
#include "spyre/sim/ring.h"

namespace spyre::sim {

namespace {
Ring::Routing routing_from(const std::string& name) {
  if (name == "shortest") return Ring::Routing::Shortest;
  if (name == "cw") return Ring::Routing::Clockwise;
  if (name == "ccw") return Ring::Routing::CounterClockwise;
  SPYRE_FAIL("spyre/ring/config", "ring.routing",
             "unknown routing '" + name + "' (known: shortest, cw, ccw)");
}
}  // namespace

Ring::Ring(const arch::ArchConfig& cfg, Scheduler* sched)
    : n_(static_cast<int>(std::max<int64_t>(1, cfg.cores))),
      hop_latency_(std::max<int64_t>(0, cfg.ring_hop_latency_cycles)),
      link_bw_(cfg.ring_link_bytes_per_cycle),
      buffer_cycles_(0),
      routing_(routing_from(cfg.ring_routing)),
      sched_(sched),
      links_(static_cast<size_t>(n_) * 2) {
  if (link_bw_ <= 0)
    SPYRE_FAIL("spyre/ring/config", "ring.link_bytes_per_cycle", "must be positive");
  if (cfg.ring_buffer_bytes < 0)
    SPYRE_FAIL("spyre/ring/config", "ring.buffer_bytes", "must not be negative");
  buffer_cycles_ = cfg.ring_buffer_bytes / link_bw_;
}

bool Ring::clockwise(int src, int dst) const {
  switch (routing_) {
    case Routing::Clockwise: return true;
    case Routing::CounterClockwise: return false;
    case Routing::Shortest: break;
  }
  const int cw = ((dst - src) % n_ + n_) % n_;
  return cw <= n_ - cw;
}

int Ring::hops(int src, int dst) const {
  const int cw = ((dst - src) % n_ + n_) % n_;
  return clockwise(src, dst) ? cw : (n_ - cw) % n_;
}

Cycle Ring::signal_latency(int src, int dst) const {
  return static_cast<Cycle>(hops(src, dst)) * static_cast<Cycle>(hop_latency_);
}

void Ring::place_chain(int src, bool cw, int h, uint64_t bytes, Cycle now,
                       std::vector<Cycle>& arrive, Cycle& start) {
  const Cycle d = (bytes + static_cast<uint64_t>(link_bw_) - 1) / static_cast<uint64_t>(link_bw_);
  const Cycle lat = static_cast<Cycle>(hop_latency_);
  arrive.assign(static_cast<size_t>(h), 0);
  scratch_.assign(static_cast<size_t>(h), 0);  // enter_j
  int node = src;
  Cycle ready = now;  // the head is at link j's input
  for (int j = 0; j < h; ++j) {
    Link& l = links_[static_cast<size_t>(link_index(node, cw))];
    const Cycle enter = std::max(ready, l.free);
    l.stall += enter - ready;
    scratch_[static_cast<size_t>(j)] = enter;
    if (j == 0) start = enter;
    arrive[static_cast<size_t>(j)] = enter + lat + d;
    ready = enter + lat;
    node = step(node, cw);
  }
  // Tails backwards: back-pressure when the downstream buffer cannot hold the waiting data.
  Cycle next_tail = 0;
  for (int j = h - 1; j >= 0; --j) {
    node = ((src + (cw ? j : -j)) % n_ + n_) % n_;
    Link& l = links_[static_cast<size_t>(link_index(node, cw))];
    const Cycle enter = scratch_[static_cast<size_t>(j)];
    Cycle tail = enter + d;
    if (j < h - 1 && next_tail > tail + lat + static_cast<Cycle>(buffer_cycles_))
      tail = next_tail - lat - static_cast<Cycle>(buffer_cycles_);
    l.backpressure += tail - enter - d;
    l.busy += tail - enter;
    l.bytes += bytes;
    l.free = tail;
    next_tail = tail;
    if (trace_) trace_link(node, cw, src, bytes, enter, tail, now);
  }
}

std::vector<Ring::Arrival> Ring::place(const Pending& p, Cycle now) {
  const Cycle d = (p.bytes + static_cast<uint64_t>(link_bw_) - 1) / static_cast<uint64_t>(link_bw_);
  int far_cw = 0, far_ccw = 0;
  for (int t : p.targets) {
    if (t == p.src) continue;
    (clockwise(p.src, t) ? far_cw : far_ccw) =
        std::max(clockwise(p.src, t) ? far_cw : far_ccw, hops(p.src, t));
  }
  std::vector<Cycle> cw_arrive, ccw_arrive;
  Cycle cw_start = now, ccw_start = now;
  place_chain(p.src, true, far_cw, p.bytes, now, cw_arrive, cw_start);
  place_chain(p.src, false, far_ccw, p.bytes, now, ccw_arrive, ccw_start);
  std::vector<Arrival> out;
  out.reserve(p.targets.size());
  for (int t : p.targets) {
    if (t == p.src) {
      out.push_back({t, now + d, now});
      continue;
    }
    const bool cw = clockwise(p.src, t);
    out.push_back({t, (cw ? cw_arrive : ccw_arrive)[static_cast<size_t>(hops(p.src, t) - 1)],
                   cw ? cw_start : ccw_start});
  }
  bytes_ += p.bytes;
  ++transfers_;
  return out;
}

Cycle Ring::reserve(int src, int dst, uint64_t bytes, Cycle now) {
  return place(Pending{src, {dst}, bytes, nullptr}, now).front().cycle;
}

void Ring::request(int src, std::vector<int> targets, uint64_t bytes, Placed placed) {
  if (!sched_) {
    placed(place(Pending{src, std::move(targets), bytes, nullptr}, 0));
    return;
  }
  pending_.push_back(Pending{src, std::move(targets), bytes, std::move(placed)});
  if (arbitration_armed_) return;
  arbitration_armed_ = true;
  sched_->at_end_of(sched_->now(), [this] { arbitrate(); });
}

void Ring::arbitrate() {
  arbitration_armed_ = false;
  std::vector<Pending> batch;
  batch.swap(pending_);
  std::stable_sort(batch.begin(), batch.end(),
                   [](const Pending& a, const Pending& b) { return a.src < b.src; });
  const Cycle now = sched_->now();
  for (Pending& p : batch) p.placed(place(p, now));
}

void Ring::set_trace(traces::TraceSink* sink, bool spans, std::string group, uint64_t window) {
  trace_ = sink;
  trace_spans_ = spans;
  trace_group_ = std::move(group);
  trace_window_ = window;
  link_track_.assign(links_.size(), -1);
}

void Ring::trace_link(int node, bool cw, int src, uint64_t bytes, Cycle enter, Cycle tail,
                      Cycle now) {
  const int li = link_index(node, cw);
  int& track = link_track_[static_cast<size_t>(li)];
  if (track == -1) {  // first use of this link: its track and counter
    const std::string name = "link " + std::to_string(node) + "->" + std::to_string(step(node, cw));
    track = trace_spans_ ? trace_->track(trace_group_, name) : -2;
    if (link_util_.empty())
      link_util_.assign(links_.size(), traces::WindowCounter(trace_group_, "", trace_window_, 1.0));
    link_util_[static_cast<size_t>(li)] =
        traces::WindowCounter(trace_group_, name + " util", trace_window_, 1.0);
  }
  if (trace_spans_) {
    traces::SpanArgs a;
    a.core = src;
    const std::string detail =
        "from core " + std::to_string(src) + ", " + std::to_string(bytes) + " B";
    a.detail = detail;
    trace_->span(track, "xfer", enter, tail - enter, a);
  }
  // Busy cycles per window: the counter's value is the busy fraction.
  link_util_[static_cast<size_t>(li)].add(*trace_, now, enter, tail - enter,
                                          static_cast<double>(tail - enter));
}

void Ring::finish_trace() {
  if (!trace_) return;
  for (size_t i = 0; i < link_util_.size(); ++i)
    if (link_track_[i] != -1) link_util_[i].flush_all(*trace_);
}

nlohmann::json Ring::stats() const {
  nlohmann::json cw = nlohmann::json::array(), ccw = nlohmann::json::array();
  uint64_t busy = 0;
  for (int i = 0; i < n_; ++i)
    for (bool dir : {true, false}) {
      const Link& l = links_[static_cast<size_t>(link_index(i, dir))];
      busy += l.busy;
      (dir ? cw : ccw)
          .push_back({{"busy_cycles", l.busy},
                      {"bytes", l.bytes},
                      {"stall_cycles", l.stall},
                      {"backpressure_cycles", l.backpressure}});
    }
  return {{"bytes", bytes_}, {"transfers", transfers_}, {"link_busy_cycles", busy},
          {"links", n_ * 2}, {"cw", std::move(cw)},     {"ccw", std::move(ccw)}};
}

}  // namespace spyre::sim
