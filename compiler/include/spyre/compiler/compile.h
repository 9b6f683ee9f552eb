#pragma once
// The compiler: Inductor IR JSON (compiler/frontend/SCHEMA.md) to a per-core program
// (isa::Program) and a compile report. Knows the ISA and the chip configuration, never the
// simulator's insides.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/arch/arch.h"
#include "spyre/compiler/cost.h"
#include "spyre/isa/isa.h"

namespace spyre::compiler {

// Debug options (`--set compiler.debug.*`), in force for one compile() (ScopedCompileDebug).
// They plant known defects so that `spyre-sim trace validate` can be shown to catch them.
enum class LxPlanError {
  None,
  Shift,    // the report's plan claims every buffer one stick higher than the code uses
  Shrink,   // the report's plan claims every buffer half its size
  Overlap,  // the allocator places each kernel's second buffer on top of its first
};
// Which convolution tilings the search may pick (`compiler.debug.conv_halo`; tests force each
// path): auto any, halo only halo tilings with one pt.mm per output row (kernels with more
// than one tap), wide only halo tilings with halo-wide rows (stride 1, no fused epilogue),
// taps only one strided load per tap (lower/conv.cpp).
enum class ConvHalo { Auto, Halo, Taps, Wide };
// How a layout copy is lowered (`compiler.layout_copy`): the cost model's choice, or forced.
enum class LayoutCopyMode { Auto, Transpose, Loops };
// "auto", "transpose" or "loops"; spyre::Error naming compiler.layout_copy otherwise.
LayoutCopyMode parse_layout_copy_mode(const std::string& s);

struct CompileDebug {
  LxPlanError lx_plan_error = LxPlanError::None;
  ConvHalo conv_halo = ConvHalo::Auto;
  // Fusion decisions (index in the report's `fusion` list) taken although the cost model
  // rejected them; all: every candidate that lowers.
  std::vector<int64_t> force_fusion;
  bool force_all_fusions = false;
  bool forces(size_t decision) const;
};

struct CompileOptions {
  // `--set compiler.<key>=<value>`; unknown keys are an error naming the key.
  void set(const std::string& key, const std::string& value);
  // Every key set() accepts (without the `compiler.` prefix), in documentation order.
  static const std::vector<std::string>& keys();
  // `compiler.cores=N`: divide the work over cores 0..N-1 (1 <= N <= the chip's cores); the
  // chip keeps its cores, rings and DRAM, the other cores stay idle. 0: all of the chip's.
  int64_t cores = 0;
  // `compiler.schedule=own|ibm`: own is this compiler's schedule; ibm reproduces torch-spyre's
  // (ibm_schedule.h: Inductor's kernels unfused, every op of a kernel a step through memory)
  // so that IBM's measurements can be compared with the chip model.
  std::string schedule = "own";
  // `compiler.ibm.kernel_start_ns`: under compiler.schedule=ibm, the runtime's start-up of each
  // launched kernel (device time before its first instruction: the job's dispatch to the cores
  // and their program load), a sync.delay at the head of every core's stream. 4000 ns: fitted
  // by tools/bench/fidelity on the tuning rows of ../shared/calibration/spyre_kernels.csv (MAPE
  // 16.6 % at 4 to 5 us, 16.7 % at 3, 17.4 % without; IBM's notes in spyre_measured.json: "small
  // kernels carry about 10 us of start-up"). This compiler's own schedule leaves it out.
  double ibm_kernel_start_ns = 4000.0;
  bool fusion = true;
  // At most this many fusions are taken (-1: no limit); later candidates are reported as
  // rejected. Compiling with limit k-1 and k isolates the simulated effect of decision k.
  int64_t fusion_limit = -1;
  // `compiler.matmul_split=b,m,n,k`: parts of every matmul's batch, M, N and K (each >= 1,
  // product <= cores); all 0: the cost model chooses (divide.h).
  std::array<int64_t, 4> matmul_split{0, 0, 0, 0};
  // `compiler.matmul_tiles=tm,tn,tk` and `compiler.matmul_lead=L`: force every matmul's tiles
  // (clamped to its block) and B-panel lead group; 0: the cost model chooses (divide.h).
  std::array<int64_t, 3> matmul_tiles{0, 0, 0};
  int64_t matmul_lead = 0;
  // `compiler.layout_copy=auto|transpose|loops`: how pure layout copies are lowered (auto: the
  // faster by the cost model; transpose.h).
  std::string layout_copy = "auto";
  // `compiler.hw_loops=on|off`: fold repeated instruction blocks into hardware loops
  // (codegen/loop_compress.cpp) after the streams are final; expanding gives the same stream.
  bool hw_loops = true;
  // `compiler.split_reduction=on|off`: reductions over fewer rows than workers are split into
  // partial and final reductions (split_reduction.h).
  bool split_reduction = true;
  // `compiler.lx_planning=on|off`: the whole-graph LX plan keeps buffers in LX between kernels
  // and drops the barriers it makes unnecessary (lx_residency.h); off: every kernel starts from
  // an empty LX and ends at a barrier.
  bool lx_planning = true;
  // `compiler.joint_division=on|off`: with the LX plan, a kernel may take its producer's row
  // division so a value stays in LX between them (plan_lx_jointly, lx_residency.h); off: every
  // kernel divides its work on its own.
  bool joint_division = true;
  // `compiler.host_fallback=on|off`: fallback nodes spyre-sim has no lowering for run on the
  // host over a modelled PCIe link (host_call.h); off: they are refused by name.
  bool host_fallback = false;
  // `compiler.threads=N`: threads for the compile's independent lowerings (parallel.h: the
  // fusion pass's own-group trials, the LX plan's first lowerings), the caller included, at
  // most the host's hardware threads. The program is the same for every N, so
  // to_json() leaves it out (the report and the program cache's key).
  int64_t threads = 2;
  // `compiler.cost.<name>`: the cost model's constants (cost.h).
  CostParams cost;
  // `compiler.debug.lx_plan_error=none|shift|shrink|overlap`,
  // `compiler.debug.force_fusion=none|all|i,j,...`, `compiler.debug.conv_halo=auto|halo|wide|taps`.
  CompileDebug debug;
  nlohmann::json to_json() const;  // the report's `options`
};

// Where the caller finds the graph's tensors in device memory. Inputs in the order of the IR's
// `inputs`, outputs in the order of its `outputs` (an output's address already includes the
// view's storage offset; size/stride describe the returned tensor).
struct TensorBinding {
  std::string name;
  isa::DType dtype;
  std::vector<int64_t> size, stride;
  uint64_t dram_addr = 0;
  bool mutated = false;  // an input the graph writes in place (its storage holds the new value)
};

struct CompileResult {
  isa::Program program;
  std::vector<TensorBinding> inputs, outputs;
  nlohmann::json report;  // decisions: kernels, work split, tiles, LX plan, predicted cycles
};

// Throws spyre::Error naming the file, node and field (bad IR) or the node, ATen op and the
// user's source line (unsupported op, shape or dtype; a working set that cannot fit LX).
CompileResult compile(const nlohmann::json& ir, const arch::ArchConfig& cfg,
                      const CompileOptions& opts = {}, const std::string& file = "<ir>");

}  // namespace spyre::compiler
