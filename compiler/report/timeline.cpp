// The kernel prediction (cost.h): a timeline of the kernel's instruction streams on every core at
// once. Each core's sequencer issues in order into its unit queues (queue depth, issue cost);
// each queue runs in order, a sync.wait holding it until its token is positive; PT and SFP
// instructions take the simulator's closed forms (arch/unit_timing.h); DMA transfers share the
// DRAM as a fluid (every transfer in flight gets an equal share of the bandwidth at the kernel's
// read/write mix, capped by its engine's rate and its outstanding requests, by the DRAM channels
// its words land on, and by its core's memory port once the port's buffer has run dry:
// mem_tlm.h's token bucket); ring transfers take their bytes over one link plus the hops.
// Signals to other cores (multicast arrivals, ring tokens, sync.sig core=c) release their waits
// there. The kernel ends when every core has drained, plus the barrier.
#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "dma_dram.h"
#include "spyre/arch/unit_timing.h"
#include "spyre/compiler/cost.h"

namespace spyre::compiler {
namespace {

using isa::Opcode;
constexpr int kQ = isa::kNumQueues;
constexpr double kInf = std::numeric_limits<double>::infinity();

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool is_dma(Opcode op) {
  return op == Opcode::DmaLoad || op == Opcode::DmaStore || op == Opcode::DmaGather ||
         op == Opcode::DmaScatter;
}
bool is_dma_write(Opcode op) { return op == Opcode::DmaStore || op == Opcode::DmaScatter; }
bool is_ring(Opcode op) { return op == Opcode::RingSend || op == Opcode::RingReduce; }

struct Transfer {  // a DMA in flight
  int core, queue;
  double left;      // DRAM bytes: its bytes over the DRAM's efficiency on its rows
  double cap;       // DRAM bytes/cycle: the engine's rate and its outstanding requests
  double eff;       // its bytes per DRAM byte (what crosses its memory port)
  size_t port;      // its core's memory port and direction: 2 x port + (write ? 1 : 0)
  int spread;       // how its bytes spread over the DRAM's channels: -1 evenly (dma_dram.h)
  double rate = 0;  // DRAM bytes/cycle now (reshare)
};

class Timeline {
 public:
  Timeline(const std::vector<std::vector<isa::Instr>>& per_core, const arch::ArchConfig& cfg,
           const CostParams& cp)
      : cores_(per_core), cfg_(cfg), cp_(cp) {
    const size_t n = per_core.size();
    seq_.assign(n, 0);
    seq_time_.assign(n, 0.0);
    done_.assign(n, false);
    end_.assign(n, 0.0);
    queues_.assign(n, std::vector<Q>(kQ));
    tokens_.assign(n, std::vector<int64_t>(kTokens, 0));
    // A kernel that starts without a barrier can wait on tokens an earlier kernel signalled
    // (its producer of an LX-resident buffer, the same queue pair's ordering): they are there
    // when it starts. Credit every wait that no signal of this kernel answers.
    for (size_t c = 0; c < n; ++c)
      for (const auto& in : per_core[c]) {
        if (in.op == Opcode::Wait) --token(static_cast<int>(c), SPYRE_OPERAND(in, "tok"));
        if (in.op == Opcode::Signal)
          ++token(SPYRE_OPERAND(in, "core") < 0 ? static_cast<int>(c)
                                                : static_cast<int>(SPYRE_OPERAND(in, "core")),
                  SPYRE_OPERAND(in, "tok"));
        if (in.op == Opcode::DmaLoad && SPYRE_OPERAND(in, "mcast") != 0 &&
            SPYRE_OPERAND(in, "mtok") >= 0)
          for (int t = 0; t < 64 && t < static_cast<int>(n); ++t)
            if (t != static_cast<int>(c) && (SPYRE_OPERAND(in, "mcast") >> t & 1))
              ++token(t, SPYRE_OPERAND(in, "mtok"));
        if (is_ring(in.op) && SPYRE_OPERAND(in, "tok") >= 0)
          ++token(static_cast<int>(SPYRE_OPERAND(in, "dst_core")), SPYRE_OPERAND(in, "tok"));
      }
    for (auto& per : tokens_)
      for (auto& t : per) t = t < 0 ? -t : 0;
    current_.assign(n * kQ, nullptr);
    stalled_.assign(n, -1);
    // The DRAM's bandwidth at the kernel's read/write mix (cost.h: CostParams): IBM's
    // T = (R + W) / bw + turnaround x min(R, W) over the kernel's bytes. The turnaround is
    // charged at that rate for the whole kernel, also where reads run alone (a matmul's first
    // panel): the simulated DRAM pays it on every write however the streams overlap
    // (memory-bound kernels, held-out set: median 3.3 % charged this way, 9.0 % when reads
    // before the first write run at the streaming rate; tools/bench/costmodel/README.md).
    double rd = 0, wr = 0;
    cost_.resize(n);
    for (size_t c = 0; c < n; ++c) {
      cost_[c].reserve(per_core[c].size());
      for (const auto& in : per_core[c]) {
        cost_[c].push_back(instr_cost(in, cfg));
        if (is_dma(in.op)) (is_dma_write(in.op) ? wr : rd) += cost_[c].back().dram_bytes;
      }
    }
    const double bw = cp.dram_bytes_per_cycle(cfg);
    const double t = (rd + wr) / bw + cp.turnaround_cycles_per_byte(cfg) * std::min(rd, wr);
    dram_bw_ = t > 0 ? (rd + wr) / t : bw;
    latency_ = static_cast<double>(cp.dram_latency_cycles(cfg));
    // Memory ports (mem_tlm.h): each direction of a port passes mem.port_gbps long term, its
    // buffer of mem.port_buffer_bytes full at the start.
    cores_per_port_ = std::max<int64_t>(1, cfg.mem_cores_per_port);
    const size_t ports = static_cast<size_t>(ceil_div(static_cast<int64_t>(n), cores_per_port_));
    port_rate_ = cfg.mem_port_gbps / cfg.clock_ghz;
    port_buffer_ = static_cast<double>(cfg.mem_port_buffer_bytes);
    tokens_left_.assign(2 * std::max<size_t>(1, ports), port_buffer_);
    port_flow_.assign(tokens_left_.size(), 0.0);
    dd_ = dma_dram(per_core, cfg, cp);
  }

