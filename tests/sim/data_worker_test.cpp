// The functional effects' worker thread (data_worker.h): order, back-pressure, errors, and a
// run that stops with effects queued.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "spyre/error.h"
#include "spyre/sim/data_worker.h"

namespace spyre::sim {
namespace {

// Effects that append their instruction's `kernel` to the owner's log; kernel 666 throws, and
// kernel 777 waits until the gate opens (so a test knows what the worker holds meanwhile).
std::atomic<bool> g_gate_open{true}, g_held{false};
void log_effect(void* owner, const isa::Instr& in) {
  if (in.kernel == 666) throw Error("effect", "kernel 666 fails");
  if (in.kernel == 777) g_held = true;
  while (in.kernel == 777 && !g_gate_open.load())
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  static_cast<std::vector<int>*>(owner)->push_back(in.kernel);
}

isa::Instr numbered(int k, isa::Opcode op = isa::Opcode::SfpUnary) {
  isa::Instr in;
  in.op = op;
  in.kernel = static_cast<uint16_t>(k);
  return in;
}

TEST(DataWorker, RunsEffectsInSubmitOrderAndDrainWaitsForAll) {
  std::vector<int> log;
  DataWorker w(&log_effect);
  std::vector<int> want;
  // More than the queue holds (back-pressure), matmuls among them (they wake the worker).
  for (int k = 0; k < static_cast<int>(DataWorker::kMaxQueued) * 3 + 5; ++k) {
    w.submit(&log, numbered(k % 600, k % 7 == 0 ? isa::Opcode::PtMatmul : isa::Opcode::SfpUnary));
    want.push_back(k % 600);
  }
  w.drain();
  EXPECT_EQ(log, want);
  // A few effects, fewer than wake a sleeping worker: drain wakes it.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  for (int k = 0; k < 3; ++k) w.submit(&log, numbered(1000 + k));
  w.drain();
  ASSERT_EQ(log.size(), want.size() + 3);
  EXPECT_EQ(log.back(), 1002);
}

TEST(DataWorker, AFailedEffectStopsTheOnesAfterItAndIsRethrown) {
  std::vector<int> log;
  DataWorker w(&log_effect);
  g_gate_open = false;  // the worker holds 777 until all three are submitted
  w.submit(&log, numbered(777));
  w.submit(&log, numbered(666));
  w.submit(&log, numbered(2));
  g_gate_open = true;
  try {
    w.drain();
    FAIL() << "drain should rethrow the effect's error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 666 fails"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(w.failed());
  EXPECT_EQ(log, std::vector<int>{777});  // 2 came after the failure: never run
  EXPECT_THROW(w.submit(&log, numbered(3)), Error);
  EXPECT_THROW(w.drain(), Error);
  EXPECT_EQ(log, std::vector<int>{777});
}

TEST(DataWorker, StopsWithEffectsStillQueued) {
  std::vector<int> log;
  g_gate_open = false;  // the worker holds the first effect while the run stops
  g_held = false;
  std::thread opener;
  {
    DataWorker w(&log_effect);
    w.submit(&log, numbered(777, isa::Opcode::PtMatmul));  // a matmul: wakes the worker
    while (!g_held) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    for (int k = 1; k < 100; ++k) w.submit(&log, numbered(k));
    opener = std::thread([] {  // after the destructor below has dropped the queue
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      g_gate_open = true;
    });
  }  // the destructor drops what is queued, lets the running effect end, and joins
  opener.join();
  const std::vector<int> seen = log;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(log, seen);  // nothing ran after the destructor returned
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.front(), 777);
  EXPECT_EQ(log, std::vector<int>{777}) << "the queued effects should have been dropped";
}

}  // namespace
}  // namespace spyre::sim
