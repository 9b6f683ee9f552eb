#pragma once
// Functional runs: the data effects of completed instructions (DMA copies, ring transfers, PT
// and SFP arithmetic) run on a second host thread, one after another in the order the
// instructions completed, while the timing model goes on. The bytes every instruction sees are
// those of the one-thread run: the effects keep their order, and the timing model reads data
// (gather indices, host calls, the results) only after `drain()`. An effect that throws stops
// the worker; the error reaches the timing model at its next submit or drain, and a run that
// ends in an error of its own reports the worker's, which came first (ChipModule::run).
// The worker touches memory only: no SystemC, no scheduler, no trace.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "spyre/isa/isa.h"

namespace spyre::sim {

class DataWorker {
 public:
  // What runs an effect: `owner` (the submitting core) applies `in` (Core::run_effect).
  using Effect = void (*)(void* owner, const isa::Instr& in);

  explicit DataWorker(Effect effect);
  ~DataWorker();  // stops; effects not yet run are dropped (an error path), then joins
  DataWorker(const DataWorker&) = delete;
  DataWorker& operator=(const DataWorker&) = delete;

  // Queues `owner`'s effects of `in`. Blocks while kMaxQueued are waiting. Rethrows an
  // earlier effect's error.
  void submit(void* owner, const isa::Instr& in);
  // Returns once every submitted effect has run; rethrows the first effect's error.
  void drain();
  // Whether an effect has failed (its error is rethrown by drain()).
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  static constexpr size_t kMaxQueued = 4096;
  static constexpr size_t kWakeAt = 16;  // effects queued before a sleeping worker is woken

 private:
  struct Job {
    void* owner;
    isa::Instr in;
  };
  void loop();

  Effect effect_;

  std::mutex m_;
  std::condition_variable work_cv_;  // the worker waits for jobs
  std::condition_variable done_cv_;  // submit waits for room, drain for the end
  std::vector<Job> queued_;          // guarded by m_
  bool running_ = false;             // the worker holds a batch (guarded by m_)
  bool sleeping_ = false;            // the worker waits and nobody has woken it (guarded by m_)
  bool stop_ = false;                // guarded by m_
  std::exception_ptr error_;         // the first effect's error (guarded by m_)
  std::atomic<bool> failed_{false};
  std::thread thread_;  // last: starts once the fields above exist
};

}  // namespace spyre::sim
