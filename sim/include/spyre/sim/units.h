#pragma once
// The corelet's compute units as plain functions: closed-form latency, the LX byte ranges an
// instruction touches (for bounds checks), and the arithmetic (functional mode).
//
// Latencies are the closed forms of spyre/arch/unit_timing.h (shared with the compiler's cost
// report), from ArchConfig:
//   PT (pt.mm): folds of the dataflow pt.dataflow (os/ws/is) on a pt.rows x pt.lanes array,
//     fill/drain paid once per run of pt.mm that follow each other on the array
//     (pt.fill_drain = overlap, arch::PtPipe, which core.cpp keeps per PT queue: os gives
//     ceil(m/R) * ceil(n/C) * k_eff + R + C - 2 alone) or per fold (per_fold, SCALE-Sim and
//     the "spyre" default: os folds*(k+R+C-2), ws folds*(m+2R+C-2), is folds*(n+2R+C-2));
//     k_eff by dtype.
//   SFP (sfp.*): latency + vectors * cycles-per-vector of the op class (simple,
//     transcendental, compare, convert), lanes by element size; reductions add a log-depth
//     lane tree once.
#include <cstdint>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "spyre/arch/arch.h"
#include "spyre/sim/env.h"

namespace spyre::sim {

// An SFP operand's base, row-stride and column-stride operand names (dst, a, b, c), and their
// compile-time operand slots (isa.h, SPYRE_OPERAND): read with Instr::operand, no name lookup.
struct SfpOperandNames {
  const char *base, *rs, *cs;
  isa::detail::OperandSlots base_slots, rs_slots, cs_slots;  // Instr::operand of each name
};
constexpr SfpOperandNames sfp_operand_names(const char* base, const char* rs, const char* cs) {
  return {base,
          rs,
          cs,
          isa::detail::operand_slots(base),
          isa::detail::operand_slots(rs),
          isa::detail::operand_slots(cs)};
}
inline constexpr SfpOperandNames kSfpOperands[] = {
    sfp_operand_names("dst", "dst_rs", "dst_cs"), sfp_operand_names("a", "a_rs", "a_cs"),
    sfp_operand_names("b", "b_rs", "b_cs"), sfp_operand_names("c", "c_rs", "c_cs")};

uint64_t sfp_cycles(const arch::ArchConfig& cfg, const isa::Instr& in);

// The LX byte ranges of a pt.mm / sfp.* instruction's operands (for bounds checks), inline:
// at most four operands, checked for every instruction.
using ByteRanges = boost::container::small_vector<ByteRange, 4>;
ByteRanges pt_lx_ranges(const isa::Instr& in);
ByteRanges sfp_lx_ranges(const isa::Instr& in);

// Executes a pt.mm / sfp.* instruction on `lx` (already bounds-checked).
void pt_execute(uint8_t* lx, const isa::Instr& in);
// The floating matmul's kernels this host runs, widest first ("avx512f", "avx2", "base"): the
// one pt_execute uses is the first. Tests select each in turn (every one gives the same bits);
// false when the host cannot run `name`.
std::vector<std::string> pt_matmul_kernels();
bool pt_select_matmul_kernel(const std::string& name);
void sfp_execute(uint8_t* lx, const isa::Instr& in);

}  // namespace spyre::sim
