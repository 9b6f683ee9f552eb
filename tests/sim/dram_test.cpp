// The "lpddr5" DRAM model: exact cycles of single transactions (the arithmetic in each
// comment, in ps; a core cycle at 1.5 GHz is 666.67 ps, and data lands at the first cycle at
// or after data end + frontend 20 ns), and the calibration against IBM's measured bandwidth.
//
// Defaults used below (params.def): tRCD 18.75 ns, RL 25, WL 13.75, tRP 18.75, tRAS 42.5,
// tRTP 5, tRRD 5, tWTR 12.5, tRTW 2.5, a 128 B word on a x16 channel at 6400 MT/s = 10 ns,
// tCCD_L 5 ns per BL16 = 20 ns per word to one bank group, tREFI 3906 ns, tRFCab 280 ns.
// Address map ro-ba-bg-co-ch with dram.bank_xor: channel 0, bank group g, bank b, row 0,
// column k is at 128 * (16 k + 256 g + 1024 b); row r adds 4096 * 128 * r (and XORs g with r).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../../sim/dram/lpddr5_spec.h"
#include "spyre/error.h"
#include "spyre/isa/format.h"
#include "spyre/sim/dram.h"
#include "spyre/sim/simulate.h"

namespace spyre::sim {
namespace {

constexpr uint64_t kRow = 4096 * 128, kBankGroup = 256 * 128, kBank = 1024 * 128, kCol = 16 * 128;

// Drives one DramModel on a bare EventQueue and records the cycle each request lands.
struct Harness {
  arch::ArchConfig cfg;
  isa::Program program;
  EventQueue q;
  std::vector<uint64_t> landed;
  // The front end is pinned at 20 ns, the clock at 1.5 GHz, the controller to activating only
  // precharged banks ahead and the channel to the plain field, so the arithmetic below stays
  // independent of their settings (a test of another mode sets it).
  Harness() {
    cfg.clock_ghz = 1.5;
    cfg.dram_impl = "lpddr5";
    cfg.dram_frontend_latency_ns = 20.0;
    cfg.dram_row_prepare = 1;
    cfg.dram_channel_xor = 0;
  }
  // Each request: {cycle, write, addr}; returns the landing cycles in request order.
  struct Req {
    uint64_t cycle;
    bool write;
    uint64_t addr;
  };
  nlohmann::json stats;
  std::vector<uint64_t> run(const std::vector<Req>& reqs) {
    Env env{cfg, program, q};
    auto dram = make_dram("lpddr5", env);
    landed.assign(reqs.size(), 0);
    for (size_t i = 0; i < reqs.size(); ++i) {
      q.at(reqs[i].cycle, [&, i] {
        DramRequest r;
        r.core = 0;
        r.bytes = r.cost_bytes = 128;
        r.addr = reqs[i].addr;
        r.write = reqs[i].write;
        r.landed = [&, i] { landed[i] = q.now(); };
        dram->submit(std::move(r));
      });
    }
    q.run_all();
    stats = dram->stats();
    return landed;
  }
};

TEST(Lpddr5AddressMap, RoBaBgCoChPlacesConsecutiveWordsOnConsecutiveChannels) {
  lpddr5::AddressMap m("ro-ba-bg-co-ch", 128, 16, 4, 4, 16);
  auto l = m.decode(3 * 128 + 5 * kCol + 2 * kBankGroup + 1 * kBank + 7 * kRow + 17);
  EXPECT_EQ(l.channel, 3);
  EXPECT_EQ(l.column, 5);
  EXPECT_EQ(l.bank_group, 2);
  EXPECT_EQ(l.bank, 2 * 4 + 1);
  EXPECT_EQ(l.row, 7);
  // With the XOR: bank group 2 ^ (7 % 4) = 1, bank 1 ^ (7 / 4 % 4) = 0.
  lpddr5::AddressMap x("ro-ba-bg-co-ch", 128, 16, 4, 4, 16, true);
  auto lx = x.decode(3 * 128 + 5 * kCol + 2 * kBankGroup + 1 * kBank + 7 * kRow + 17);
  EXPECT_EQ(lx.bank_group, 1);
  EXPECT_EQ(lx.bank, 1 * 4 + 0);
  EXPECT_THROW(lpddr5::AddressMap("ro-ba-bg-co", 128, 16, 4, 4, 16), Error);
  EXPECT_THROW(lpddr5::AddressMap("ro-ba-bg-co-ch-ch", 128, 16, 4, 4, 16), Error);
}

// dram.channel_xor: the channel XORed with the fields above the column, folded to its 4 bits.
// One DRAM row window (32 KiB: every column of every channel) keeps the plain map's column,
// bank and row and meets each channel once per column; windows 32 KiB apart, all on channel 0
// under the plain map, land on 16 different channels.
TEST(Lpddr5AddressMap, ChannelXorSpreadsWindowsAndKeepsEachWindowsRowHits) {
  lpddr5::AddressMap plain("ro-ba-bg-co-ch", 128, 16, 4, 4, 16, true);
  lpddr5::AddressMap hashed("ro-ba-bg-co-ch", 128, 16, 4, 4, 16, true, true);
  const uint64_t window = 16 * kCol;
  for (uint64_t w : {uint64_t{0}, uint64_t{5}, uint64_t{1234567}}) {
    for (uint64_t co = 0; co < 16; ++co) {
      std::vector<int> seen(16, 0);
      for (uint64_t ch = 0; ch < 16; ++ch) {
        const uint64_t a = w * window + co * kCol + ch * 128;
        const auto p = plain.decode(a), h = hashed.decode(a);
        EXPECT_EQ(h.column, p.column);
        EXPECT_EQ(h.bank, p.bank);
        EXPECT_EQ(h.row, p.row);
        ++seen[static_cast<size_t>(h.channel)];
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 16) << "window " << w << " column " << co;
    }
  }
  // Windows k = 0..15: the fold of k is k itself.
  for (uint64_t k = 0; k < 16; ++k) {
    EXPECT_EQ(plain.decode(k * window).channel, 0);
    EXPECT_EQ(hashed.decode(k * window).channel, static_cast<int>(k));
  }
  // Window 0x21 (row 2, bank 0, bank group 1): the fold of 0x21 is 0x2 ^ 0x1 = 3.
  EXPECT_EQ(hashed.decode(0x21 * window + 5 * 128).channel, 5 ^ 3);
  EXPECT_THROW(lpddr5::AddressMap("ro-ba-bg-co-ch", 128, 12, 4, 4, 16, false, true), Error);
}

// The decode takes power-of-two radices by shift and mask and others by division: both agree
// with the mixed-radix arithmetic written out, over many addresses, XOR included.
TEST(Lpddr5AddressMap, PowerOfTwoAndOtherRadicesDecodeAsTheMixedRadixArithmetic) {
  struct Shape {
    int64_t word;
    int ch, bg, ba;
    int64_t co;
  };
  for (const Shape& s : {Shape{128, 16, 4, 4, 16}, Shape{96, 12, 3, 3, 24}, Shape{64, 8, 4, 2, 10}})
    for (bool xr : {false, true}) {
      lpddr5::AddressMap m("ro-ba-bg-co-ch", s.word, s.ch, s.bg, s.ba, s.co, xr);
      lpddr5::AddressMap r("ba-ro-bg-co-ch", s.word, s.ch, s.bg, s.ba, s.co, xr);
      uint64_t addr = 12345;
      for (int n = 0; n < 2000; ++n) {
        addr = addr * 6364136223846793005ull + 1442695040888963407ull;
        // Small addresses half the time, all 64 bits the other half: then what is left above
        // the bank group exceeds 2^32, so "ba-ro-..." wraps its row and decodes a bank above it.
        const uint64_t a = n % 2 == 0 ? addr >> 20 : addr;
        uint64_t x = a / static_cast<uint64_t>(s.word);
        const auto take = [&x](uint64_t k) {
          const uint64_t v = x % k;
          x /= k;
          return v;
        };
        const uint64_t ch = take(s.ch), co = take(s.co), bg = take(s.bg);
        const uint64_t above_bg = x, ba = take(s.ba), rest = x;
        const auto xor_bank = [&](uint64_t row, uint64_t& g, uint64_t& b) {
          g = xr ? (g ^ row) % s.bg : g;
          b = xr ? (b ^ (row / s.bg)) % s.ba : b;
        };
        uint64_t g = bg, b = ba;
        xor_bank(rest, g, b);
        const lpddr5::Location l = m.decode(a);
        ASSERT_EQ(l.channel, static_cast<int>(ch));
        ASSERT_EQ(l.column, static_cast<int64_t>(co));
        ASSERT_EQ(l.row, static_cast<int64_t>(rest));
        ASSERT_EQ(l.bank_group, static_cast<int>(g));
        ASSERT_EQ(l.bank, static_cast<int>(g * s.ba + b));
        // "ba-ro-...": the row is a 2^32 digit below the bank.
        x = above_bg;
        const uint64_t row = take(uint64_t{1} << 32), bank_top = take(s.ba);
        uint64_t g2 = bg, b2 = bank_top;
        xor_bank(row, g2, b2);
        const lpddr5::Location l2 = r.decode(a);
        ASSERT_EQ(l2.row, static_cast<int64_t>(row));
        ASSERT_EQ(l2.bank, static_cast<int>(g2 * s.ba + b2));
      }
    }
}

// A request's words are walked (AddressMap::Walk: increments while only the channel and column
// step, a full decode on a carry past them): every word lands where decode puts it, for schemes
// whose lowest fields step (channel then column, column then channel), one whose lowest field
// is a bank (every step a full decode), non-power-of-two radices, and both hashes. A walk that
// kept a stale bank, row or channel hash across a carry fails here.
TEST(Lpddr5AddressMap, WalkingConsecutiveWordsLandsWhereDecodeDoes) {
  struct Shape {
    int64_t word;
    int ch, bg, ba;
    int64_t co;
  };
  int checked = 0;
  for (const Shape& s : {Shape{128, 16, 4, 4, 16}, Shape{96, 12, 3, 3, 24}, Shape{64, 8, 4, 2, 10}})
    for (const char* scheme : {"ro-ba-bg-co-ch", "ro-ba-bg-ch-co", "ro-co-ch-bg-ba"})
      for (int hash = 0; hash < 4; ++hash) {
        const bool xor_channels = (hash & 2) != 0;
        if (xor_channels && (s.ch & (s.ch - 1)) != 0) continue;  // needs a power of two
        const lpddr5::AddressMap m(scheme, s.word, s.ch, s.bg, s.ba, s.co, (hash & 1) != 0,
                                   xor_channels);
        for (uint64_t start : {uint64_t{0}, uint64_t{5} * static_cast<uint64_t>(s.word),
                               uint64_t{987654321} / static_cast<uint64_t>(s.word) *
                                   static_cast<uint64_t>(s.word)}) {
          lpddr5::AddressMap::Walk w(m, start);
          // Long enough to carry through the channel and column into the bank and row fields.
          const int words = 3 * s.ch * static_cast<int>(s.co) * s.bg + 7;
          for (int i = 0; i < words; ++i) {
            if (i > 0) w.next();
            const lpddr5::Location d =
                m.decode(start + static_cast<uint64_t>(i) * static_cast<uint64_t>(s.word));
            const lpddr5::Location& l = w.loc();
            ASSERT_EQ(l.channel, d.channel) << scheme << " word " << i;
            ASSERT_EQ(l.column, d.column) << scheme << " word " << i;
            ASSERT_EQ(l.row, d.row) << scheme << " word " << i;
            ASSERT_EQ(l.bank_group, d.bank_group) << scheme << " word " << i;
            ASSERT_EQ(l.bank, d.bank) << scheme << " word " << i;
            ++checked;
          }
        }
      }
  EXPECT_GT(checked, 100000);
}

// The channel decision visits only banks holding a candidate and remembers each bank's oldest
// hit and other (76d81f6); the old code scanned every bank's queue at every decision. Traffic
// that exercises what could make that differ -- 128 banks per channel (two mask words), per-bank
// refresh, small queues with back-pressure, reads and writes mixed, row hits, misses and
// conflicts -- lands at the cycles the old scan gave. The golden values are this test's
// results built at ad584d8 (the scan over every bank; its tests/sim/dram_test.cpp replaced by
// this one, `spyre_sim_tests --gtest_filter=Lpddr5Dram.ManyBanks*` printing them), and the
// same here.
TEST(Lpddr5Dram, ManyBanksPerBankRefreshAndMixedTrafficLandAsTheFullScanDid) {
  Harness h;
  h.cfg.dram_bank_groups = 8;
  h.cfg.dram_banks_per_group = 16;
  h.cfg.dram_refresh = "pb";
  h.cfg.dram_queue_depth = 16;
  h.cfg.dram_write_high = 12;
  h.cfg.dram_write_low = 8;
  h.cfg.dram_row_prepare = 0;  // the policy of ad584d8
  std::vector<Harness::Req> reqs;
  uint64_t x = 20261206;
  auto next = [&x] {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x >> 33;
  };
  uint64_t cycle = 0, stream = 0;
  for (int i = 0; i < 6000; ++i) {
    cycle += next() % 4;
    const uint64_t kind = next() % 4;
    uint64_t addr;
    if (kind < 2) {  // a sequential stream: row hits
      stream += 128;
      addr = stream;
    } else {  // anywhere in 64 rows of every bank: misses and conflicts
      addr = (next() % (64 * 8 * kRow)) / 128 * 128;
    }
    reqs.push_back({cycle, next() % 3 == 0, addr});
  }
  const std::vector<uint64_t> landed = h.run(reqs);
  uint64_t sum = 0, mix = 0;
  for (size_t i = 0; i < landed.size(); ++i) {
    sum += landed[i];
    mix = (mix ^ landed[i]) * 1099511628211ull;
  }
  EXPECT_EQ(sum, 34374063u);
  EXPECT_EQ(mix, 13538171230223030987u);
  EXPECT_EQ(h.stats["row_hits"].get<uint64_t>(), 2803u);
  EXPECT_EQ(h.stats["row_conflicts"].get<uint64_t>(), 596u);
  EXPECT_EQ(h.stats["row_misses"].get<uint64_t>(), 2601u);
  EXPECT_EQ(h.stats["refreshes"].get<uint64_t>(), 4005u);
}

TEST(Lpddr5Dram, UnknownImplListsTheKnownOnes) {
  arch::ArchConfig cfg;
  isa::Program p;
  EventQueue q;
  Env env{cfg, p, q};
  try {
    make_dram("hbm9", env);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("known: fifo, lpddr5"), std::string::npos) << e.what();
  }
}

TEST(Lpddr5Dram, RowMissToClosedBankTakesRcdPlusRlPlusBurst) {
  // ACT 0, CAS 18750, data 43750..53750, + 20000 = 73750 ps = cycle 110.6 -> 111.
  Harness h;
  EXPECT_EQ(h.run({{0, false, 0}}), (std::vector<uint64_t>{111}));
  EXPECT_EQ(h.stats["row_misses"].get<uint64_t>(), 1u);
}

TEST(Lpddr5Dram, RowHitWaitsOnlyForTheBankGroupsCcdL) {
  // Both arrive at cycle 0. The first: ACT 0, CAS 18750, lands 111. The channel decides the
  // next at its CAS, cycle ceil(28.1) = 29 (19333 ps): the row is open (hit), CAS >=
  // max(19333, bus 53750 - RL = 28750, same bank group 18750 + tCCD_L 20000 = 38750) =
  // 38750, data 63750..73750, + 20000 = 93750 ps = cycle 140.6 -> 141.
  Harness h;
  EXPECT_EQ(h.run({{0, false, 0}, {0, false, kCol}}), (std::vector<uint64_t>{111, 141}));
  EXPECT_EQ(h.stats["row_hits"].get<uint64_t>(), 1u);
  EXPECT_EQ(h.stats["channels"][0]["banks"][0]["row_hits"].get<uint64_t>(), 1u);
}

TEST(Lpddr5Dram, BankConflictPaysRasThenRpThenRcd) {
  // Row 0 then row 1 of the same bank (bank group 1 ^ 1 = 0 under the XOR). The first lands at 111
  // (ACT 0). The second, decided at 19333: PRE >= ACT + tRAS = 42500 (> CAS + tRTP 23750), ACT =
  // 42500 + tRP = 61250, CAS = 80000, data 105000..115000, + 20000 = 135000 ps = cycle 202.5 ->
  // 203.
  Harness h;
  EXPECT_EQ(h.run({{0, false, 0}, {0, false, kRow + kBankGroup}}),
            (std::vector<uint64_t>{111, 203}));
  EXPECT_EQ(h.stats["row_conflicts"].get<uint64_t>(), 1u);
}

TEST(Lpddr5Dram, AllBankRefreshDelaysARequest) {
  // Cycle 5859 = 3906000 ps = tREFI: the refresh starts then and holds every bank until
  // 4186000; ACT 4186000, CAS 4204750, data 4229750..4239750, + 20000 = 4259750 ps = cycle
  // 6389.6 -> 6390. Without refresh: 3906000 + 73750 = 3979750 ps = cycle 5969.6 -> 5970.
  Harness h;
  EXPECT_EQ(h.run({{5859, false, 0}}), (std::vector<uint64_t>{6390}));
  // Refresh is applied when a channel next decides: only channel 0 had work.
  EXPECT_EQ(h.stats["channels"][0]["refreshes"].get<uint64_t>(), 1u);
  Harness off;
  off.cfg.dram_refresh = "off";
  EXPECT_EQ(off.run({{5859, false, 0}}), (std::vector<uint64_t>{5970}));
}

TEST(Lpddr5Dram, ReadToWriteTurnaroundLeavesRtwOnTheBus) {
  // A read (bank group 0) and a write (bank group 1, closed), both at cycle 0. Reads first:
  // read data 43750..53750, lands 111. At 19333 the read queue is empty: write mode; ACT
  // 19333, CAS >= max(ACT + tRCD 38083, bus 53750 - WL = 40000, read end 53750 + tRTW 2500
  // - WL = 42500) = 42500; data 56250..66250, + 20000 = 86250 ps = cycle 129.4 -> 130
  // (without tRTW: 126).
  Harness h;
  EXPECT_EQ(h.run({{0, false, 0}, {0, true, kBankGroup}}), (std::vector<uint64_t>{111, 130}));
  EXPECT_EQ(h.stats["channels"][0]["read_to_write_turnarounds"].get<uint64_t>(), 1u);
}

TEST(Lpddr5Dram, WriteToReadTurnaroundWaitsWtr) {
  // A write at cycle 0 (only writes queued: write mode): ACT 0, CAS 18750, data
  // 32500..42500, lands 62500 ps = cycle 93.75 -> 94. A read (bank group 1) arrives at cycle 1;
  // decided at 19333: ACT 19333, CAS >= max(38083, write end 42500 + tWTR 12500 = 55000) =
  // 55000, data 80000..90000, + 20000 = 110000 ps = cycle 165.
  Harness h;
  EXPECT_EQ(h.run({{0, true, 0}, {1, false, kBankGroup}}), (std::vector<uint64_t>{94, 165}));
  EXPECT_EQ(h.stats["channels"][0]["write_to_read_turnarounds"].get<uint64_t>(), 1u);
}

TEST(Lpddr5Dram, AClosedBankIsActivatedWhileTheChosenCasWaits) {
  // Two reads at cycle 0 to closed banks of bank groups 0 and 1. The first: ACT 0, CAS 18750,
  // lands 111. dram.row_prepare: before that CAS the command bus activates the second bank at
  // last ACT + tRRD = 5000, so at the next decision (19333) it is a hit: CAS >= max(5000 +
  // tRCD = 23750, bus 53750 - RL = 28750) = 28750, data 53750..63750, + 20000 = 83750 ps =
  // cycle 125.6 -> 126. Without: ACT 19333, CAS 38083, data 63083..73083, lands 93083 ps =
  // cycle 139.6 -> 140. Either way the second counts as a row miss.
  Harness h;
  EXPECT_EQ(h.run({{0, false, 0}, {0, false, kBankGroup}}), (std::vector<uint64_t>{111, 126}));
  EXPECT_EQ(h.stats["row_misses"].get<uint64_t>(), 2u);
  EXPECT_EQ(h.stats["row_hits"].get<uint64_t>(), 0u);
  Harness off;
  off.cfg.dram_row_prepare = 0;
  EXPECT_EQ(off.run({{0, false, 0}, {0, false, kBankGroup}}), (std::vector<uint64_t>{111, 140}));
  EXPECT_EQ(off.stats["row_misses"].get<uint64_t>(), 2u);
}

TEST(Lpddr5Dram, AStreamOfRowHitsDoesNotStarveAnOlderMissToAnIdleBank) {
  // 64 reads of one row in each of bank groups 0-3 of channel 0 (after their four ACTs, hits
  // that can issue every 10 ns, one bank group after another) and, queued fifth, one read to
  // a closed bank (bank 1 of bank group 0). With dram.row_prepare its ACT issues between the
  // hits' CASes and, then a hit older than theirs, it lands among the first; without, each
  // younger hit can issue before its ACT + tRCD, so it lands last.
  std::vector<Harness::Req> traffic;
  for (uint64_t k = 0; k < 16; ++k)
    for (uint64_t g = 0; g < 4; ++g) {
      traffic.push_back({0, false, g * kBankGroup + k * kCol});
      if (k == 0 && g == 3) traffic.push_back({0, false, kBank});
    }
  const size_t miss = 4;
  auto last_other = [&](const std::vector<uint64_t>& landed) {
    uint64_t m = 0;
    for (size_t i = 0; i < landed.size(); ++i)
      if (i != miss) m = std::max(m, landed[i]);
    return m;
  };
  Harness h;
  const std::vector<uint64_t> on = h.run(traffic);
  EXPECT_LT(on[miss] + 200, last_other(on)) << on[miss] << " " << last_other(on);
  Harness off;
  off.cfg.dram_row_prepare = 0;
  const std::vector<uint64_t> late = off.run(traffic);
  EXPECT_GT(late[miss], last_other(late));
  // The same transactions, hits and misses either way.
  EXPECT_EQ(h.stats["row_misses"], off.stats["row_misses"]);
  EXPECT_EQ(h.stats["row_hits"], off.stats["row_hits"]);
}

TEST(Lpddr5Dram, RowPrepareTwoAlsoPrechargesAnOpenRowNoOneHits) {
  // A opens row 0 of bank group 1 (lands 111). At cycle 200 (133333 ps) B reads bank group 0
  // (closed) and C row 1 of bank group 1 (a conflict, no hit waits on row 0). B is chosen:
  // ACT 133333, CAS 152083, data 177083..187083, lands 207083 ps = cycle 310.6 -> 311.
  // dram.row_prepare = 2: before B's CAS the command bus precharges bank group 1 (PRE 133333,
  // tRAS long past) and activates row 1 at PRE + tRP = 152083 <= 152083; at the next decision
  // C is a hit: CAS >= max(152083 + tRCD = 170833, bus 187083 - RL = 162083) = 170833, data
  // 195833..205833, lands 225833 ps = cycle 338.7 -> 339, counted as the conflict it was.
  // Modes 1 and 0 leave the open row: decided at cycle 229 (152666 ps), PRE 152666, ACT
  // 171416, CAS 190166, data 215166..225166, lands 245166 ps = cycle 367.7 -> 368.
  // C at kRow: the XOR maps bank-group field g of row r to g ^ (r % 4), so field 0 of row 1
  // is bank group 1, A's bank.
  const std::vector<Harness::Req> reqs = {
      {0, false, kBankGroup}, {200, false, 0}, {200, false, kRow}};
  Harness two;
  two.cfg.dram_row_prepare = 2;
  EXPECT_EQ(two.run(reqs), (std::vector<uint64_t>{111, 311, 339}));
  EXPECT_EQ(two.stats["row_conflicts"].get<uint64_t>(), 1u);
  EXPECT_EQ(two.stats["row_misses"].get<uint64_t>(), 2u);
  for (int64_t mode : {0, 1}) {
    Harness h;
    h.cfg.dram_row_prepare = mode;
    EXPECT_EQ(h.run(reqs), (std::vector<uint64_t>{111, 311, 368})) << mode;
    EXPECT_EQ(h.stats["row_conflicts"].get<uint64_t>(), 1u);
  }
}

TEST(Lpddr5Dram, FawLimitsTheFifthActivate) {
  // tFAW raised to 100 ns so that it binds. Five reads to closed banks in bank groups
  // 0, 1, 2, 3, 0 (bank 1) at cycle 0; each is decided at the previous CAS (rounded up to a
  // cycle): ACTs at 0, 19333, 38667, 58000 (CAS = ACT + 18750, data CAS + 25000 .. + 10000).
  // The fifth, decided at 77333, must wait for the first ACT + tFAW = 100000: CAS 118750,
  // data 143750..153750, + 20000 = 173750 ps = cycle 260.6 -> 261 (without tFAW: ACT 77333,
  // lands at cycle 227).
  Harness h;
  h.cfg.dram_tfaw_ns = 100;
  h.cfg.dram_row_prepare = 0;  // one ACT per decision (the test above shows the other way)
  EXPECT_EQ(h.run({{0, false, 0},
                   {0, false, kBankGroup},
                   {0, false, 2 * kBankGroup},
                   {0, false, 3 * kBankGroup},
                   {0, false, kBank}}),
            (std::vector<uint64_t>{111, 140, 169, 198, 261}));
}

// Calibration, as tools/bench/dram does it: each of 32 cores moves 960 KiB in 30 dma
// instructions of 32 KiB (the first `loads` load, the rest store; dma_in and dma_out run at the
// same time), from and to its own 1 MiB-aligned regions (timing only). Effective bandwidth =
// bytes / device time.
double stream_gbps(int loads) {
  const int cores = 32, n = 30;
  const int64_t chunk = 32768, region = 1 << 20, wbase = cores * region;
  std::string text = ".spyre 1\n.cores 32\n.dram_bytes " + std::to_string(2 * wbase) + "\n";
  for (int c = 0; c < cores; ++c) {
    text += ".core " + std::to_string(c) + "\n";
    for (int i = 0; i < n; ++i) {
      const std::string lx = std::to_string((i % 32) * chunk);
      if (i < loads)
        text += "  dma.load dram=" + std::to_string(c * region + i * chunk) + " lx=" + lx +
                " bytes=32768\n";
      else
        text += "  dma.store lx=" + lx + " dram=" + std::to_string(wbase + c * region + i * chunk) +
                " bytes=32768\n";
    }
    text += "  halt\n";
  }
  arch::ArchConfig cfg;  // the built-in "spyre" defaults: lpddr5
  EXPECT_EQ(cfg.dram_impl, "lpddr5");
  DeviceMemory dram;
  SimOptions opts;
  opts.functional = false;
  SimResult r = simulate(isa::assemble(text), cfg, dram, opts);
  return static_cast<double>(r.dram_read_bytes + r.dram_write_bytes) /
         (static_cast<double>(r.cycles) / cfg.clock_ghz);
}

TEST(Lpddr5Calibration, StreamingReadsFrom32CoresReach150GBps) {
  const double gbps = stream_gbps(30);
  EXPECT_NEAR(gbps, 150.0, 150.0 * 0.03) << gbps;
}

TEST(Lpddr5Calibration, StreamingWritesFrom32CoresReach150GBpsWithin5Percent) {
  // Writes pay tWR on every row switch: 146.9 GB/s, -2.1 %.
  const double gbps = stream_gbps(0);
  EXPECT_NEAR(gbps, 150.0, 150.0 * 0.05) << gbps;
}

TEST(Lpddr5Calibration, BalancedReadWriteFrom32CoresReach105GBps) {
  const double gbps = stream_gbps(15);
  EXPECT_NEAR(gbps, 105.0, 105.0 * 0.05) << gbps;
}

}  // namespace
}  // namespace spyre::sim
