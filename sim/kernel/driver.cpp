// Cycles on SystemC time, one simulation context per run, the event-queue process (kernel.h).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "spyre/error.h"
#include "spyre/sim/kernel.h"
#include "spyre/sim/report.h"

// libsystemc references sc_main; programs that use the model through simulate() (tests, the
// CLI, the Python module) never call it. A program with its own sc_main overrides this one.
__attribute__((weak)) int sc_main(int, char*[]) {
  std::fprintf(stderr, "spyre-sim: sc_main is not used; call spyre::sim::simulate()\n");
  return 1;
}

namespace spyre::sim {

namespace {
using u128 = unsigned __int128;
constexpr uint64_t kPsPerKhzCycle = 1'000'000'000;  // ps per cycle = 1e9 / f_kHz
}  // namespace

TimeBase::TimeBase(double clock_ghz) {
  if (!(clock_ghz > 0) || clock_ghz > 1000)
    throw Error("chip.clock_ghz", "must be in (0, 1000] GHz, got " + std::to_string(clock_ghz));
  khz_ = static_cast<uint64_t>(std::llround(clock_ghz * 1e6));
  if (khz_ == 0) throw Error("chip.clock_ghz", "must be at least 1 kHz");
  while ((uint64_t{1} << shift_) < khz_) ++shift_;
  magic_ = ((u128{1} << (64 + shift_)) + khz_ - 1) / khz_;
}

uint64_t TimeBase::ps_of(Cycle c) const {
  const u128 num = static_cast<u128>(c) * kPsPerKhzCycle + khz_ / 2;
  // Below 2^63 (runs under 9.2e9 cycles) the quotient is a multiply by magic_ and a shift:
  // magic_ = (2^(64+s) + e) / khz with 0 <= e < khz <= 2^s, so num * magic_ / 2^(64+s) =
  // num / khz + num * e / (khz * 2^(64+s)), and num * e < 2^63 * 2^s keeps the excess under
  // 1 / khz: below the next integer whatever num's remainder. Exact, as the division was.
  if (num < (u128{1} << 63)) return static_cast<uint64_t>((num * magic_) >> (64 + shift_));
  return static_cast<uint64_t>(num / khz_);
}

Cycle TimeBase::cycle_at_or_after(uint64_t ps) const {
  // ps_of(c) >= ps  <=>  c * 1e9 + khz/2 >= ps * khz  <=>  c >= (ps * khz - khz/2) / 1e9
  const u128 need = static_cast<u128>(ps) * khz_;
  const u128 half = khz_ / 2;
  if (need <= half) return 0;
  const u128 num = need - half + kPsPerKhzCycle - 1;
  if (num <= UINT64_MAX) return static_cast<uint64_t>(num) / kPsPerKhzCycle;
  return static_cast<Cycle>(num / kPsPerKhzCycle);
}

sc_core::sc_time TimeBase::time_of(Cycle c) const { return sc_core::sc_time::from_value(ps_of(c)); }

Cycle TimeBase::cycle_at_or_after(const sc_core::sc_time& t) const {
  return cycle_at_or_after(static_cast<uint64_t>(t.value()));
}

namespace {
std::recursive_mutex& context_mutex() {
  static std::recursive_mutex m;
  return m;
}
}  // namespace

SimContext::SimContext() : lock_(context_mutex()), prev_(sc_core::sc_curr_simcontext) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
  ctx_ = std::make_unique<sc_core::sc_simcontext>();
  sc_core::sc_curr_simcontext = ctx_.get();
  sc_core::sc_default_global_context = ctx_.get();
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
}

SimContext::~SimContext() {
  ctx_.reset();
  sc_core::sc_curr_simcontext = prev_;
  sc_core::sc_default_global_context = prev_;
}

EventDriver::EventDriver(const sc_core::sc_module_name& name, EventQueue& q, TimeBase tb,
                         uint64_t max_cycles)
    : sc_core::sc_module(name), q_(q), tb_(tb), max_cycles_(max_cycles) {
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
    SPYRE_FAIL("spyre/kernel/resolution", std::string(basename()),
               "the SystemC time resolution must be 1 ps, is " +
                   sc_core::sc_get_time_resolution().to_string());
  SC_METHOD(activate);
  sensitive << wake_;
  dont_initialize();
}

void EventDriver::start_of_simulation() { notify_next(); }

void EventDriver::notify_next() {
  if (stopped_ || q_.empty()) return;
  const sc_core::sc_time at = tb_.time_of(q_.next_cycle());
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  wake_.notify(at > now ? at - now : sc_core::SC_ZERO_TIME);
}

void EventDriver::wake() {
  if (!in_cycle_) notify_next();  // inside a cycle, the driver re-arms itself at its end
}

void EventDriver::activate() {
  ++activations_;
  if (stopped_ || q_.empty()) return;
  const Cycle next = q_.next_cycle();
  const sc_core::sc_time at = tb_.time_of(next);
  if (at > sc_core::sc_time_stamp()) return notify_next();  // woken early by another process
  if (max_cycles_ && next > max_cycles_) {
    stop_ = KernelStop::Watchdog;
    stopped_ = true;
    sc_core::sc_pause();
    return;
  }
  in_cycle_ = true;
  try {
    q_.run_next_cycle();
  } catch (...) {
    error_ = std::current_exception();
    stopped_ = true;
    sc_core::sc_pause();
  }
  in_cycle_ = false;
  notify_next();
}

KernelStop EventDriver::run() {
  sc_core::sc_start();
  if (error_) std::rethrow_exception(error_);
  return stop_;
}

}  // namespace spyre::sim