  // Each instruction's closed-form cost (cost.h: instr_cost), per core.
  const std::vector<std::vector<InstrCost>>& costs() const { return cost_; }
  // After run(): the most time one PT or SFP queue was charged.
  int64_t compute_busy() const {
    double most = 0;
    for (const auto& core : queues_)
      for (size_t q = 2; q <= 5 && q < core.size(); ++q) most = std::max(most, core[q].busy_cycles);
    return static_cast<int64_t>(std::ceil(most));
  }

  double run() {
    for (size_t c = 0; c < cores_.size(); ++c) push(0.0, Ev::Seq, static_cast<int>(c), 0);
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      advance(e.t);
      switch (e.kind) {
        case Ev::Seq: sequence(e.core); break;
        case Ev::Queue: try_start(e.core, e.q); break;
        case Ev::Done: finish(e.core, e.q); break;
        case Ev::Dram:
          if (e.version == dram_version_) dram_event();
          break;
        case Ev::Token: arrive(e.core, static_cast<int64_t>(e.version)); break;
      }
    }
    double end = 0;
    for (size_t c = 0; c < cores_.size(); ++c) end = std::max(end, end_[c]);
    return end;
  }

 private:
  enum class Ev { Seq, Queue, Done, Dram, Token };
  struct Event {
    double t;
    Ev kind;
    int core, q;
    uint64_t version = 0;
    bool operator>(const Event& o) const { return t > o.t; }
  };
  struct Q {
    std::deque<size_t> waiting;  // instruction indices, issued, not started
    bool busy = false;
    bool blocked = false;  // the head is a wait on a zero token
    double free_at = 0;
    arch::PtPipe pt_pipe;    // a PT queue's array: its last pt.mm (unit_timing.h)
    double busy_cycles = 0;  // a unit queue's time charged (a chained pt.mm its streams only)
  };

  void push(double t, Ev k, int core, int q, uint64_t v = 0) { events_.push({t, k, core, q, v}); }

