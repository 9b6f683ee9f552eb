#pragma once
// Closed-form latencies of the corelet's compute units (PT array, SFP) and the DMA in-flight
// rule, shared by the simulator (sim/core/pt.cpp, sfp.cpp, sim/mem/dma.cpp) and the compiler's
// cost models so the two cannot drift.
// Every figure comes from ArchConfig (params.def); the formulas are stated here once and each
// has exact-cycle tests (tests/sim/pt_test.cpp, sfp_test.cpp).
//
// PT (pt.mm C[m,n] += A[m,k] x B[k,n] on one R x C array, R = pt.rows, C = pt.lanes):
//   k_eff by the input dtype's width (isa::dtype_bits):
//           16-bit (fp16, bf16):        k
//            8-bit (int8, fp8 e4m3):    ceil(k / pt.int8_rate)   (2 MACs per PE per cycle)
//            4-bit (int4):              ceil(k / pt.int4_rate)   (4 MACs per PE per cycle)
//           32- and 64-bit:             k * pt.fp32_passes * bits/32
//   The dataflow (pt.dataflow) maps the GEMM on the array as SCALE-Sim does:
//     os: rows <- m, columns <- n, streamed (temporal) T = k_eff, preload P = 0
//     ws: rows <- k_eff, columns <- n, T = m, P = R (weights shifted in row by row)
//     is: rows <- k_eff, columns <- m, T = n, P = R (inputs shifted in row by row)
//   folds = ceil(rows_dim / R) * ceil(cols_dim / C); skew/drain D = R + C - 2.
//   pt.fill_drain = per_fold (SCALE-Sim): every fold preloads, streams, drains:
//     cycles = folds * (P + T + D)
//     os: folds*(k+R+C-2), ws: folds*(m+2R+C-2), is: folds*(n+2R+C-2)
//   pt.fill_drain = per_fold is the "spyre" default (params.def: IBM's one-core matmuls).
//   pt.fill_drain = overlap: the next fold's preload runs under the current fold's
//   stream (one shadow buffer) and its stream follows without a bubble, so only the first
//   preload and the last drain are exposed:
//     cycles = P + (folds - 1) * max(T, P) + T + D    (os: folds * k_eff + R + C - 2)
//   Both equal P + T + D for one fold.
//   Overlap holds across instructions too: a pt.mm that starts the cycle the array's previous
//   pt.mm completes (nothing between them but satisfied syncs) had its weights shifted in under
//   that one's last stream T', and its stream follows that stream while that one drains. So
//   it completes max(0, P - T') + (folds - 1) * max(T, P) + T after the previous completion:
//   the pipeline's exact completion, with no P or D of its own. (Data its syncs released
//   within the previous pt.mm's last P cycles would preload later: not modelled.)
//   SCALE-Sim v3 reports the 0-based index of the last compute cycle ("Total Cycles" in
//   COMPUTE_REPORT.csv = number of demand rows - 1), i.e. these cycles minus 1.
//
// SFP (sfp.*, rows x cols elements on one corelet), lanes by element size (sfp.cvt: the wider
// of sdt and ddt): 4 and 8 bits sfp.lanes_8bit, 16 sfp.lanes_fp16, 32 sfp.lanes_fp32, 64
// sfp.lanes_64bit (int4 takes only sfp.cvt, at the 8-bit lanes). Each op class has a pipeline
// latency L and cycles per vector V:
//   simple (element-wise ops, sel, fill), transcendental, compare, convert:
//     cycles = L + ceil(rows * cols / lanes) * V
//   reduce (sfp.red over cols of each row): a row's elements fill whole vectors (rows with
//   cols < lanes pack floor(lanes / cols) to a vector, segmented), the vectors of a row are
//   combined element-wise, then the lanes of a row meet in a log-depth tree that is pipelined
//   across rows, so its depth is paid once:
//     vectors = cols >= lanes ? rows * ceil(cols / lanes) : ceil(rows / floor(lanes / cols))
//     cycles  = L + vectors * V + ceil(log2(min(cols, lanes))) * sfp.reduce_stage_cycles
//
// DMA (one engine, one direction): requests of `piece` bytes it may have at the DRAM at once:
//     in_flight = min(dma.max_outstanding, max(1, floor(dma.max_outstanding_bytes / piece)))
//   a piece larger than the byte budget goes alone. With the DRAM's latency L per request, one
//   engine moves at most in_flight * piece / L bytes per cycle (Little's law).
#include <algorithm>
#include <cstdint>
#include <string>

