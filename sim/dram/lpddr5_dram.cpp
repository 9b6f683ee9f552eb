// "lpddr5": channels, bank groups, banks and open-page row buffers behind one FR-FCFS
// controller per channel (contract and formulas in dram.h).
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "dram_impls.h"
#include "lpddr5_spec.h"
#include "spyre/sim/kernel.h"

namespace spyre::sim {
namespace {

using lpddr5::Ps;
using lpddr5::Refresh;
using lpddr5::Spec;

constexpr Ps kNever = -(Ps{1} << 60);

struct BankStats {
  uint64_t reads = 0, writes = 0, hits = 0, misses = 0, conflicts = 0, refreshes = 0;
};

struct Bank {
  int64_t open_row = -1;  // -1: precharged
  Ps act_ok = 0;          // earliest ACT (precharge or refresh complete)
  Ps cas_ok = 0;          // earliest CAS (ACT + tRCD)
  Ps pre_ok = 0;          // earliest PRE (tRAS, tRTP, tWR)
  int prepared = 0;       // an ACT issued ahead (dram.row_prepare): 1 miss, 2 conflict; the
                          // row's first CAS counts as that kind
  BankStats st;
};

struct Txn {
  uint32_t req;  // index into requests_
  int bank;
  int64_t row;
};

// One controller queue (reads or writes) of a channel, kept per bank so that FR-FCFS needs
// no scan of the whole queue: within a bank every row hit has the same earliest CAS, and so
// does every other transaction (miss or conflict), so the winner is the oldest hit or the
// oldest non-hit of some bank. `seq` is the order of entry into the queue: its age.
struct Queued {
  uint64_t seq;
  uint32_t req;
  int64_t row;
};
struct BankQueue {
  std::vector<Queued> q;  // oldest first
  size_t open = 0;        // how many of them are to the bank's open row
  // The oldest row hit ([0]) and the oldest other transaction ([1]): its index in q and its
  // age, remembered until the bank's queue loses an entry or its open row changes (a younger
  // entry never displaces them), so a decision reads the queues of the chosen bank and of
  // banks whose candidates were forgotten since, not of every candidate bank.
  struct Candidate {
    size_t i = 0;
    uint64_t seq = 0;
    bool known = false;
  };
  Candidate cand[2];
  const Candidate& candidate(bool hit, int64_t open_row) {
    Candidate& c = cand[hit ? 0 : 1];
    if (!c.known) {
      size_t i = 0;
      while ((q[i].row == open_row) != hit) ++i;
      c = Candidate{i, q[i].seq, true};
    }
    return c;
  }
  void forget() { cand[0].known = cand[1].known = false; }
  void erase(size_t i) {
    q.erase(q.begin() + static_cast<std::ptrdiff_t>(i));
    forget();
  }
};
struct Queue {
  std::vector<BankQueue> banks;
  // Bit b of hits: bank b holds a row hit; of others: it holds a miss or conflict. The channel
  // decision visits only those banks, in ascending order as a scan of every bank would.
  std::vector<uint64_t> hits, others;
  size_t n = 0;
  uint64_t next_seq = 0;
  void resize(size_t nbanks) {
    banks.resize(nbanks);
    hits.assign((nbanks + 63) / 64, 0);
    others.assign((nbanks + 63) / 64, 0);
  }
  void mark(size_t bank) {
    const BankQueue& bq = banks[bank];
    const uint64_t bit = uint64_t{1} << (bank % 64);
    uint64_t& h = hits[bank / 64];
    uint64_t& o = others[bank / 64];
    h = bq.open > 0 ? h | bit : h & ~bit;
    o = bq.open < bq.q.size() ? o | bit : o & ~bit;
  }
  bool empty() const { return n == 0; }
  size_t size() const { return n; }
};

struct Channel {
  std::vector<Bank> banks;
  Queue rq, wq;                   // controller queues
  std::vector<Txn> rback, wback;  // waiting for a queue slot (upstream back-pressure)
  size_t rback_head = 0, wback_head = 0;
  std::vector<Ps> bg_last_cas;   // per bank group, for tCCD_L
  std::vector<uint64_t> closed;  // bit b: bank b is precharged (no open row)
  Ps next_decision = 0;          // the previous CAS: the command slot frees then
  Ps bus_free = 0;               // data bus busy until
  Ps last_read_end = kNever, last_write_end = kNever;
  int last_dir = -1;                                       // 0 read, 1 write, -1 none yet
  std::array<Ps, 4> acts{kNever, kNever, kNever, kNever};  // last four ACTs (tFAW)
  size_t act_i = 0;
  Ps last_act = kNever;
  Ps next_ref = 0;
  int ref_bank = 0;
  bool writing = false;  // write-drain mode
  size_t phase_n = 0;    // transactions in the current mode
  bool pending = false;  // a decision event is scheduled
  // Stats.
  uint64_t refreshes = 0, r2w = 0, w2r = 0, stalls = 0;
  Ps bus_busy = 0;
};

class Lpddr5Dram : public DramModel {
 public:
  explicit Lpddr5Dram(Env& env)
      : env_(env), s_(lpddr5::make_spec(env.cfg)), tb_(env.cfg.clock_ghz) {
    const int bpg = s_.banks_per_group;
    if ((bpg & (bpg - 1)) == 0)
      for (bpg_shift_ = 0; (1 << bpg_shift_) != bpg;) ++bpg_shift_;
    ch_.resize(static_cast<size_t>(s_.channels));
    for (Channel& c : ch_) {
      c.banks.resize(static_cast<size_t>(s_.banks()));
      c.rq.resize(static_cast<size_t>(s_.banks()));
      c.wq.resize(static_cast<size_t>(s_.banks()));
      c.bg_last_cas.assign(static_cast<size_t>(s_.bank_groups), kNever);
      c.closed.assign(static_cast<size_t>((s_.banks() + 63) / 64), 0);
      for (int b = 0; b < s_.banks(); ++b)
        c.closed[static_cast<size_t>(b / 64)] |= 1ull << (b % 64);
      c.next_ref = s_.refresh == Refresh::PerBank ? s_.refi / s_.banks() : s_.refi;
    }
    if (env.activity)
      for (int i = 0; i < s_.channels; ++i) {
        if (env.trace)
          tracks_.push_back(env.trace->track(env.module("dram"), "ch" + std::to_string(i)));
        bw_.emplace_back(env.module("dram"), "ch" + std::to_string(i) + " GB/s", kTraceWindowCycles,
                         env.cfg.clock_ghz);
      }
  }