  // The sequencer of `core` issues its next instruction when its queue has room.
  void sequence(int core) {
    const auto& s = cores_[static_cast<size_t>(core)];
    size_t& i = seq_[static_cast<size_t>(core)];
    if (i >= s.size()) return finish_core(core);
    const isa::Instr& in = s[i];
    if (in.op == Opcode::Barrier || in.op == Opcode::Halt) {  // the end of this kernel
      i = s.size();
      return finish_core(core);
    }
    if (in.op == Opcode::Delay) {  // the sequencer waits, then issues; the queues go on
      push(now_ + static_cast<double>(SPYRE_OPERAND(in, "cycles") + cfg_.issue_cycles), Ev::Seq,
           core, 0);
      ++i;
      return;
    }
    const int q = static_cast<int>(isa::queue_of(in));
    Q& qu = queues_[static_cast<size_t>(core)][static_cast<size_t>(q)];
    if (static_cast<int64_t>(qu.waiting.size()) >= cfg_.queue_depth) {
      stalled_[static_cast<size_t>(core)] = q;  // resumed when the queue starts an instruction
      return;
    }
    qu.waiting.push_back(i++);
    const double next = now_ + static_cast<double>(cfg_.issue_cycles);
    push(now_, Ev::Queue, core, q);
    push(next, Ev::Seq, core, 0);
  }

  void finish_core(int core) {
    done_[static_cast<size_t>(core)] = true;
    update_end(core);
  }
  void update_end(int core) {
    double t = now_;
    for (const Q& q : queues_[static_cast<size_t>(core)]) t = std::max(t, q.free_at);
    end_[static_cast<size_t>(core)] = std::max(end_[static_cast<size_t>(core)], t);
  }

  void try_start(int core, int q) {
    Q& qu = queues_[static_cast<size_t>(core)][static_cast<size_t>(q)];
    if (qu.busy || qu.waiting.empty() || now_ < qu.free_at) return;
    const size_t idx = qu.waiting.front();
    const isa::Instr& in = cores_[static_cast<size_t>(core)][idx];
    if (in.op == Opcode::Wait) {
      int64_t& tok = token(core, SPYRE_OPERAND(in, "tok"));
      if (tok <= 0) {
        qu.blocked = true;
        return;
      }
      --tok;
      qu.blocked = false;
    }
    qu.waiting.pop_front();
    if (int& s = stalled_[static_cast<size_t>(core)]; s == q) {
      s = -1;
      push(now_, Ev::Seq, core, 0);
    }
    qu.busy = true;
    current_[static_cast<size_t>(core) * kQ + static_cast<size_t>(q)] = &in;
    if (is_dma(in.op)) {
      const InstrCost& c = cost_[static_cast<size_t>(core)][idx];
      const int64_t rate =
          is_dma_write(in.op) ? cfg_.dma_write_bytes_per_cycle : cfg_.dma_read_bytes_per_cycle;
      // Little's law: the requests one engine may have in flight over the DRAM latency, each
      // moving whole DRAM words (a request of a few bytes still moves one).
      const int64_t piece =
          std::min(std::max<int64_t>(SPYRE_OPERAND(in, "bytes"), 1), cfg_.dma_burst_bytes);
      const double per_request =
          c.requests > 0 ? static_cast<double>(c.dram_bytes) / static_cast<double>(c.requests)
                         : static_cast<double>(piece);
      const double words = std::max(1.0, per_request / static_cast<double>(piece));
      const double outstanding = static_cast<double>(arch::dma_in_flight(cfg_, piece)) *
                                 per_request / std::max(1.0, latency_);
      // Setup and the first data's latency, then the bytes at the DRAM share.
      const double lead = static_cast<double>(cfg_.dma_setup_cycles) + latency_;
      // Strided rows cost the DRAM more than their bytes (cost.h: run_efficiency).
      const double eff = dd_.eff[static_cast<size_t>(core)][idx];
      const size_t port =
          2 * std::min(static_cast<size_t>(core / cores_per_port_), tokens_left_.size() / 2 - 1) +
          (is_dma_write(in.op) ? 1 : 0);
      pending_dma_.push_back({core, q, static_cast<double>(c.dram_bytes) / eff,
                              std::min(static_cast<double>(rate) * words, outstanding) / eff,
                              eff / words, port, dd_.spread[static_cast<size_t>(core)][idx]});
      admit_at_.push_back(now_ + lead);
      if (now_ + lead < dram_next_) {  // the DRAM looks again when it is admitted
        dram_next_ = now_ + lead;
        push(dram_next_, Ev::Dram, -1, -1, ++dram_version_);
      }
      return;
    }
    double dur = static_cast<double>(cost_[static_cast<size_t>(core)][idx].cycles);  // 0: sync
    if (in.op == Opcode::PtMatmul) dur = static_cast<double>(qu.pt_pipe.start(cfg_, in, now_));
    qu.busy_cycles += dur;
    if (is_ring(in.op)) {
      const int64_t bytes = SPYRE_OPERAND(in, "bytes");
      const int64_t hops = ring_hops(core, static_cast<int>(SPYRE_OPERAND(in, "dst_core")));
      dur = static_cast<double>(
          ceil_div(bytes, std::max<int64_t>(1, cfg_.ring_link_bytes_per_cycle)) +
          hops * cfg_.ring_hop_latency_cycles +
          (in.op == Opcode::RingReduce ? cfg_.ring_reduce_latency_cycles : 0));
    }
    push(now_ + dur, Ev::Done, core, q);
  }

