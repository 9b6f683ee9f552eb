#pragma once
// Device memory timing, behind an interface so that a bank-level LPDDR5 model can replace the
// first one by name (make_dram("lpddr5", ...)).
//
// "fifo" (FifoDram): one server for the whole chip, all cores, reads and writes.
//   - Requests that arrive in the same cycle are ordered by (core id, per-core sequence); then
//     served in arrival order.
//   - bw = cfg.dram_bytes_per_cycle(); service_mc = ceil(cost_bytes * 1000 / bw) in units of
//     1/1000 cycle (fractions carry over exactly from one request to the next).
//   - start_mc = max(free_mc, arrival * 1000); free_mc = start_mc + service_mc.
//   - The data lands at ceil(free_mc / 1000) + ns_to_cycles(dram_latency_ns).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "spyre/sim/env.h"

namespace spyre::sim {

struct DramRequest {
  int core = 0;
  uint64_t bytes = 0;       // payload
  uint64_t cost_bytes = 0;  // bytes the DRAM moves: payload rounded up to whole words
  bool write = false;
  std::function<void()> landed;  // runs at the cycle the data lands (write: is acknowledged)
};

class DramModel {
 public:
  virtual ~DramModel() = default;
  virtual void submit(DramRequest req) = 0;  // arrival = env.sched.now()
  virtual uint64_t read_bytes() const = 0;
  virtual uint64_t write_bytes() const = 0;
  virtual nlohmann::json stats() const = 0;  // {"read_bytes":..,"write_bytes":..,...}
};

// Implementations by name: "fifo". Throws spyre::Error for an unknown name.
std::unique_ptr<DramModel> make_dram(const std::string& impl, Env& env);

}  // namespace spyre::sim