  void submit(DramRequest req) override {
    const uint64_t words =
        std::max<uint64_t>(1, (req.cost_bytes + s_.word_bytes - 1) / s_.word_bytes);
    const uint64_t base = req.addr / s_.word_bytes * s_.word_bytes;
    (req.write ? write_bytes_ : read_bytes_) += req.bytes;
    ++(req.write ? write_requests_ : read_requests_);
    moved_bytes_ += words * s_.word_bytes;
    uint32_t id = alloc(std::move(req), words);
    lpddr5::AddressMap::Walk walk(s_.map, base);
    for (uint64_t w = 0; w < words; ++w) {
      if (w > 0) walk.next();
      const lpddr5::Location& l = walk.loc();
      Channel& c = ch_[static_cast<size_t>(l.channel)];
      Txn t{id, l.bank, l.row};
      Queue& q = requests_[id].req.write ? c.wq : c.rq;
      if (q.size() < s_.queue_depth && backlog(c, requests_[id].req.write) == 0) {
        enqueue(c, q, t);
      } else {
        (requests_[id].req.write ? c.wback : c.rback).push_back(t);
        ++c.stalls;
      }
      wake(l.channel);
    }
  }

  uint64_t read_bytes() const override { return read_bytes_; }
  uint64_t write_bytes() const override { return write_bytes_; }
  nlohmann::json stats() const override;

 private:
  struct Request {
    DramRequest req;
    uint64_t left = 0;  // transactions not yet scheduled
    Ps end = 0;         // latest data end so far
  };
  struct Plan {
    int kind;  // 0 hit, 1 miss (closed), 2 conflict
    Ps pre, act, cas;
  };

  uint32_t alloc(DramRequest req, uint64_t words) {
    uint32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<uint32_t>(requests_.size());
      requests_.emplace_back();
    }
    requests_[id] = Request{std::move(req), words, 0};
    return id;
  }

  // The first core cycle starting at or after `ps`: the chip's one time rule (TimeBase).
  uint64_t cycle_of(Ps ps) const {
    return ps <= 0 ? 0 : tb_.cycle_at_or_after(static_cast<uint64_t>(ps));
  }

  static size_t backlog(const Channel& c, bool write) {
    return write ? c.wback.size() - c.wback_head : c.rback.size() - c.rback_head;
  }