  int64_t ring_hops(int a, int b) const {
    const int64_t n = static_cast<int64_t>(cores_.size());
    const int64_t d = std::abs(static_cast<int64_t>(b) - a) % std::max<int64_t>(1, n);
    return std::max<int64_t>(1, std::min(d, n - d));
  }

  // A token sent from core `from` arrives after the hops between them (the ring's signal
  // latency); data the signal follows (a multicast tile, a ring block) adds its own time.
  void signal(int from, int core, int64_t tok, double extra = 0) {
    if (core < 0 || core >= static_cast<int>(cores_.size())) return;
    const double lat =
        extra + (core == from
                     ? 0.0
                     : static_cast<double>(ring_hops(from, core) * cfg_.ring_hop_latency_cycles));
    if (lat <= 0) return arrive(core, tok);
    events_.push({now_ + lat, Ev::Token, core, 0, static_cast<uint64_t>(tok)});
  }
  int64_t& token(int core, int64_t tok) {
    auto& t = tokens_[static_cast<size_t>(core)];
    if (tok < 0 || tok >= static_cast<int64_t>(t.size())) t.resize(static_cast<size_t>(tok) + 1, 0);
    return t[static_cast<size_t>(tok)];
  }
  void arrive(int core, int64_t tok) {
    ++token(core, tok);
    for (int q = 0; q < kQ; ++q)
      if (queues_[static_cast<size_t>(core)][static_cast<size_t>(q)].blocked)
        push(now_, Ev::Queue, core, q);
  }

  void finish(int core, int q) {
    Q& qu = queues_[static_cast<size_t>(core)][static_cast<size_t>(q)];
    const isa::Instr& in = *current_[static_cast<size_t>(core) * kQ + static_cast<size_t>(q)];
    qu.busy = false;
    qu.free_at = now_;
    if (in.op == Opcode::Signal)
      signal(core,
             SPYRE_OPERAND(in, "core") < 0 ? core : static_cast<int>(SPYRE_OPERAND(in, "core")),
             SPYRE_OPERAND(in, "tok"));
    if (in.op == Opcode::DmaLoad && SPYRE_OPERAND(in, "mcast") != 0 &&
        SPYRE_OPERAND(in, "mtok") >= 0) {
      // The last piece crosses the ring to each target after it lands here.
      const double piece = static_cast<double>(
          ceil_div(std::min<int64_t>(SPYRE_OPERAND(in, "bytes"), cfg_.dma_burst_bytes),
                   std::max<int64_t>(1, cfg_.ring_link_bytes_per_cycle)));
      for (int t = 0; t < 64 && t < static_cast<int>(cores_.size()); ++t)
        if (t != core && (SPYRE_OPERAND(in, "mcast") >> t & 1))
          signal(core, t, SPYRE_OPERAND(in, "mtok"), piece);
    }
    if (is_ring(in.op) && SPYRE_OPERAND(in, "tok") >= 0)  // its time already covers the hops
      arrive(static_cast<int>(SPYRE_OPERAND(in, "dst_core")), SPYRE_OPERAND(in, "tok"));
    update_end(core);
    push(now_, Ev::Queue, core, q);
  }