#include "spyre/arch/arch.h"
#include "spyre/error.h"
#include "spyre/isa/isa.h"

namespace spyre::arch {

namespace timing_detail {
inline int64_t ceil_div(int64_t a, int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }
inline int64_t ceil_log2(int64_t x) {
  int64_t d = 0;
  while ((int64_t{1} << d) < x) ++d;
  return d;
}
}  // namespace timing_detail

enum class PtDataflow { OS, WS, IS };

// pt.dataflow by name; throws spyre::Error listing the known names.
inline PtDataflow pt_dataflow(const ArchConfig& cfg) {
  if (cfg.pt_dataflow == "os") return PtDataflow::OS;
  if (cfg.pt_dataflow == "ws") return PtDataflow::WS;
  if (cfg.pt_dataflow == "is") return PtDataflow::IS;
  throw Error("pt.dataflow", "unknown dataflow '" + cfg.pt_dataflow + "'; known: os, ws, is");
}

// pt.fill_drain: true for "per_fold" (SCALE-Sim), false for "overlap"; throws on other names.
inline bool pt_fill_per_fold(const ArchConfig& cfg) {
  if (cfg.pt_fill_drain == "per_fold") return true;
  if (cfg.pt_fill_drain == "overlap") return false;
  throw Error("pt.fill_drain",
              "unknown mode '" + cfg.pt_fill_drain + "'; known: overlap, per_fold");
}

// Throws naming the first bad PT/SFP parameter (names and ranges validate() cannot check).
inline void validate_unit_timing(const ArchConfig& cfg) {
  pt_dataflow(cfg);
  pt_fill_per_fold(cfg);
  auto positive = [](const char* key, int64_t v) {
    if (v <= 0) throw Error(key, "must be positive, got " + std::to_string(v));
  };
  auto non_negative = [](const char* key, int64_t v) {
    if (v < 0) throw Error(key, "must not be negative, got " + std::to_string(v));
  };
  positive("pt.int8_rate", cfg.pt_int8_rate);
  positive("pt.int4_rate", cfg.pt_int4_rate);
  positive("pt.fp32_passes", cfg.pt_fp32_passes);
  positive("sfp.lanes_8bit", cfg.sfp_lanes_8bit);
  positive("sfp.lanes_64bit", cfg.sfp_lanes_64bit);
  non_negative("sfp.latency_cycles", cfg.sfp_latency_cycles);
  non_negative("sfp.transcendental_latency_cycles", cfg.sfp_transcendental_latency_cycles);
  non_negative("sfp.compare_latency_cycles", cfg.sfp_compare_latency_cycles);
  non_negative("sfp.reduce_latency_cycles", cfg.sfp_reduce_latency_cycles);
  non_negative("sfp.convert_latency_cycles", cfg.sfp_convert_latency_cycles);
  positive("sfp.simple_cycles_per_vector", cfg.sfp_simple_cycles_per_vector);
  positive("sfp.compare_cycles_per_vector", cfg.sfp_compare_cycles_per_vector);
  positive("sfp.reduce_cycles_per_vector", cfg.sfp_reduce_cycles_per_vector);
  positive("sfp.convert_cycles_per_vector", cfg.sfp_convert_cycles_per_vector);
  non_negative("sfp.reduce_stage_cycles", cfg.sfp_reduce_stage_cycles);
}

// host.call: the inputs cross the host link (latency + bytes at host.link_gbps), the host
// works (host.call_ns), the outputs cross back; cycles of the core clock, rounded up.
inline int64_t host_call_cycles(const ArchConfig& cfg, int64_t in_bytes, int64_t out_bytes) {
  auto transfer_ns = [&](int64_t bytes) {
    return cfg.host_link_latency_ns + static_cast<double>(bytes) / cfg.host_link_gbps;
  };
  return cfg.ns_to_cycles(transfer_ns(in_bytes) + cfg.host_call_ns + transfer_ns(out_bytes));
}

// One pt.mm as SCALE-Sim folds: preload P, stream T and skew/drain D cycles per fold.
struct PtFolds {
  int64_t folds = 0, preload_cycles = 0, stream_cycles = 0, drain_cycles = 0;
};

// k after the dtype's throughput: see the header comment.
inline int64_t pt_k_eff(const ArchConfig& cfg, int64_t k, isa::DType dt) {
  const int64_t bits = isa::dtype_bits(dt);
  if (bits <= 4) return timing_detail::ceil_div(k, cfg.pt_int4_rate);
  if (bits <= 8) return timing_detail::ceil_div(k, cfg.pt_int8_rate);
  if (bits <= 16) return k;
  return k * cfg.pt_fp32_passes * (bits / 32);
}

inline PtFolds pt_folds(const ArchConfig& cfg, int64_t m, int64_t n, int64_t k, isa::DType dt) {
  using timing_detail::ceil_div;
  const int64_t R = cfg.pt_rows, C = cfg.pt_lanes, ke = pt_k_eff(cfg, k, dt);
  PtFolds f;
  f.drain_cycles = R + C - 2;
  switch (pt_dataflow(cfg)) {
    case PtDataflow::OS:
      f.folds = ceil_div(m, R) * ceil_div(n, C);
      f.stream_cycles = ke;
      break;
    case PtDataflow::WS:
      f.folds = ceil_div(ke, R) * ceil_div(n, C);
      f.stream_cycles = m;
      f.preload_cycles = R;
      break;
    case PtDataflow::IS:
      f.folds = ceil_div(ke, R) * ceil_div(m, C);
      f.stream_cycles = n;
      f.preload_cycles = R;
      break;
  }
  return f;
}

// The rows of m one fold holds, the unit in which a tile's rows are cut between the corelets
// without an extra fold: os maps m on the array's R rows, is on its C columns; ws streams m
// (T = m), so any cut costs nothing.
inline int64_t pt_m_rows(const ArchConfig& cfg) {
  switch (pt_dataflow(cfg)) {
    case PtDataflow::OS: return cfg.pt_rows;
    case PtDataflow::WS: return 1;
    case PtDataflow::IS: return cfg.pt_lanes;
  }
  return cfg.pt_rows;
}

// The rows of a tile of m rows that corelet 0 takes (corelet 1 the rest): half, rounded up to
// whole pt_m_rows units; all of them on a core of one corelet.
inline int64_t pt_corelet_rows(const ArchConfig& cfg, int64_t m) {
  if (cfg.corelets < 2) return m;
  const int64_t unit = pt_m_rows(cfg);
  return std::min(m, ((m + 1) / 2 + unit - 1) / unit * unit);
}

// Cycles the PT array is busy with one pt.mm (0 when it has no work). `after`: the last stream
// T' of the pt.mm the array completed the cycle this one starts, or -1 (none; or per_fold,
// where every instruction pays its own preload and drain).
inline int64_t pt_mm_cycles(const ArchConfig& cfg, int64_t m, int64_t n, int64_t k, isa::DType dt,
                            int64_t after = -1) {
  const PtFolds f = pt_folds(cfg, m, n, k, dt);
  if (f.folds <= 0) return 0;
  const int64_t P = f.preload_cycles, T = f.stream_cycles, D = f.drain_cycles;
  if (pt_fill_per_fold(cfg)) return f.folds * (P + T + D);
  const int64_t stream = (f.folds - 1) * std::max(T, P) + T;
  return after >= 0 ? std::max<int64_t>(0, P - after) + stream : P + stream + D;
}

// Cycles of each of a run of identical pt.mm back to back after the first (the first pays
// pt_mm_cycles): under pt.fill_drain = overlap, each follows the one before it.
inline int64_t pt_mm_chained_cycles(const ArchConfig& cfg, int64_t m, int64_t n, int64_t k,
                                    isa::DType dt) {
  return pt_mm_cycles(cfg, m, n, k, dt, pt_folds(cfg, m, n, k, dt).stream_cycles);
}

// The PT array's pipeline across instructions, as the simulator and the compiler's timeline
// both keep it per array (pt.fill_drain = overlap): when its last pt.mm completed and that
// one's last stream.
struct PtPipe {
  double end = -1;
  int64_t stream = 0;
  // Cycles of pt.mm `in` starting at cycle `at` (chained when `at` is the last completion);
  // remembers it as completing after them (a caller whose unit finishes later, waiting for LX
  // banks, sets `end` itself).
  int64_t start(const ArchConfig& cfg, const isa::Instr& in, double at) {
    const int64_t m = SPYRE_OPERAND(in, "m"), n = SPYRE_OPERAND(in, "n"),
                  k = SPYRE_OPERAND(in, "k");
    const auto dt = static_cast<isa::DType>(SPYRE_OPERAND(in, "dt"));
    const int64_t c = pt_mm_cycles(cfg, m, n, k, dt, at == end ? stream : -1);
    end = at + static_cast<double>(c);
    stream = pt_folds(cfg, m, n, k, dt).stream_cycles;
    return c;
  }
};

inline int64_t pt_mm_cycles(const ArchConfig& cfg, const isa::Instr& in) {
  return pt_mm_cycles(cfg, SPYRE_OPERAND(in, "m"), SPYRE_OPERAND(in, "n"), SPYRE_OPERAND(in, "k"),
                      static_cast<isa::DType>(SPYRE_OPERAND(in, "dt")));
}

// SFP lanes for elements of `bits` bits.
inline int64_t sfp_lanes(const ArchConfig& cfg, int64_t bits) {
  int64_t lanes = bits <= 8    ? cfg.sfp_lanes_8bit
                  : bits <= 16 ? cfg.sfp_lanes_fp16
                  : bits <= 32 ? cfg.sfp_lanes_fp32
                               : cfg.sfp_lanes_64bit;
  return std::max<int64_t>(1, lanes);
}

// Cycles the SFP is busy with one sfp.* instruction.
inline int64_t sfp_op_cycles(const ArchConfig& cfg, const isa::Instr& in) {
  using isa::Opcode;
  using timing_detail::ceil_div;
  auto dbits = [&](const char* name) {
    return isa::dtype_bits(static_cast<isa::DType>(in.get(name)));
  };
  const int64_t bits =
      in.op == Opcode::SfpConvert ? std::max(dbits("sdt"), dbits("ddt")) : dbits("dt");
  const int64_t lanes = sfp_lanes(cfg, bits);
  const int64_t rows = SPYRE_OPERAND(in, "rows"), cols = SPYRE_OPERAND(in, "cols");
  if (rows <= 0 || cols <= 0) return 0;
  int64_t latency = cfg.sfp_latency_cycles, per_vector = cfg.sfp_simple_cycles_per_vector;
  switch (in.op) {
    case Opcode::SfpConvert:
      latency = cfg.sfp_convert_latency_cycles;
      per_vector = cfg.sfp_convert_cycles_per_vector;
      break;
    case Opcode::SfpReduce: {
      const int64_t vectors =
          cols >= lanes ? rows * ceil_div(cols, lanes) : ceil_div(rows, lanes / cols);
      return cfg.sfp_reduce_latency_cycles + vectors * cfg.sfp_reduce_cycles_per_vector +
             timing_detail::ceil_log2(std::min(cols, lanes)) * cfg.sfp_reduce_stage_cycles;
    }
    case Opcode::SfpUnary:
    case Opcode::SfpBinary:
      switch (isa::sfp_fn_info(static_cast<isa::SfpFn>(SPYRE_OPERAND(in, "fn"))).cls) {
        case isa::SfpClass::Transcendental:
          latency = cfg.sfp_transcendental_latency_cycles;
          per_vector = cfg.sfp_transcendental_factor;
          break;
        case isa::SfpClass::Compare:
          latency = cfg.sfp_compare_latency_cycles;
          per_vector = cfg.sfp_compare_cycles_per_vector;
          break;
        default: break;
      }
      break;
    default: break;  // sel, fill: simple
  }
  return latency + ceil_div(rows * cols, lanes) * per_vector;
}

// Requests of `piece` bytes one DMA engine may have in flight: see the header comment.
inline int64_t dma_in_flight(const ArchConfig& cfg, int64_t piece) {
  const int64_t by_bytes = piece > 0 ? cfg.dma_max_outstanding_bytes / piece : 1;
  return std::max<int64_t>(1, std::min(cfg.dma_max_outstanding, by_bytes));
}

// dram.channel_xor's hash: `fields` (the DRAM row window's index: the address fields above
// the column, as one number) folded by XOR into `bits` bits, XORed onto the channel. The
// LPDDR5 address map (sim/dram/lpddr5_spec.cpp) and the cost model's channel spread
// (CostParams::dram_visits) both use it.
inline uint64_t channel_xor_fold(uint64_t fields, int bits) {
  uint64_t h = 0;
  if (bits > 0)
    for (; fields != 0; fields >>= bits) h ^= fields & ((uint64_t{1} << bits) - 1);
  return h;
}

}  // namespace spyre::arch
