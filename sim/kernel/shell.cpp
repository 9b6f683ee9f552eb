// The thin SystemC shell: one module, one event, one method (see kernel.h).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>

#include <systemc>

#include "spyre/sim/kernel.h"

// libsystemc references sc_main; programs that use the model through simulate() (tests, the
// CLI, the Python module) never call it. A program with its own sc_main overrides this one.
__attribute__((weak)) int sc_main(int, char*[]) {
  std::fprintf(stderr, "spyre-sim: sc_main is not used; call spyre::sim::simulate()\n");
  return 1;
}

namespace spyre::sim {
namespace {

class KernelShell : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(KernelShell);
  explicit KernelShell(const sc_core::sc_module_name& name) : sc_core::sc_module(name) {
    SC_METHOD(activate);
    sensitive << wake_;
    dont_initialize();
  }

  // Arms one run; sc_start() follows.
  void arm(EventQueue* q, double period_ps, uint64_t max_cycles) {
    q_ = q;
    period_ps_ = period_ps;
    max_cycles_ = max_cycles;
    stop_ = KernelStop::Drained;
    error_ = nullptr;
    if (!q_->empty()) wake_.notify(sc_core::SC_ZERO_TIME);
  }
  KernelStop stop() const { return stop_; }
  std::exception_ptr error() const { return error_; }

 private:
  void activate() {
    if (max_cycles_ && q_->next_cycle() > max_cycles_) {
      stop_ = KernelStop::Watchdog;
      return;
    }
    try {
      q_->run_next_cycle();
    } catch (...) {
      error_ = std::current_exception();
      q_->clear();
      return;
    }
    if (q_->empty()) return;  // starvation ends sc_start()
    Cycle next = q_->next_cycle();
    double delay_ps = static_cast<double>(next - q_->now()) * period_ps_;
    wake_.notify(sc_core::sc_time(delay_ps, sc_core::SC_PS));
  }

  sc_core::sc_event wake_;
  EventQueue* q_ = nullptr;
  double period_ps_ = 1;
  uint64_t max_cycles_ = 0;
  KernelStop stop_ = KernelStop::Drained;
  std::exception_ptr error_;
};

std::mutex& kernel_mutex() {
  static std::mutex m;
  return m;
}

KernelShell& shell() {
  // Created before the first sc_start and never destroyed (SystemC cannot elaborate again).
  static KernelShell* s = [] {
    setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
    return new KernelShell("spyre_kernel_shell");
  }();
  return *s;
}

}  // namespace

KernelStop run_on_kernel(EventQueue& q, double period_ps, uint64_t max_cycles) {
  std::lock_guard<std::mutex> lock(kernel_mutex());
  KernelShell& s = shell();
  s.arm(&q, std::max(1.0, std::round(period_ps)), max_cycles);
  sc_core::sc_start();
  if (s.error()) std::rethrow_exception(s.error());
  return s.stop();
}

}  // namespace spyre::sim
