// LX bank contention (model in lx.h).
#include "spyre/sim/lx.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "spyre/error.h"
#include "spyre/sim/report.h"

namespace spyre::sim {

namespace {
constexpr double kEps = 1e-9;
int64_t mod(int64_t a, int64_t m) { return ((a % m) + m) % m; }
}  // namespace

Lx::Lx(const arch::ArchConfig& cfg)
    : size_(cfg.lx_size_bytes),
      banks_(static_cast<int>(cfg.lx_banks)),
      chunk_(cfg.lx_bank_bytes_per_cycle) {
  if (cfg.lx_banks <= 0 || cfg.lx_banks > 4096)
    SPYRE_FAIL("spyre/lx/config", "lx.banks", "must be in [1, 4096]");
  if (chunk_ <= 0) SPYRE_FAIL("spyre/lx/config", "lx.bank_bytes_per_cycle", "must be positive");
  // A DMA piece's window lies up to burst / rate cycles in the past; keep bookings that long.
  const int64_t slow =
      std::max<int64_t>(1, std::min(cfg.dma_read_bytes_per_cycle, cfg.dma_write_bytes_per_cycle));
  horizon_ = static_cast<Cycle>(std::max<int64_t>(1, cfg.dma_burst_bytes) / slow + 2);
  bank_.resize(static_cast<size_t>(banks_));
}

void Lx::demand(const LxRegion& region, BankCounts& per_bank) const {
  if (region.rows <= 0 || region.row_bytes <= 0 || region.times <= 0) return;
  LxRegion r = region;
  if (r.rows > 1 && std::abs(r.row_stride) < chunk_) {  // rows packed closer than a chunk coalesce
    const int64_t span = (r.rows - 1) * std::abs(r.row_stride);
    if (r.row_stride < 0) r.base -= span;
    r.row_bytes += span;
    r.rows = 1;
    r.row_stride = 0;
  }
  const int64_t span = static_cast<int64_t>(banks_) * chunk_;
  // The counts depend on the residues alone while every row's address is non-negative (the
  // callers check bounds first; a negative one would round its chunk toward zero).
  const int64_t lowest = r.base + std::min<int64_t>(0, (r.rows - 1) * r.row_stride);
  if (lowest < 0 || static_cast<size_t>(banks_) > kMemoBanks) return count(r, per_bank);
  const MemoKey key{r.base % span, r.row_bytes, r.rows, mod(r.row_stride, span), r.times};
  const auto h = static_cast<uint64_t>(key.base) * 0x9e3779b97f4a7c15ull ^
                 static_cast<uint64_t>(key.row_bytes) * 0xc2b2ae3d27d4eb4full ^
                 static_cast<uint64_t>(key.rows) * 0x165667b19e3779f9ull ^
                 static_cast<uint64_t>(key.stride) * 0x27d4eb2f165667c5ull ^
                 static_cast<uint64_t>(key.times);
  const size_t slot = static_cast<size_t>((h ^ (h >> 29)) % kMemo);
  const size_t nb = static_cast<size_t>(banks_);
  if (memo_keys_.empty()) {
    memo_keys_.resize(kMemo);
    memo_counts_.assign(kMemo * nb, 0);
  }
  uint64_t* counts = &memo_counts_[slot * nb];
  if (!(memo_keys_[slot] == key)) {
    BankCounts fresh(nb, 0);
    count(r, fresh);
    std::copy(fresh.begin(), fresh.end(), counts);
    memo_keys_[slot] = key;
  }
  for (size_t k = 0; k < nb; ++k) per_bank[k] += counts[k];
}

void Lx::count(const LxRegion& r, BankCounts& per_bank) const {
  const int64_t nb = banks_, w = chunk_, span = nb * w;
  // Row r's chunk pattern depends on its address modulo banks*W: it repeats every P rows.
  const int64_t s = mod(r.row_stride, span);
  const int64_t period = span / std::gcd(s == 0 ? span : s, span);
  const int64_t walk = std::min(r.rows, period);
  const int64_t full = r.rows / walk, rest = r.rows % walk;
  BankCounts cnt(static_cast<size_t>(nb), 0), prefix;
  for (int64_t row = 0; row < walk; ++row) {
    if (row == rest && rest > 0) prefix = cnt;
    const int64_t a = r.base + row * r.row_stride;
    const int64_t first = a / w, last = (a + r.row_bytes - 1) / w;
    const int64_t n = last - first + 1;
    const uint64_t each = static_cast<uint64_t>(n / nb);
    if (each)
      for (auto& c : cnt) c += each;
    const int64_t b0 = mod(first, nb);
    for (int64_t i = 0; i < n % nb; ++i) ++cnt[static_cast<size_t>((b0 + i) % nb)];
  }
  const uint64_t times = static_cast<uint64_t>(r.times);
  for (int64_t k = 0; k < nb; ++k) {
    uint64_t c = cnt[static_cast<size_t>(k)] * static_cast<uint64_t>(full);
    if (rest > 0) c += prefix[static_cast<size_t>(k)];
    per_bank[static_cast<size_t>(k)] += c * times;
  }
}

double Lx::finish(const Bank& b, double start, double u, double rate) const {
  // Breakpoints of the earlier bookings' summed rate after `start`.
  boost::container::small_vector<double, 16> pts;
  for (const Booking& x : b.booked) {
    if (x.to <= start) continue;
    if (x.from > start) pts.push_back(x.from);
    pts.push_back(x.to);
  }
  std::sort(pts.begin(), pts.end());
  double t = start, left = u;
  for (double next : pts) {
    if (next <= t) continue;
    double used = 0;
    for (const Booking& x : b.booked)
      if (x.from <= t + kEps && x.to > t + kEps) used += x.rate;
    const double speed = std::min(rate, std::max(0.0, 1.0 - used));
    if (speed > 0 && left <= speed * (next - t) + kEps) return t + left / speed;
    left -= speed * (next - t);
    t = next;
  }
  return t + left / std::min(rate, 1.0);
}

Cycle Lx::book(Cycle start, Cycle dur, const BankCounts& per_bank, Cycle now) {
  const Cycle natural = start + dur;
  const double d = static_cast<double>(std::max<Cycle>(1, dur));
  Cycle end = natural;
  const Cycle keep = now > horizon_ ? now - horizon_ : 0;
  // Banks an access spreads over evenly often hold the same bookings: a bank whose bookings
  // and count equal the last bank finished's finishes at the same instant.
  const Bank* last = nullptr;
  uint64_t last_u = 0;
  double last_f = 0;
  for (int k = 0; k < banks_; ++k) {
    const uint64_t u = per_bank[static_cast<size_t>(k)];
    if (u == 0) continue;
    Bank& b = bank_[static_cast<size_t>(k)];
    if (!b.booked.empty())
      b.booked.erase(
          std::remove_if(b.booked.begin(), b.booked.end(),
                         [&](const Booking& x) { return x.to < static_cast<double>(keep); }),
          b.booked.end());
    const double s = static_cast<double>(start), ud = static_cast<double>(u);
    const bool same = last && last_u == u && last->booked.size() == b.booked.size() + 1 &&
                      std::equal(b.booked.begin(), b.booked.end(), last->booked.begin());
    const double f = same ? last_f : finish(b, s, ud, ud / d);
    b.booked.push_back({s, f, ud / std::max(f - s, kEps)});
    last = &b;
    last_u = u;
    last_f = f;
    b.accesses += u;
    const auto fk = static_cast<Cycle>(std::ceil(f - kEps));
    if (fk > natural) b.stall += fk - natural;
    end = std::max(end, fk);
  }
  return end;
}

Cycle Lx::access(Cycle start, Cycle dur, const LxRegions& regions, Cycle now) {
  BankCounts per_bank(static_cast<size_t>(banks_), 0);
  for (const LxRegion& r : regions) demand(r, per_bank);
  return book(start, dur, per_bank, now);
}

nlohmann::json Lx::stats() const {
  nlohmann::json out = nlohmann::json::array();
  for (const Bank& b : bank_)
    out.push_back({{"accesses", b.accesses}, {"conflict_stall_cycles", b.stall}});
  return out;
}

}  // namespace spyre::sim