  void wake(int ci) {
    Channel& c = ch_[static_cast<size_t>(ci)];
    if (c.pending) return;
    c.pending = true;
    const uint64_t at = std::max(env_.sched.now(), cycle_of(c.next_decision));
    env_.sched.at_end_of(at, [this, ci] { decide(ci); });
  }

  static void enqueue(const Channel& c, Queue& q, const Txn& t) {
    BankQueue& bq = q.banks[static_cast<size_t>(t.bank)];
    bq.q.push_back(Queued{q.next_seq++, t.req, t.row});
    if (t.row == c.banks[static_cast<size_t>(t.bank)].open_row) ++bq.open;
    ++q.n;
    q.mark(static_cast<size_t>(t.bank));
  }

  // A bank's open row changed (ACT, refresh): recount both queues' entries to it.
  static void set_open_row(Channel& c, int bank, int64_t row) {
    const size_t bi = static_cast<size_t>(bank);
    c.banks[bi].open_row = row;
    c.banks[bi].prepared = 0;
    const uint64_t bit = uint64_t{1} << (bi % 64);
    c.closed[bi / 64] = row < 0 ? c.closed[bi / 64] | bit : c.closed[bi / 64] & ~bit;
    for (Queue* q : {&c.rq, &c.wq}) {
      BankQueue& bq = q->banks[bi];
      bq.open = 0;
      bq.forget();
      if (row >= 0)
        for (const Queued& e : bq.q) bq.open += e.row == row;
      q->mark(bi);
    }
  }

  // A bank's group (bank = bg * banks_per_group + b): a shift when banks_per_group is a power
  // of two, as it is on every LPDDR5 part (a division per candidate otherwise).
  size_t group_of(int bank) const {
    return bpg_shift_ >= 0 ? static_cast<size_t>(bank) >> bpg_shift_
                           : static_cast<size_t>(bank / s_.banks_per_group);
  }

  // No CAS of the current mode issues before this: T, the data bus and the turnaround.
  Ps cas_floor(const Channel& c, bool write, Ps T) const {
    Ps f = std::max(T, c.bus_free - (write ? s_.wl : s_.rl));
    if (write && c.last_dir == 0) f = std::max(f, c.last_read_end + s_.rtw - s_.wl);
    if (!write && c.last_dir == 1) f = std::max(f, c.last_write_end + s_.wtr);
    return f;
  }

  // The earliest commands for a transaction to `bank` (a row hit or not) issued no earlier
  // than T, with floor = cas_floor(c, write, T).
  Plan plan(const Channel& c, int bank, bool hit, Ps T, Ps floor) const {
    const Bank& b = c.banks[static_cast<size_t>(bank)];
    Plan p{0, kNever, kNever, b.cas_ok};
    if (!hit) {
      p.kind = b.open_row < 0 ? 1 : 2;
      Ps act_lb = T;
      if (p.kind == 2) {
        p.pre = std::max(T, b.pre_ok);
        act_lb = p.pre + s_.rp;
      }
      p.act = std::max({act_lb, b.act_ok, c.last_act + s_.rrd, c.acts[c.act_i] + s_.faw});
      p.cas = p.act + s_.rcd;
    }
    const size_t bg = group_of(bank);
    p.cas = std::max({p.cas, c.bg_last_cas[bg] + s_.ccd_l, floor});
    return p;
  }

  void refresh_until(Channel& c, Ps T) {
    if (s_.refresh == Refresh::Off) return;
    while (c.next_ref <= T) {
      auto ready = [this](const Bank& b) {
        return b.open_row >= 0 ? std::max(b.pre_ok, b.act_ok) + s_.rp : b.act_ok;
      };
      if (s_.refresh == Refresh::AllBank) {
        Ps start = c.next_ref;
        for (const Bank& b : c.banks) start = std::max(start, ready(b));
        for (int bi = 0; bi < s_.banks(); ++bi) {
          Bank& b = c.banks[static_cast<size_t>(bi)];
          set_open_row(c, bi, -1);
          b.act_ok = start + s_.rfc_ab;
          ++b.st.refreshes;
        }
        c.next_ref += s_.refi;
      } else {
        Bank& b = c.banks[static_cast<size_t>(c.ref_bank)];
        Ps start = std::max(c.next_ref, ready(b));
        set_open_row(c, c.ref_bank, -1);
        b.act_ok = start + s_.rfc_pb;
        ++b.st.refreshes;
        c.ref_bank = (c.ref_bank + 1) % s_.banks();
        c.next_ref += s_.refi / s_.banks();
      }
      ++c.refreshes;
    }
  }

