#pragma once
// Internal to sim/dram: the validated, immutable specs of the "lpddr5" model (every dram.*
// parameter of params.def converted to integer picoseconds and counts) and the address map.
// Core cycles and picoseconds convert by the chip's one rule, TimeBase (kernel.h). Tests may
// include it (tests/sim/dram_test.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "spyre/arch/arch.h"

namespace spyre::sim::lpddr5 {

using Ps = int64_t;  // picoseconds from the start of the run

enum class Field { Channel, BankGroup, Bank, Row, Column };
enum class Refresh { AllBank, PerBank, Off };

// Where a DRAM byte address lands. `column` counts transactions (words) within the row.
struct Location {
  int channel = 0, bank_group = 0, bank = 0;  // bank: index within the channel, bg * banks + b
  int64_t row = 0, column = 0;
};

// Mixed-radix decode of addr / word_bytes, fields taken from the least significant end of the
// scheme (the rightmost name) upwards; the row takes whatever is left when it is the most
// significant field, else it is a digit of 2^32 rows (it wraps).
// "ro-ba-bg-co-ch": consecutive words go to consecutive channels, then columns of one row.
class AddressMap {
 public:
  AddressMap() = default;
  // Throws spyre::Error("dram.address_map", ...) unless the scheme names ro, ba, bg, co and
  // ch exactly once each, separated by '-'.
  // xor_banks: bank group ^= row, bank ^= row / bank_groups (both modulo their counts).
  // xor_channels: channel ^= the row, bank group and bank (in the scheme's order, one number)
  // folded by XOR into the channel field's width; needs a power-of-two channel count.
  AddressMap(const std::string& scheme, int64_t word_bytes, int channels, int bank_groups,
             int banks_per_group, int64_t columns, bool xor_banks = false,
             bool xor_channels = false);
  Location decode(uint64_t addr) const;

  // Consecutive words from `addr`: loc() is decode(addr + i * word_bytes) after i calls of
  // next(). While only the scheme's lowest fields step, and they are the channel or the column
  // (neither feeds the bank or channel hashes), a step is an increment; a carry past them
  // decodes in full. A DRAM request's words are walked this way (the hot path).
  class Walk {
   public:
    Walk(const AddressMap& m, uint64_t addr) : m_(m), addr_(addr) { full(); }
    const Location& loc() const { return loc_; }
    void next();

   private:
    void full();
    void set(int d);
    const AddressMap& m_;
    uint64_t addr_;
    Location loc_;
    uint64_t raw_[2] = {0, 0};  // the two lowest digits' values before any hash
    int channel_hash_ = 0;      // what xor_channels XORed onto the channel
  };

 private:
  // One digit of the mixed radix, least significant first: its field and radix (0: the row
  // when it is the top digit, taking all that is left). A power-of-two radix decodes by shift
  // and mask (`shift` >= 0), the same values as % and / (the hot path: every DRAM word).
  struct Digit {
    Field field;
    uint64_t radix;
    int shift;
    uint64_t rem(uint64_t x) const { return shift >= 0 ? x & (radix - 1) : x % radix; }
    uint64_t quo(uint64_t x) const { return shift >= 0 ? x >> shift : x / radix; }
  };
  static Digit digit(Field f, uint64_t radix);
  std::vector<Digit> lsb_first_;
  Digit bg_{Field::BankGroup, 1, 0}, ba_{Field::Bank, 1, 0};  // the bank XOR's radices
  int word_shift_ = -1;  // log2(word_bytes) when a power of two
  bool xor_banks_ = false;
  int channel_bits_ = -1;  // xor_channels: log2(channels), else -1
  int64_t word_bytes_ = 128;
  int banks_per_group_ = 1;
  int steps_ = 0;  // the lowest digits (0-2) that are the channel or the column: Walk steps them
};

struct Spec {
  int channels = 16, bank_groups = 4, banks_per_group = 4;
  int banks() const { return bank_groups * banks_per_group; }
  int64_t word_bytes = 128;
  int64_t columns = 16;  // words per row
  AddressMap map;
  // Timing, ps. burst: data-bus time of one word; ccd_l: start-to-start spacing of two words
  // to one bank group (BG mode); rtw: data-bus gap from read data end to write data start;
  // wtr: write data end to the next read command.
  Ps burst = 10000, ccd_l = 20000, rcd = 18750, rl = 25000, wl = 13750, rp = 18750;
  Ps ras = 42500, rrd = 5000, faw = 20000, wtr = 12500, rtw = 2500, wr = 35000, rtp = 5000;
  Refresh refresh = Refresh::AllBank;
  Ps refi = 3906000, rfc_ab = 280000, rfc_pb = 140000;
  Ps frontend = 20000;
  size_t queue_depth = 64, write_high = 48, write_low = 40;
  int row_prepare = 1;  // dram.row_prepare
  double clock_ghz = 1.5;
  double peak_gbps = 204.8;
};

// Validates and converts; throws spyre::Error naming the parameter.
Spec make_spec(const arch::ArchConfig& cfg);

}  // namespace spyre::sim::lpddr5
