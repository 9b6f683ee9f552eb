#pragma once
// Device memory timing, behind an interface; implementations chosen by name (dram.impl):
// "lpddr5" (the default) and "fifo".
//
// "fifo" (FifoDram): one server for the whole chip, all cores, reads and writes.
//   - Requests that arrive in the same cycle are ordered by (core id, per-core sequence); then
//     served in arrival order.
//   - bw = cfg.dram_bytes_per_cycle(); service_mc = ceil(cost_bytes * 1000 / bw) in units of
//     1/1000 cycle (fractions carry over exactly from one request to the next).
//   - start_mc = max(free_mc, arrival * 1000); free_mc = start_mc + service_mc.
//   - The data lands at ceil(free_mc / 1000) + ns_to_cycles(dram_latency_ns).
//
// "lpddr5" (Lpddr5Dram, sim/dram/lpddr5_dram.cpp): dram.channels channels, each with
// bank_groups x banks_per_group banks and one open row per bank, and one controller. Internal
// time is in ps (lpddr5_spec.h); every parameter below is a dram.* key in params.def.
//   - A request is split into ceil(cost_bytes / word_bytes) transactions (words) starting at
//     the word holding `addr`; each word is placed by dram.address_map (channel, bank group,
//     bank, row, column) and goes to its channel's read or write queue (queue_depth entries
//     each); beyond that it waits upstream, in order (a queue-full stall).
//   - Each channel decides one transaction at a time, at T = max(now, CAS of the previous
//     one), in an end-of-cycle event (it sees every request of that cycle). Nothing is
//     scheduled while its queues are empty.
//   - Write drain: the channel serves reads until the write queue holds write_high entries
//     (or no read waits), then writes until it holds write_low (or none waits). While the
//     other queue is waiting, a phase, once started, lasts at least and (writes) at most
//     batch = write_high - write_low transactions.
//   - FR-FCFS: among the queue of the current mode, the transaction whose CAS can issue
//     first; ties go to the oldest. Its commands, with b its bank:
//       hit (row open):      CAS >= max(T, ACT_b + tRCD)
//       miss (bank closed):  ACT = max(T, bank precharged/refreshed, last ACT + tRRD,
//                                  4th-last ACT + tFAW); CAS >= ACT + tRCD
//       conflict:            PRE = max(T, ACT_b + tRAS, last RD + tRTP, last WR data end
//                                  + tWR); ACT = max(PRE + tRP, ...as miss); CAS >= ACT + tRCD
//     and always CAS >= last CAS to the bank group + tCCD_L * (word / 32 B),
//     data start = CAS + RL (read) or + WL (write) >= end of the previous data on the bus,
//     write data start >= last read data end + tRTW; read CAS >= last write data end + tWTR.
//     Data ends burst = word * 8 / channel_width_bits / data_rate after it starts.
//   - Row preparation (dram.row_prepare = 1): after each decision, while a precharged bank
//     holds a waiting transaction of the current mode whose ACT (>= T, tRRD, tFAW, refresh)
//     can issue no later than the chosen CAS, the oldest such gets its ACT then; its row is
//     open for the decisions that follow, and its first CAS counts as the row miss. Open rows
//     are not closed ahead (a conflict precharges when it is chosen); with dram.row_prepare =
//     2 they are too, where no waiting transaction of either queue hits them (PRE >= T and the
//     bank's tRAS, tRTP, tWR; ACT >= PRE + tRP), and the first CAS counts as the conflict.
//   - Refresh "ab": every tREFI a channel waits for every bank to be precharged (PRE at the
//     bank's earliest, + tRP), then all banks are busy tRFCab and closed. "pb": every
//     tREFI / banks, the next bank in turn is refreshed for tRFCpb. Refresh is applied when
//     the channel next decides, with the times it would have had.
//   - The request lands at the first core cycle at or after (latest data end of its words +
//     frontend_latency_ns).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/sim/callback.h"
#include "spyre/sim/env.h"

namespace spyre::sim {

struct DramRequest {
  int core = 0;
  uint64_t bytes = 0;       // payload
  uint64_t cost_bytes = 0;  // bytes the DRAM moves: payload rounded up to whole words
  uint64_t addr = 0;        // DRAM byte address of the first payload byte (lpddr5 maps it)
  bool write = false;
  Callback landed;  // runs at the cycle the data lands (write: is acknowledged)
};

// Where a DMA engine sends its requests: a DRAM model itself (plain unit tests), or under the
// kernel the engine's TLM-2.0 initiator (DmaPort, mem_tlm.h).
class MemPort {
 public:
  virtual ~MemPort() = default;
  virtual void submit(DramRequest req) = 0;  // arrival = env.sched.now()
};

class DramModel : public MemPort {
 public:
  virtual uint64_t read_bytes() const = 0;
  virtual uint64_t write_bytes() const = 0;
  virtual nlohmann::json stats() const = 0;  // {"read_bytes":..,"write_bytes":..,...}
  // Tracing: flushes the windowed bandwidth counters at the end of a run.
  virtual void finish_trace() {}
};

// Implementations by name: dram_impl_names() lists them ("fifo", "lpddr5"). Throws
// spyre::Error("dram.impl", ...) for an unknown name, and for invalid dram.* parameters.
std::unique_ptr<DramModel> make_dram(const std::string& impl, Env& env);
std::vector<std::string> dram_impl_names();

}  // namespace spyre::sim