  // Write-drain policy (dram.h): switches the channel's mode before each pick.
  void choose_mode(Channel& c) {
    const size_t batch = s_.write_high - s_.write_low;
    bool sw;
    if (!c.writing)
      sw = !c.wq.empty() && (c.rq.empty() || (c.wq.size() >= s_.write_high && c.phase_n >= batch));
    else
      sw = !c.rq.empty() && (c.wq.empty() || c.wq.size() <= s_.write_low || c.phase_n >= batch);
    if (sw) {
      c.writing = !c.writing;
      c.phase_n = 0;
    }
  }

  void decide(int ci) {
    Channel& c = ch_[static_cast<size_t>(ci)];
    c.pending = false;
    const Ps now_ps = static_cast<Ps>(tb_.ps_of(env_.sched.now()));
    while (!c.rq.empty() || !c.wq.empty()) {
      const Ps T = std::max(now_ps, c.next_decision);
      if (T > now_ps) {
        wake(ci);
        return;
      }
      refresh_until(c, T);
      choose_mode(c);
      commit(ci, c, T);
    }
  }

  // FR-FCFS: the transaction whose CAS can issue first; ties go to the oldest.
  void commit(int ci, Channel& c, Ps T) {
    const bool write = c.writing;
    Queue& q = write ? c.wq : c.rq;
    const Ps floor = cas_floor(c, write, T);
    // Per bank, the oldest row hit and the oldest other transaction are the only candidates.
    // Hits first: no miss or conflict can issue its CAS before an ACT the channel allows now
    // plus tRCD, so when a hit beats that bound the others need no plan.
    Plan bp{0, 0, 0, 0};
    uint64_t best_seq = 0;
    int best_bank = -1;
    size_t best_i = 0;
    auto scan = [&](bool hits) {
      const std::vector<uint64_t>& marked = hits ? q.hits : q.others;
      for (size_t w = 0; w < marked.size(); ++w)
        for (uint64_t bits = marked[w]; bits != 0; bits &= bits - 1) {
          const int bank = static_cast<int>(w * 64) + __builtin_ctzll(bits);
          BankQueue& bq = q.banks[static_cast<size_t>(bank)];
          const auto& cd = bq.candidate(hits, c.banks[static_cast<size_t>(bank)].open_row);
          const Plan p = plan(c, bank, hits, T, floor);
          if (best_bank < 0 || p.cas < bp.cas || (p.cas == bp.cas && cd.seq < best_seq))
            bp = p, best_seq = cd.seq, best_bank = bank, best_i = cd.i;
        }
    };
    scan(true);
    const Ps act_now = std::max({T, c.last_act + s_.rrd, c.acts[c.act_i] + s_.faw});
    if (best_bank < 0 || bp.cas >= std::max(floor, act_now + s_.rcd)) scan(false);
    BankQueue& bq = q.banks[static_cast<size_t>(best_bank)];
    const Txn t{bq.q[best_i].req, best_bank, bq.q[best_i].row};
    if (t.row == c.banks[static_cast<size_t>(best_bank)].open_row) --bq.open;
    bq.erase(best_i);
    --q.n;
    q.mark(static_cast<size_t>(best_bank));
    refill(c, write);

    Bank& b = c.banks[static_cast<size_t>(t.bank)];
    const int kind = bp.kind == 0 && b.prepared != 0 ? b.prepared : bp.kind;
    b.prepared = 0;
    if (kind == 0)
      ++b.st.hits;
    else if (kind == 1)
      ++b.st.misses;
    else
      ++b.st.conflicts;
    if (bp.kind != 0) {
      set_open_row(c, t.bank, t.row);
      c.last_act = bp.act;
      c.acts[c.act_i] = bp.act;
      c.act_i = (c.act_i + 1) % c.acts.size();
      b.pre_ok = bp.act + s_.ras;
      b.cas_ok = bp.act + s_.rcd;
    }
    const Ps start = bp.cas + (write ? s_.wl : s_.rl);
    const Ps end = start + s_.burst;
    b.pre_ok = std::max(b.pre_ok, write ? end + s_.wr : bp.cas + s_.rtp);
    c.bg_last_cas[group_of(t.bank)] = bp.cas;
    c.bus_free = end;
    c.bus_busy += s_.burst;
    if (c.last_dir >= 0 && c.last_dir != static_cast<int>(write)) ++(write ? c.r2w : c.w2r);
    c.last_dir = static_cast<int>(write);
    (write ? c.last_write_end : c.last_read_end) = end;
    ++(write ? b.st.writes : b.st.reads);
    ++c.phase_n;
    c.next_decision = bp.cas;
    if (env_.activity) trace_txn(ci, write, t, kind, start, end);
    finish_txn(t.req, end);
    if (s_.row_prepare > 0) prepare_rows(c, q, write, T, bp.cas);
  }