  // --- DRAM as a fluid: transfers in flight share the bandwidth equally, each capped by its
  // own rate and, where its port's buffer is empty, by the port's rate (max-min fair
  // water-filling), while each port's buffer drains at what passes it over the port's rate
  // and refills below it.
  void advance(double t) {
    const double dt = t - now_;
    if (dt > 0) {
      for (auto& x : active_) x.left -= dt * x.rate;
      for (size_t p = 0; p < tokens_left_.size(); ++p) {
        double& tok = tokens_left_[p];
        tok = std::clamp(tok + (port_rate_ - port_flow_[p]) * dt, 0.0, port_buffer_);
        if (tok < 1e-6 * port_buffer_) tok = 0;
      }
    }
    now_ = t;
  }
  void reshare() {
    // Progressive filling: the unfrozen transfers rise together until a DRAM channel, a dry
    // port or a transfer's own cap is full; those on it freeze; the rest go on. The DRAM as a
    // whole passes dram_bw_ (the kernel's mix), each channel one channel's rate; a transfer loads
    // the channels in its spread's proportions.
    std::vector<char>& frozen = frozen_;
    frozen.assign(active_.size(), 0);
    size_t left_n = active_.size();
    double dram_used = 0;
    chan_used_.assign(dd_.channels, 0.0);
    std::vector<double>& port_used = port_used_;
    port_used.assign(tokens_left_.size(), 0.0);
    std::vector<double>& port_eff = port_eff_;
    while (left_n > 0) {
      port_eff.assign(tokens_left_.size(), 0.0);
      chan_w_.assign(dd_.channels, 0.0);
      double even = 0, level = (dram_bw_ - dram_used) / static_cast<double>(left_n);
      for (size_t i = 0; i < active_.size(); ++i)
        if (!frozen[i]) {
          const Transfer& x = active_[i];
          level = std::min(level, x.cap);
          port_eff[x.port] += x.eff;
          if (x.spread < 0)
            even += 1.0 / static_cast<double>(dd_.channels);
          else
            for (const auto& [k, share] : dd_.spreads[static_cast<size_t>(x.spread)])
              chan_w_[k] += share;
        }
      for (size_t k = 0; k < dd_.channels; ++k) {
        chan_w_[k] += even;
        if (chan_w_[k] > 0)
          level = std::min(level, (dd_.channel_bytes_per_cycle - chan_used_[k]) / chan_w_[k]);
      }
      for (size_t p = 0; p < tokens_left_.size(); ++p)
        if (tokens_left_[p] <= 0 && port_eff[p] > 0)
          level = std::min(level, (port_rate_ - port_used[p]) / port_eff[p]);
      level = std::max(level, 0.0);
      const bool dram_full =
          dram_used + level * static_cast<double>(left_n) >= dram_bw_ * (1 - 1e-12);
      chan_full_.assign(dd_.channels, 0);
      bool any_full = false;
      for (size_t k = 0; k < dd_.channels; ++k)
        if (chan_w_[k] > 0 &&
            chan_used_[k] + level * chan_w_[k] >= dd_.channel_bytes_per_cycle * (1 - 1e-12))
          chan_full_[k] = 1, any_full = true;
      for (size_t i = 0; i < active_.size(); ++i) {
        if (frozen[i]) continue;
        Transfer& x = active_[i];
        const bool port_full =
            tokens_left_[x.port] <= 0 &&
            port_used[x.port] + level * port_eff[x.port] >= port_rate_ * (1 - 1e-12);
        bool chan_full = x.spread < 0 && any_full;
        if (x.spread >= 0)
          for (const auto& [k, share] : dd_.spreads[static_cast<size_t>(x.spread)])
            chan_full = chan_full || chan_full_[k];
        if (dram_full || chan_full || port_full || x.cap <= level) {
          x.rate = level;
          frozen[i] = 1;
          --left_n;
          dram_used += level;
          port_used[x.port] += level * x.eff;
          if (x.spread < 0)
            for (double& u : chan_used_) u += level / static_cast<double>(dd_.channels);
          else
            for (const auto& [k, share] : dd_.spreads[static_cast<size_t>(x.spread)])
              chan_used_[k] += level * share;
        }
      }
    }
    port_flow_ = port_used;
  }
  void dram_event() {
    // Admit transfers whose lead time has passed.
    for (size_t i = 0; i < pending_dma_.size();)
      if (admit_at_[i] <= now_ + 1e-9) {
        active_.push_back(pending_dma_[i]);
        pending_dma_.erase(pending_dma_.begin() + static_cast<std::ptrdiff_t>(i));
        admit_at_.erase(admit_at_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    // Complete the ones with nothing left, or with less than the clock can still tell apart
    // from now (far into a long kernel a few bytes' time rounds to nothing: without this the
    // DRAM would look again at the same instant forever).
    for (size_t i = 0; i < active_.size();)
      if (active_[i].left <= 1e-6 ||
          (active_[i].rate > 0 && now_ + active_[i].left / active_[i].rate <= now_)) {
        const Transfer x = active_[i];
        active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(i));
        push(now_, Ev::Done, x.core, x.queue);
      } else {
        ++i;
      }
    reshare();
    double next = kInf;
    for (const auto& x : active_)
      if (x.rate > 0) next = std::min(next, now_ + x.left / x.rate);
    for (double a : admit_at_) next = std::min(next, a);
    // A port whose buffer drains runs dry: its share changes then.
    for (size_t p = 0; p < tokens_left_.size(); ++p)
      if (tokens_left_[p] > 0 && port_flow_[p] > port_rate_)
        next = std::min(next, now_ + tokens_left_[p] / (port_flow_[p] - port_rate_));
    dram_next_ = next;
    if (next < kInf) push(next, Ev::Dram, -1, -1, ++dram_version_);
  }

  const std::vector<std::vector<isa::Instr>>& cores_;
  const arch::ArchConfig& cfg_;
  const CostParams& cp_;
  std::vector<size_t> seq_;
  std::vector<double> seq_time_, end_;
  std::vector<bool> done_;
  std::vector<std::vector<Q>> queues_;
  static constexpr size_t kTokens = 512;  // token ids seen: queue pairs < 49, raw < 512
  std::vector<std::vector<int64_t>> tokens_;
  std::vector<int> stalled_;  // per core: the full queue its sequencer waits on, or -1
  std::vector<char> frozen_;  // reshare()'s scratch
  std::vector<double> port_used_, port_eff_;     // reshare()'s scratch
  std::vector<double> chan_used_, chan_w_;       // reshare()'s scratch, per channel
  std::vector<char> chan_full_;                  // reshare()'s scratch, per channel
  std::vector<double> tokens_left_, port_flow_;  // per port and direction: bytes, bytes/cycle
  int64_t cores_per_port_ = 1;
  double port_rate_ = 0, port_buffer_ = 0;  // bytes/cycle, bytes
  std::vector<const isa::Instr*> current_;  // per core and queue: the instruction running
  std::vector<std::vector<InstrCost>> cost_;
  DmaDram dd_;  // each DMA's DRAM efficiency and channel spread (dma_dram.h)
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  std::vector<Transfer> active_, pending_dma_;
  std::vector<double> admit_at_;
  double now_ = 0, dram_bw_ = 1, latency_ = 0, dram_next_ = kInf;
  uint64_t dram_version_ = 0;
};

}  // namespace

KernelPrediction predict(const std::vector<std::vector<isa::Instr>>& per_core,
                         const arch::ArchConfig& cfg, const CostParams& cp) {
  KernelPrediction p;
  Timeline t(per_core, cfg, cp);
  for (size_t c = 0; c < per_core.size(); ++c) {
    std::array<int64_t, kQ> busy{};
    for (size_t i = 0; i < per_core[c].size(); ++i) {
      const InstrCost& cost = t.costs()[c][i];
      busy[static_cast<size_t>(isa::queue_of(per_core[c][i]))] += cost.cycles;
      p.dram_bytes += cost.dram_bytes;
    }
    for (size_t q = 0; q <= 1; ++q) p.dma_cycles = std::max(p.dma_cycles, busy[q]);
  }
  p.dram_cycles = static_cast<int64_t>(
      std::ceil(static_cast<double>(p.dram_bytes) / cp.dram_bytes_per_cycle(cfg)));
  bool barrier = false;  // the last kernel halts: no barrier to pay
  for (const auto& instrs : per_core)
    barrier = barrier || (!instrs.empty() && instrs.back().op == Opcode::Barrier);
  p.cycles = static_cast<int64_t>(std::ceil(t.run())) + (barrier ? cfg.barrier_latency_cycles : 0);
  p.compute_cycles = t.compute_busy();
  return p;
}

}  // namespace spyre::compiler
