// The chip of one run: cores, ring, DRAM, barrier, and the stats tree.
#include "spyre/sim/chip.h"

#include <algorithm>

#include "spyre/arch/unit_timing.h"
#include "spyre/sim/report.h"

namespace spyre::sim {

namespace {
// A stats object with the path of the module it describes first (traces/names.h).
nlohmann::json with_module(nlohmann::json stats, const std::string& module) {
  stats["module"] = module;
  return stats;
}
}  // namespace

Chip::Chip(Env& env, ChipPorts ports)
    : env_(env),
      ports_(std::move(ports)),
      ring_(env.cfg, &env.sched),
      reduce_ring_(env.cfg, &env.sched),
      active_cores_(static_cast<int>(env.program.num_cores)),
      kernels_(env.program.kernels.size()) {
  if (env.activity) {
    barrier_track_ = env.activity->track(env.chip, "barrier");
    host_track_ = env.activity->track(env.chip, "host");
    const bool spans = env.trace != nullptr;
    ring_.set_trace(env.activity, spans, env.module("ring_data"), kTraceWindowCycles);
    reduce_ring_.set_trace(env.activity, spans, env.module("ring_reduce"), kTraceWindowCycles);
  }
  for (int c = 0; c < env.cfg.cores; ++c) cores_.push_back(std::make_unique<Core>(env, *this, c));
}

void Chip::start() {
  for (auto& c : cores_) c->start();
}

bool Chip::all_halted() const {
  return std::all_of(cores_.begin(), cores_.end(), [](const auto& c) { return c->halted(); });
}

Cycle Chip::end_cycle() const {
  Cycle end = 0;
  for (const auto& c : cores_) end = std::max(end, c->halt_cycle());
  return end;
}

void Chip::signal(int from, int to, int64_t tok, FlowSrc src) {
  Cycle lat = ring_.signal_latency(from, to);
  if (lat == 0) {
    core(to).add_token(tok, src);
    return;
  }
  env_.sched.at(env_.sched.now() + lat, [this, to, tok, src] { core(to).add_token(tok, src); });
}

void Chip::finish_trace() {
  if (!env_.activity) return;
  ring_.finish_trace();
  reduce_ring_.finish_trace();
  for (auto& c : cores_) c->finish_trace();
}

Cycle Chip::host_call(const isa::Instr& in, const InstrRef& at) {
  const int64_t in_bytes = SPYRE_OPERAND(in, "in_bytes"),
                out_bytes = SPYRE_OPERAND(in, "out_bytes");
  const auto cycles = static_cast<Cycle>(arch::host_call_cycles(env_.cfg, in_bytes, out_bytes));
  if (env_.functional) {
    if (!env_.host_call || !*env_.host_call)
      SPYRE_FAIL("spyre/chip/host_call", at.where(),
                 "a host fallback needs a host to run its op: run the program from its IR "
                 "(spyre-sim run, spyre_sim.run), or timing-only");
    env_.settle_data();  // the host reads and writes the image the instructions left
    (*env_.host_call)(in.kernel, dram_data_, env_.program.dram_bytes);
  }
  note_kernel(in.kernel, env_.sched.now(), env_.sched.now() + cycles);  // the kernel's span
  ++host_.calls;
  host_.in_bytes += static_cast<uint64_t>(in_bytes);
  host_.out_bytes += static_cast<uint64_t>(out_bytes);
  host_.busy_cycles += cycles;
  if (env_.activity) {
    const std::string& kernel =
        in.kernel < env_.program.kernels.size() ? env_.program.kernels[in.kernel] : "host.call";
    const std::vector<traces::Arg> extra = {traces::Arg::num("in_bytes", in_bytes),
                                            traces::Arg::num("out_bytes", out_bytes)};
    traces::SpanArgs args;
    args.kernel = kernel;
    args.core = at.core;
    args.pc = static_cast<int64_t>(at.index);
    args.extra = &extra;
    env_.activity->span(host_track_, "host.call", env_.sched.now(), cycles, args);
  }
  return cycles;
}

void Chip::arrive_barrier(int) {
  if (arrived_++ == 0) first_arrival_ = env_.sched.now();
  if (arrived_ < active_cores_) return;
  arrived_ = 0;
  ++barriers_;
  const Cycle open = env_.sched.now() + static_cast<Cycle>(env_.cfg.barrier_latency_cycles);
  if (env_.activity)
    env_.activity->span(barrier_track_, "barrier", first_arrival_, open - first_arrival_,
                        traces::SpanArgs{});
  env_.sched.at(open, [this] {
    for (int c = 0; c < active_cores_; ++c) core(c).release_barrier();
  });
}

void Chip::note_kernel(uint16_t kernel, Cycle start, Cycle end) {
  if (kernel >= kernels_.size()) return;
  Span& s = kernels_[kernel];
  if (!s.seen) {
    s = {true, start, end};
    return;
  }
  s.start = std::min(s.start, start);
  s.end = std::max(s.end, end);
}

std::string Chip::stuck_report() const {
  std::string s;
  for (int c = 0; c < active_cores_; ++c)
    s += "\n  " + cores_[static_cast<size_t>(c)]->stuck_report();
  if (arrived_ > 0)
    s += "\n  barrier: " + std::to_string(arrived_) + " of " + std::to_string(active_cores_) +
         " cores arrived";
  return s;
}

std::vector<KernelStats> Chip::kernel_stats() const {
  std::vector<KernelStats> out;
  for (size_t k = 0; k < kernels_.size(); ++k)
    out.push_back(KernelStats{env_.program.kernels[k], kernels_[k].start, kernels_[k].end});
  return out;
}

nlohmann::json Chip::stats(Cycle cycles, nlohmann::json dram) const {
  using nlohmann::json;
  json cores = json::array();
  json totals = {{"pt", 0}, {"sfp", 0}, {"dma_in", 0}, {"dma_out", 0}, {"ring", 0}};
  for (const auto& c : cores_) {
    json cj = {{"module", traces::core_module(env_.chip, static_cast<int>(cores.size()))}};
    for (int q = 0; q < isa::kNumQueues; ++q) {
      const QueueStats& st = c->queue_stats(q);
      std::string name(isa::queue_name(static_cast<isa::Queue>(q)));
      cj[name] = {{"busy_cycles", st.busy_cycles},
                  {"wait_cycles", st.wait_cycles},
                  {"instructions", st.instructions}};
      std::string cls = name.substr(0, 2) == "pt"    ? "pt"
                        : name.substr(0, 3) == "sfp" ? "sfp"
                                                     : name;
      totals[cls] = totals[cls].get<uint64_t>() + st.busy_cycles;
    }
    cj["sequencer"] = {{"issued", c->issued()},
                       {"loop_words", c->loop_words()},
                       {"full_stall_cycles", c->full_stall_cycles()}};
    cj["lx"] = {{"banks", c->lx().stats()}};
    cores.push_back(std::move(cj));
  }
  const int64_t n = static_cast<int64_t>(cores_.size());
  json kernels = json::array();
  for (const KernelStats& k : kernel_stats())
    kernels.push_back({{"name", k.name},
                       {"start_cycle", k.start_cycle},
                       {"end_cycle", k.end_cycle},
                       {"cycles", k.cycles()}});
  return {{"chip",
           {{"cycles", cycles},
            {"clock_ghz", env_.cfg.clock_ghz},
            {"num_cores", n},
            {"program_cores", active_cores_},
            {"barriers", barriers_},
            {"host",
             {{"calls", host_.calls},
              {"in_bytes", host_.in_bytes},
              {"out_bytes", host_.out_bytes},
              {"busy_cycles", host_.busy_cycles}}},
            {"dram", with_module(std::move(dram), env_.module("dram"))},
            {"ring", with_module(ring_.stats(), env_.module("ring_data"))},
            {"reduce_ring", with_module(reduce_ring_.stats(), env_.module("ring_reduce"))},
            {"cores", std::move(cores)},
            {"busy_cycles", std::move(totals)},
            {"unit_count",
             {{"pt", n * 2}, {"sfp", n * 2}, {"dma_in", n}, {"dma_out", n}, {"ring", n}}}}},
          {"kernels", std::move(kernels)},
          {"units",
           {{"cycles", "cycles"},
            {"clock_ghz", "GHz"},
            {"busy_cycles", "cycles"},
            {"wait_cycles", "cycles"},
            {"full_stall_cycles", "cycles"},
            {"start_cycle", "cycles"},
            {"end_cycle", "cycles"},
            {"link_busy_cycles", "cycles (summed over links)"},
            {"stall_cycles", "cycles"},
            {"backpressure_cycles", "cycles"},
            {"conflict_stall_cycles", "cycles"},
            {"accesses", "count (bank accesses of up to lx.bank_bytes_per_cycle bytes)"},
            {"links", "count"},
            {"read_bytes", "bytes"},
            {"write_bytes", "bytes"},
            {"moved_bytes", "bytes (word-rounded)"},
            {"bytes", "bytes"},
            {"instructions", "count"},
            {"issued", "count"},
            {"loop_words", "count (loop / loop.step words decoded)"},
            {"read_requests", "count"},
            {"write_requests", "count"},
            {"transfers", "count"},
            {"barriers", "count"},
            {"calls", "count"},
            {"in_bytes", "bytes (device to host)"},
            {"out_bytes", "bytes (host to device)"},
            {"unit_count", "count"}}}};
}

}  // namespace spyre::sim