  // dram.row_prepare: before the CAS just chosen (at `until`), the command bus activates
  // precharged banks: among closed banks, the oldest waiting transaction of the current mode
  // whose ACT (tRRD, tFAW, refresh) can issue no earlier than T and no later than `until` gets
  // it; repeated while one fits. Each is then a row hit for the decisions that follow. Open
  // rows stay open (open-page policy): a conflict still precharges only when it is chosen;
  // with dram.row_prepare = 2 an open bank that no waiting transaction of either queue hits
  // is a candidate too (PRE, then ACT).
  void prepare_rows(Channel& c, Queue& q, bool write, Ps T, Ps until) {
    const Queue& other = write ? c.rq : c.wq;
    for (;;) {
      // No bank's ACT issues before the channel's next ACT slot (tRRD, tFAW).
      if (std::max(c.last_act + s_.rrd, c.acts[c.act_i] + s_.faw) > until) return;
      int best_bank = -1;
      uint64_t best_seq = 0;
      size_t best_i = 0;
      Ps best_act = 0;
      int best_kind = 1;
      for (size_t w = 0; w < q.others.size(); ++w) {
        uint64_t mask = c.closed[w];
        if (s_.row_prepare == 2) mask |= ~q.hits[w] & ~other.hits[w];
        for (uint64_t bits = q.others[w] & mask; bits != 0; bits &= bits - 1) {
          const int bank = static_cast<int>(w * 64) + __builtin_ctzll(bits);
          const auto& cd = q.banks[static_cast<size_t>(bank)].candidate(
              false, c.banks[static_cast<size_t>(bank)].open_row);
          if (best_bank >= 0 && cd.seq > best_seq) continue;
          const Plan p = plan(c, bank, false, T, T);
          if (p.act <= until)
            best_bank = bank, best_seq = cd.seq, best_i = cd.i, best_act = p.act,
            best_kind = p.kind;
        }
      }
      if (best_bank < 0) return;
      Bank& b = c.banks[static_cast<size_t>(best_bank)];
      set_open_row(c, best_bank, q.banks[static_cast<size_t>(best_bank)].q[best_i].row);
      b.prepared = best_kind;
      c.last_act = best_act;
      c.acts[c.act_i] = best_act;
      c.act_i = (c.act_i + 1) % c.acts.size();
      b.pre_ok = best_act + s_.ras;
      b.cas_ok = best_act + s_.rcd;
    }
  }

  void refill(Channel& c, bool write) {
    Queue& q = write ? c.wq : c.rq;
    std::vector<Txn>& back = write ? c.wback : c.rback;
    size_t& head = write ? c.wback_head : c.rback_head;
    while (q.size() < s_.queue_depth && head < back.size()) enqueue(c, q, back[head++]);
    if (head == back.size()) back.clear(), head = 0;
  }

  void finish_txn(uint32_t id, Ps end) {
    Request& r = requests_[id];
    r.end = std::max(r.end, end);
    if (--r.left > 0) return;
    const uint64_t at = cycle_of(r.end + s_.frontend);
    env_.sched.at(std::max(at, env_.sched.now()), std::move(r.req.landed));
    r.req.landed = nullptr;
    free_.push_back(id);
  }

  void trace_txn(int ci, bool write, const Txn& t, int kind, int64_t start, int64_t end) {
    const uint64_t cs = cycle_of(start);
    const uint64_t ce = cycle_of(end);
    if (env_.trace) {  // full detail: the transaction's span
      const std::string detail = "row " + std::to_string(t.row) +
                                 (kind == 0   ? " hit"
                                  : kind == 1 ? " miss"
                                              : " conflict");
      traces::SpanArgs a;
      a.core = requests_[t.req].req.core;
      a.detail = detail;
      env_.trace->span(tracks_[static_cast<size_t>(ci)], write ? "write" : "read", cs, ce - cs, a);
    }
    bw_[static_cast<size_t>(ci)].add(*env_.activity, env_.sched.now(), cs, ce - cs,
                                     static_cast<double>(s_.word_bytes));
  }

