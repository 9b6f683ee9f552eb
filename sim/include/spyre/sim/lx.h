#pragma once
// LX: a core's scratchpad. Capacity lx_size_bytes; the storage is allocated on first use, so
// timing-only runs and idle cores cost nothing. Bounds are checked by the callers against
// size_bytes() (see env.h check_range) before any access.
//
// Banks (at instruction granularity, no per-cycle simulation): the LX has lx.banks banks;
// W = lx.bank_bytes_per_cycle; the chunk [c*W, (c+1)*W) lives in bank c mod banks. A bank
// serves one access (one chunk, or part of one) per cycle. Every unit (DMA pieces, PT, SFP,
// ring send/receive) books its accesses: `demand` counts, per bank, the chunks an access
// pattern touches (each row of a region counts the chunks it overlaps, times `times`; rows
// closer than a chunk coalesce into their hull); `book`
// spreads an access set evenly over its natural window [start, start + dur):
//   per bank k with u_k accesses, natural rate r_k = u_k / dur; earlier bookings have priority:
//   at each instant the booking gets min(r_k, 1 - sum of the rates booked before it that are
//   active then); it finishes bank k when it has had u_k; f_k = that instant.
//   The booking is stored as the average rate u_k / (f_k - start) over [start, f_k).
//   book() returns F = max(start + dur, ceil(max_k f_k)); F - (start + dur) is the conflict
//   stall (self-conflicts included: u_k > dur means one bank serialises the access).
// Without contention and with u_k <= dur everywhere, F = start + dur: the closed forms of the
// units are unchanged.
// Stats per bank: accesses (chunks), conflict_stall_cycles (F_k - (start + dur) when positive,
// F_k = ceil(f_k)).
#include <cstdint>
#include <vector>

#include <boost/container/small_vector.hpp>
#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/sim/scheduler.h"

namespace spyre::sim {

// `rows` rows of `row_bytes` bytes, row r at base + r * row_stride, each accessed `times` times.
struct LxRegion {
  int64_t base = 0, row_bytes = 0, rows = 1, row_stride = 0, times = 1;
};
// An access's regions and per-bank counts, inline up to the common sizes (a PT or SFP
// instruction has at most 4 operands; lx.banks is 16 by default): one LX access per DMA piece
// and per instruction, so the hot path allocates nothing.
using LxRegions = boost::container::small_vector<LxRegion, 4>;
using BankCounts = boost::container::small_vector<uint64_t, 64>;

// How a unit reaches an LX: the Lx itself (plain unit tests), or under the kernel a TLM-2.0
// initiator bound to the LX module's target socket (LxInitiator, lx_tlm.h).
class LxPort {
 public:
  virtual ~LxPort() = default;
  // Books the accesses of `regions` over [start, start + dur): Lx::access; returns F.
  virtual Cycle access(Cycle start, Cycle dur, const LxRegions& regions, Cycle now) = 0;
  virtual uint8_t* data() = 0;  // the LX bytes (functional copies)
};

class Lx : public LxPort {
 public:
  // Throws spyre::Error when lx.banks or lx.bank_bytes_per_cycle is not positive.
  explicit Lx(const arch::ArchConfig& cfg);
  int64_t size_bytes() const { return size_; }
  uint8_t* data() override {
    if (mem_.empty()) mem_.assign(static_cast<size_t>(size_), 0);
    return mem_.data();
  }
  int banks() const { return banks_; }

  // Adds the chunks `r` touches to per_bank (size banks()).
  void demand(const LxRegion& r, BankCounts& per_bank) const;
  // Books `per_bank` accesses over [start, start + dur); returns F (see above). `now` is the
  // current cycle (bookings that ended well before it are forgotten).
  Cycle book(Cycle start, Cycle dur, const BankCounts& per_bank, Cycle now);
  // demand() of every region, then book().
  Cycle access(Cycle start, Cycle dur, const LxRegions& regions, Cycle now) override;

  nlohmann::json stats() const;  // [{"accesses":..,"conflict_stall_cycles":..}] per bank

 private:
  struct Booking {
    double from, to, rate;
    bool operator==(const Booking& o) const {
      return from == o.from && to == o.to && rate == o.rate;
    }
  };
  struct Bank {
    std::vector<Booking> booked;
    uint64_t accesses = 0, stall = 0;
  };
  double finish(const Bank& b, double start, double u, double rate) const;
  // demand() of one region after coalescing, computed without the memo.
  void count(const LxRegion& r, BankCounts& per_bank) const;

  // A region's chunk counts depend only on its base and row stride modulo banks x chunk, its
  // row bytes, rows and times: the PT and SFP instructions of a loop repeat them with other
  // bases. demand() keeps the latest counts of kMemo region shapes (lx.banks <= kMemoBanks).
  static constexpr size_t kMemo = 256, kMemoBanks = 64;
  struct MemoKey {
    int64_t base = -1, row_bytes = 0, rows = 0, stride = 0, times = 0;
    bool operator==(const MemoKey& o) const {
      return base == o.base && row_bytes == o.row_bytes && rows == o.rows && stride == o.stride &&
             times == o.times;
    }
  };
  mutable std::vector<MemoKey> memo_keys_;
  mutable std::vector<uint64_t> memo_counts_;  // kMemo x banks

  int64_t size_;
  int banks_;
  int64_t chunk_;
  Cycle horizon_;
  std::vector<uint8_t> mem_;
  std::vector<Bank> bank_;
};

}  // namespace spyre::sim
