#pragma once
// The corelet's compute units as plain functions: closed-form latency, the LX byte ranges an
// instruction touches (for bounds checks), and the arithmetic (functional mode).
//
// PT (pt.mm), one corelet, output-stationary folds streamed back to back:
//   cycles = ceil(m / pt_rows) * ceil(n / pt_lanes) * k_eff + (pt_rows + pt_lanes - 2)
//   k_eff  = ceil(k * esize(dt) / 2): k for 16-bit inputs, ceil(k/2) for int8 (2x), 2k for f32.
// SFP (sfp.*), one corelet:
//   cycles = sfp_latency_cycles + ceil(rows * cols / lanes) * factor
//   lanes  = sfp_lanes_fp16 for 1- and 2-byte dt, sfp_lanes_fp32 for 4-byte, half that for
//            8-byte (sfp.cvt: the wider of sdt and ddt); factor = sfp_transcendental_factor for
//            Transcendental functions, else 1.
#include <cstdint>
#include <vector>

#include "spyre/arch/arch.h"
#include "spyre/sim/env.h"

namespace spyre::sim {

uint64_t pt_cycles(const arch::ArchConfig& cfg, const isa::Instr& in);
uint64_t sfp_cycles(const arch::ArchConfig& cfg, const isa::Instr& in);

// The LX byte ranges of a pt.mm / sfp.* instruction's operands (for bounds checks).
std::vector<ByteRange> pt_lx_ranges(const isa::Instr& in);
std::vector<ByteRange> sfp_lx_ranges(const isa::Instr& in);

// Executes a pt.mm / sfp.* instruction on `lx` (already bounds-checked).
void pt_execute(uint8_t* lx, const isa::Instr& in);
void sfp_execute(uint8_t* lx, const isa::Instr& in);

}  // namespace spyre::sim