 public:
  void finish_trace() override {
    for (auto& b : bw_) b.flush_all(*env_.activity);
  }

 private:
  Env& env_;
  Spec s_;
  TimeBase tb_;
  int bpg_shift_ = -1;  // log2(banks_per_group) when a power of two
  std::vector<Channel> ch_;
  std::vector<Request> requests_;
  std::vector<uint32_t> free_;
  std::vector<int> tracks_;
  std::vector<traces::WindowCounter> bw_;  // per channel, GB/s per trace window
  uint64_t read_bytes_ = 0, write_bytes_ = 0, read_requests_ = 0, write_requests_ = 0;
  uint64_t moved_bytes_ = 0;
};

nlohmann::json Lpddr5Dram::stats() const {
  const double ps_per_cycle = 1000.0 / s_.clock_ghz;
  nlohmann::json channels = nlohmann::json::array();
  Ps busy = 0;
  uint64_t tot[6] = {0, 0, 0, 0, 0, 0};
  for (const Channel& c : ch_) {
    nlohmann::json banks = nlohmann::json::array();
    BankStats sum;
    for (const Bank& b : c.banks) {
      banks.push_back({{"reads", b.st.reads},
                       {"writes", b.st.writes},
                       {"row_hits", b.st.hits},
                       {"row_misses", b.st.misses},
                       {"row_conflicts", b.st.conflicts},
                       {"refreshes", b.st.refreshes}});
      sum.reads += b.st.reads, sum.writes += b.st.writes, sum.hits += b.st.hits;
      sum.misses += b.st.misses, sum.conflicts += b.st.conflicts;
    }
    busy += c.bus_busy;
    tot[0] += sum.reads, tot[1] += sum.writes, tot[2] += sum.hits, tot[3] += sum.misses;
    tot[4] += sum.conflicts, tot[5] += c.refreshes;
    channels.push_back({{"module", env_.module("dram") + ".ch" + std::to_string(channels.size())},
                        {"reads", sum.reads},
                        {"writes", sum.writes},
                        {"row_hits", sum.hits},
                        {"row_misses", sum.misses},
                        {"row_conflicts", sum.conflicts},
                        {"refreshes", c.refreshes},
                        {"data_bus_busy_cycles", static_cast<double>(c.bus_busy) / ps_per_cycle},
                        {"read_to_write_turnarounds", c.r2w},
                        {"write_to_read_turnarounds", c.w2r},
                        {"queue_full_stalls", c.stalls},
                        {"banks", banks}});
  }
  return {
      {"impl", "lpddr5"},
      {"read_bytes", read_bytes_},
      {"write_bytes", write_bytes_},
      {"read_requests", read_requests_},
      {"write_requests", write_requests_},
      {"moved_bytes", moved_bytes_},
      {"busy_cycles", static_cast<double>(busy) / ps_per_cycle / static_cast<double>(s_.channels)},
      {"peak_gbps", s_.peak_gbps},
      {"reads", tot[0]},
      {"writes", tot[1]},
      {"row_hits", tot[2]},
      {"row_misses", tot[3]},
      {"row_conflicts", tot[4]},
      {"refreshes", tot[5]},
      {"channels", channels},
      {"units",
       {{"read_bytes", "bytes"},
        {"write_bytes", "bytes"},
        {"moved_bytes", "bytes"},
        {"read_requests", "requests"},
        {"write_requests", "requests"},
        {"busy_cycles", "core cycles, mean data-bus busy time of one channel"},
        {"peak_gbps", "GB/s"},
        {"reads", "128 B transactions"},
        {"writes", "128 B transactions"},
        {"row_hits", "transactions"},
        {"row_misses", "transactions to a precharged bank"},
        {"row_conflicts", "transactions that closed another row"},
        {"refreshes", "REFab (channel) or REFpb (bank) commands"},
        {"data_bus_busy_cycles", "core cycles"},
        {"read_to_write_turnarounds", "count"},
        {"write_to_read_turnarounds", "count"},
        {"queue_full_stalls", "transactions that found their queue full"}}}};
}

}  // namespace

std::unique_ptr<DramModel> make_lpddr5_dram(Env& env) { return std::make_unique<Lpddr5Dram>(env); }

}  // namespace spyre::sim
