// "lpddr5" specs: parameters to picoseconds, the address map, cycle conversions.
#include "lpddr5_spec.h"

#include <cmath>
#include <sstream>

#include "spyre/arch/unit_timing.h"
#include "spyre/error.h"
#include "spyre/sim/report.h"

namespace spyre::sim::lpddr5 {
namespace {

Ps ns_to_ps(const char* key, double ns, bool allow_zero = true) {
  if (!(ns >= 0) || (!allow_zero && ns == 0))
    SPYRE_FAIL("spyre/dram/config", key, "must be positive");
  return static_cast<Ps>(std::llround(ns * 1000.0));
}

int positive_int(const char* key, int64_t v) {
  if (v <= 0 || v > (1 << 20))
    SPYRE_FAIL("spyre/dram/config", key, "must be in [1, 1048576], got " + std::to_string(v));
  return static_cast<int>(v);
}

int log2_exact(uint64_t n) {  // log2(n) for a power of two, else -1
  if (n == 0 || (n & (n - 1)) != 0) return -1;
  int s = 0;
  while ((uint64_t{1} << s) != n) ++s;
  return s;
}

}  // namespace

AddressMap::AddressMap(const std::string& scheme, int64_t word_bytes, int channels, int bank_groups,
                       int banks_per_group, int64_t columns, bool xor_banks, bool xor_channels)
    : xor_banks_(xor_banks), word_bytes_(word_bytes), banks_per_group_(banks_per_group) {
  if (xor_channels) {
    channel_bits_ = log2_exact(static_cast<uint64_t>(channels));
    if (channel_bits_ < 0)
      SPYRE_FAIL("spyre/dram/config", "dram.channel_xor",
                 "needs a power-of-two dram.channels, got " + std::to_string(channels));
  }
  std::vector<Field> msb_first;
  std::stringstream in(scheme);
  std::string name;
  bool seen[5] = {false, false, false, false, false};
  while (std::getline(in, name, '-')) {
    Field f;
    if (name == "ch")
      f = Field::Channel;
    else if (name == "bg")
      f = Field::BankGroup;
    else if (name == "ba")
      f = Field::Bank;
    else if (name == "ro")
      f = Field::Row;
    else if (name == "co")
      f = Field::Column;
    else
      SPYRE_FAIL("spyre/dram/config", "dram.address_map",
                 "unknown field '" + name + "' in '" + scheme +
                     "' (expected ro, ba, bg, co, ch joined by '-')");
    if (seen[static_cast<int>(f)])
      SPYRE_FAIL("spyre/dram/config", "dram.address_map",
                 "field '" + name + "' appears twice in '" + scheme + "'");
    seen[static_cast<int>(f)] = true;
    msb_first.push_back(f);
  }
  if (msb_first.size() != 5)
    SPYRE_FAIL("spyre/dram/config", "dram.address_map",
               "'" + scheme + "' must name ro, ba, bg, co and ch once each");
  word_shift_ = log2_exact(static_cast<uint64_t>(word_bytes));
  // The row takes every bit above the fields below it; fields above it still decode from what
  // is left (a scheme with ro not first wraps the row at 2^32 rows).
  for (size_t i = msb_first.size(); i-- > 0;) {
    const Field f = msb_first[i];
    const uint64_t radix = f == Field::Channel     ? static_cast<uint64_t>(channels)
                           : f == Field::BankGroup ? static_cast<uint64_t>(bank_groups)
                           : f == Field::Bank      ? static_cast<uint64_t>(banks_per_group)
                           : f == Field::Column    ? static_cast<uint64_t>(columns)
                           : i == 0                ? 0
                                                   : uint64_t{1} << 32;
    lsb_first_.push_back(digit(f, radix));
  }
  bg_ = digit(Field::BankGroup, static_cast<uint64_t>(bank_groups));
  ba_ = digit(Field::Bank, static_cast<uint64_t>(banks_per_group));
  auto steps = [](const Digit& d) {
    return d.radix != 0 && (d.field == Field::Channel || d.field == Field::Column);
  };
  while (steps_ < 2 && steps(lsb_first_[static_cast<size_t>(steps_)])) ++steps_;
}

void AddressMap::Walk::full() {
  loc_ = m_.decode(addr_);
  uint64_t x = addr_ / static_cast<uint64_t>(m_.word_bytes_);
  for (int d = 0; d < m_.steps_; ++d) {
    const Digit& g = m_.lsb_first_[static_cast<size_t>(d)];
    raw_[d] = g.rem(x);
    x = g.quo(x);
    if (g.field == Field::Channel) channel_hash_ = loc_.channel ^ static_cast<int>(raw_[d]);
  }
}

void AddressMap::Walk::set(int d) {
  const auto v = raw_[d];
  if (m_.lsb_first_[static_cast<size_t>(d)].field == Field::Channel)
    loc_.channel = static_cast<int>(v) ^ channel_hash_;
  else
    loc_.column = static_cast<int64_t>(v);
}

void AddressMap::Walk::next() {
  addr_ += static_cast<uint64_t>(m_.word_bytes_);
  for (int d = 0; d < m_.steps_; ++d) {
    if (++raw_[d] < m_.lsb_first_[static_cast<size_t>(d)].radix) {
      for (int e = 0; e <= d; ++e) set(e);
      return;
    }
    raw_[d] = 0;
  }
  full();  // a carry into a field the hashes read (or a scheme with no stepping fields)
}

AddressMap::Digit AddressMap::digit(Field f, uint64_t radix) {
  return Digit{f, radix, radix == 0 ? -1 : log2_exact(radix)};
}

Location AddressMap::decode(uint64_t addr) const {
  Location loc;
  uint64_t x = word_shift_ >= 0 ? addr >> word_shift_ : addr / static_cast<uint64_t>(word_bytes_);
  uint64_t value[5] = {0, 0, 0, 0, 0};
  for (const Digit& d : lsb_first_) {
    uint64_t v;
    if (d.radix == 0) {  // the row as the top digit
      v = x;
      x = 0;
    } else {
      v = d.rem(x);
      x = d.quo(x);
    }
    value[static_cast<int>(d.field)] = v;
  }
  loc.channel = static_cast<int>(value[static_cast<int>(Field::Channel)]);
  if (channel_bits_ > 0) {
    // Channel hashing: the row, bank group and bank, most significant first as one number,
    // folded by XOR into the channel's bits. The column is left out, so the words of one DRAM
    // row window (every channel's row once) keep their channels and row hits; runs in windows
    // a power of two apart, which would all meet the same few channels, meet different ones.
    uint64_t rest = 0;
    for (size_t i = lsb_first_.size(); i-- > 0;) {
      const Digit& d = lsb_first_[i];
      if (d.field == Field::Channel || d.field == Field::Column) continue;
      const uint64_t v = value[static_cast<int>(d.field)];
      rest = d.radix == 0 ? v : rest * d.radix + v;
    }
    loc.channel ^= static_cast<int>(arch::channel_xor_fold(rest, channel_bits_));
  }
  loc.column = static_cast<int64_t>(value[static_cast<int>(Field::Column)]);
  loc.row = static_cast<int64_t>(value[static_cast<int>(Field::Row)]);
  int bg = static_cast<int>(value[static_cast<int>(Field::BankGroup)]);
  int ba = static_cast<int>(value[static_cast<int>(Field::Bank)]);
  if (xor_banks_) {
    // Permutation-based interleaving (Zhang et al., MICRO 2000): rows that alias on one bank
    // under power-of-two strides are spread over the bank groups and banks.
    const auto r = static_cast<uint64_t>(loc.row);
    bg = static_cast<int>(bg_.rem(static_cast<uint64_t>(bg) ^ r));
    ba = static_cast<int>(ba_.rem(static_cast<uint64_t>(ba) ^ bg_.quo(r)));
  }
  loc.bank_group = bg;
  loc.bank = bg * banks_per_group_ + ba;
  return loc;
}

Spec make_spec(const arch::ArchConfig& cfg) {
  Spec s;
  s.channels = positive_int("dram.channels", cfg.dram_channels);
  s.bank_groups = positive_int("dram.bank_groups", cfg.dram_bank_groups);
  s.banks_per_group = positive_int("dram.banks_per_group", cfg.dram_banks_per_group);
  s.word_bytes = positive_int("dram.word_bytes", cfg.dram_word_bytes);
  const int width_bits = positive_int("dram.channel_width_bits", cfg.dram_channel_width_bits);
  if (cfg.dram_row_bytes < s.word_bytes || cfg.dram_row_bytes % s.word_bytes != 0)
    SPYRE_FAIL("spyre/dram/config", "dram.row_bytes",
               "must be a positive multiple of dram.word_bytes");
  s.columns = cfg.dram_row_bytes / s.word_bytes;
  if (!(cfg.dram_data_rate_mtps > 0))
    SPYRE_FAIL("spyre/dram/config", "dram.data_rate_mtps", "must be positive");
  // One word = word_bytes * 8 / width beats at data_rate MT/s.
  const double beats = static_cast<double>(s.word_bytes) * 8.0 / width_bits;
  s.burst = static_cast<Ps>(std::llround(beats * 1e6 / cfg.dram_data_rate_mtps));
  if (s.burst <= 0)
    SPYRE_FAIL("spyre/dram/config", "dram.data_rate_mtps", "a word must take at least 1 ps");
  // tCCD_L is per BL16 burst; a word is beats/16 of them.
  s.ccd_l =
      static_cast<Ps>(std::llround(ns_to_ps("dram.tccd_l_ns", cfg.dram_tccd_l_ns) * beats / 16.0));
  s.rcd = ns_to_ps("dram.trcd_ns", cfg.dram_trcd_ns);
  s.rl = ns_to_ps("dram.rl_ns", cfg.dram_rl_ns);
  s.wl = ns_to_ps("dram.wl_ns", cfg.dram_wl_ns);
  s.rp = ns_to_ps("dram.trp_ns", cfg.dram_trp_ns);
  s.ras = ns_to_ps("dram.tras_ns", cfg.dram_tras_ns);
  s.rrd = ns_to_ps("dram.trrd_ns", cfg.dram_trrd_ns);
  s.faw = ns_to_ps("dram.tfaw_ns", cfg.dram_tfaw_ns);
  s.wtr = ns_to_ps("dram.twtr_ns", cfg.dram_twtr_ns);
  s.rtw = ns_to_ps("dram.trtw_ns", cfg.dram_trtw_ns);
  s.wr = ns_to_ps("dram.twr_ns", cfg.dram_twr_ns);
  s.rtp = ns_to_ps("dram.trtp_ns", cfg.dram_trtp_ns);
  if (cfg.dram_refresh == "ab")
    s.refresh = Refresh::AllBank;
  else if (cfg.dram_refresh == "pb")
    s.refresh = Refresh::PerBank;
  else if (cfg.dram_refresh == "off")
    s.refresh = Refresh::Off;
  else
    SPYRE_FAIL("spyre/dram/config", "dram.refresh",
               "unknown refresh mode '" + cfg.dram_refresh + "' (known: ab, pb, off)");
  s.refi = ns_to_ps("dram.trefi_ns", cfg.dram_trefi_ns, false);
  s.rfc_ab = ns_to_ps("dram.trfcab_ns", cfg.dram_trfcab_ns);
  s.rfc_pb = ns_to_ps("dram.trfcpb_ns", cfg.dram_trfcpb_ns);
  if (s.refresh == Refresh::PerBank && s.refi / s.banks() <= 0)
    SPYRE_FAIL("spyre/dram/config", "dram.trefi_ns",
               "too short for per-bank refresh of every bank");
  s.frontend = ns_to_ps("dram.frontend_latency_ns", cfg.dram_frontend_latency_ns);
  s.queue_depth = static_cast<size_t>(positive_int("dram.queue_depth", cfg.dram_queue_depth));
  if (cfg.dram_write_low < 0 || cfg.dram_write_low >= cfg.dram_write_high ||
      cfg.dram_write_high > cfg.dram_queue_depth)
    SPYRE_FAIL("spyre/dram/config", "dram.write_high",
               "need 0 <= dram.write_low < dram.write_high <= dram.queue_depth");
  s.write_high = static_cast<size_t>(cfg.dram_write_high);
  s.write_low = static_cast<size_t>(cfg.dram_write_low);
  if (cfg.dram_bank_xor != 0 && cfg.dram_bank_xor != 1)
    SPYRE_FAIL("spyre/dram/config", "dram.bank_xor", "must be 0 or 1");
  if (cfg.dram_channel_xor != 0 && cfg.dram_channel_xor != 1)
    SPYRE_FAIL("spyre/dram/config", "dram.channel_xor", "must be 0 or 1");
  if (cfg.dram_row_prepare < 0 || cfg.dram_row_prepare > 2)
    SPYRE_FAIL("spyre/dram/config", "dram.row_prepare", "must be 0, 1 or 2");
  s.row_prepare = static_cast<int>(cfg.dram_row_prepare);
  s.map =
      AddressMap(cfg.dram_address_map, s.word_bytes, s.channels, s.bank_groups, s.banks_per_group,
                 s.columns, cfg.dram_bank_xor == 1, cfg.dram_channel_xor == 1);
  s.clock_ghz = cfg.clock_ghz;
  s.peak_gbps =
      static_cast<double>(s.channels) * width_bits / 8.0 * cfg.dram_data_rate_mtps / 1000.0;
  return s;
}

}  // namespace spyre::sim::lpddr5
