// The functional effects' worker thread (behaviour in data_worker.h).
#include "spyre/sim/data_worker.h"

namespace spyre::sim {

DataWorker::DataWorker(Effect effect) : effect_(effect), thread_([this] { loop(); }) {}

DataWorker::~DataWorker() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
    sleeping_ = false;
    queued_.clear();
  }
  work_cv_.notify_one();
  thread_.join();
}

void DataWorker::submit(void* owner, const isa::Instr& in) {
  if (failed()) drain();  // rethrows
  std::unique_lock<std::mutex> lock(m_);
  done_cv_.wait(lock, [this] { return queued_.size() < kMaxQueued || error_; });
  if (error_) std::rethrow_exception(error_);
  queued_.push_back(Job{owner, in});
  // A sleeping worker is woken for a matmul or a few effects, not for each one: a wake-up costs
  // about what a small effect does.
  const bool wake = sleeping_ && (in.op == isa::Opcode::PtMatmul || queued_.size() >= kWakeAt);
  if (wake) sleeping_ = false;
  lock.unlock();
  if (wake) work_cv_.notify_one();
}

void DataWorker::drain() {
  std::unique_lock<std::mutex> lock(m_);
  if (sleeping_ && !queued_.empty()) {
    sleeping_ = false;
    work_cv_.notify_one();
  }
  done_cv_.wait(lock, [this] { return (queued_.empty() && !running_) || error_; });
  if (error_) std::rethrow_exception(error_);
}

void DataWorker::loop() {
  std::vector<Job> batch;
  std::unique_lock<std::mutex> lock(m_);
  for (;;) {
    if (queued_.empty() && !stop_) {  // nothing to do: sleep until woken
      sleeping_ = true;
      work_cv_.wait(lock, [this] { return stop_ || !sleeping_; });
      sleeping_ = false;
    }
    if (stop_) return;
    batch.swap(queued_);  // queued_ takes batch's emptied buffer
    running_ = true;
    lock.unlock();
    done_cv_.notify_all();  // room in the queue again
    std::exception_ptr err;
    for (const Job& j : batch) {
      try {
        effect_(j.owner, j.in);
      } catch (...) {
        err = std::current_exception();
        break;
      }
    }
    batch.clear();
    lock.lock();
    running_ = false;
    if (err) {
      error_ = err;
      queued_.clear();
      failed_.store(true, std::memory_order_release);
    }
    if (queued_.empty() || error_) done_cv_.notify_all();
  }
}

}  // namespace spyre::sim
