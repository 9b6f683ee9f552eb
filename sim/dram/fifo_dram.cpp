// "fifo": one bandwidth server for the whole chip (formulas in dram.h).
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "dram_impls.h"

namespace spyre::sim {
namespace {

class FifoDram : public DramModel {
 public:
  explicit FifoDram(Env& env)
      : env_(env),
        bw_(env.cfg.dram_bytes_per_cycle()),
        latency_(static_cast<Cycle>(
            std::max<int64_t>(0, env.cfg.ns_to_cycles(env.cfg.dram_latency_ns)))),
        seq_(static_cast<size_t>(std::max<int64_t>(1, env.cfg.cores)), 0) {
    if (env.trace) track_ = env.trace->track(env.module("dram"), "fifo");
    if (env.activity)
      trace_bw_ = std::make_unique<traces::WindowCounter>(env.module("dram"), "fifo GB/s",
                                                          kTraceWindowCycles, env.cfg.clock_ghz);
  }

  void submit(DramRequest req) override {
    size_t c = static_cast<size_t>(req.core);
    if (c >= seq_.size()) seq_.resize(c + 1, 0);
    pending_.push_back(Pending{seq_[c]++, std::move(req)});
    if (!drain_pending_) {
      drain_pending_ = true;
      env_.sched.at_end_of(env_.sched.now(), [this] { drain(); });
    }
  }
  uint64_t read_bytes() const override { return read_bytes_; }
  uint64_t write_bytes() const override { return write_bytes_; }
  nlohmann::json stats() const override {
    return {{"impl", "fifo"},
            {"read_bytes", read_bytes_},
            {"write_bytes", write_bytes_},
            {"read_requests", read_requests_},
            {"write_requests", write_requests_},
            {"moved_bytes", moved_bytes_},
            {"busy_cycles", static_cast<double>(busy_mc_) / 1000.0}};
  }

 private:
  struct Pending {
    uint64_t seq;
    DramRequest req;
  };

  // Serves everything that arrived this cycle, ordered by (core, sequence).
  void drain() {
    drain_pending_ = false;
    std::stable_sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
      return a.req.core != b.req.core ? a.req.core < b.req.core : a.seq < b.seq;
    });
    const uint64_t now_mc = env_.sched.now() * 1000;
    for (Pending& p : pending_) {
      uint64_t service_mc = static_cast<uint64_t>(
          std::ceil(static_cast<double>(p.req.cost_bytes) * 1000.0 / bw_ - 1e-9));
      uint64_t start_mc = std::max(free_mc_, now_mc);
      free_mc_ = start_mc + service_mc;
      busy_mc_ += service_mc;
      moved_bytes_ += p.req.cost_bytes;
      (p.req.write ? write_bytes_ : read_bytes_) += p.req.bytes;
      ++(p.req.write ? write_requests_ : read_requests_);
      Cycle done = (free_mc_ + 999) / 1000;
      if (env_.activity) {
        const Cycle s = start_mc / 1000;
        if (env_.trace) {
          const std::string detail = std::to_string(p.req.bytes) + " B";
          traces::SpanArgs a;
          a.core = p.req.core;
          a.detail = detail;
          env_.trace->span(track_, p.req.write ? "write" : "read", s, done - s, a);
        }
        trace_bw_->add(*env_.activity, env_.sched.now(), s, done - s,
                       static_cast<double>(p.req.bytes));
      }
      env_.sched.at(done + latency_, std::move(p.req.landed));
    }
    pending_.clear();
  }

  Env& env_;
  double bw_;
  Cycle latency_;
  std::vector<uint64_t> seq_;
  std::vector<Pending> pending_;
  bool drain_pending_ = false;
  uint64_t free_mc_ = 0, busy_mc_ = 0;
  uint64_t read_bytes_ = 0, write_bytes_ = 0, read_requests_ = 0, write_requests_ = 0;
  uint64_t moved_bytes_ = 0;
  int track_ = -1;
  std::unique_ptr<traces::WindowCounter> trace_bw_;  // GB/s per trace window

 public:
  void finish_trace() override {
    if (trace_bw_) trace_bw_->flush_all(*env_.activity);
  }
};

}  // namespace

std::unique_ptr<DramModel> make_fifo_dram(Env& env) { return std::make_unique<FifoDram>(env); }

}  // namespace spyre::sim
