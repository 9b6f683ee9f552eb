#pragma once
// IBM's schedule (`compiler.schedule=ibm`): how torch-spyre's own back end runs an Inductor
// graph, so that IBM's measurements (../shared/calibration/) can be reproduced by mechanism.
// Its back end runs Inductor's kernels as they come (no further fusion: the compile runs with
// fusion off) and every op of a kernel as its own step: each op's result goes to memory and
// the next op reads it back. With LX planning off that memory is DRAM (IBM measured a fused
// three-input add at 232 us and the same chain of separately compiled adds at 233 us, 2048 x
// 1024 fp16, spyre_kernels.md); with LX planning on the whole-graph LX plan keeps the results
// in LX where producer and consumer divide their rows alike, as IBM's LX planning does. Its
// runtime launches every kernel as a job: compile() heads every core's stream with a
// sync.delay of CompileOptions::ibm_kernel_start_ns, the start-up before the first instruction.
//
// split_ops_through_dram rewrites every pointwise node with more than one computing op into
// one node per op that feeds another: its value is stored to a new intermediate buffer (the
// node's iteration space, row-major, the op's dtype) and the consumers load it. Loads,
// constants, index expressions and dtype conversions ride with the op that uses them (the SFP
// converts on the way). Reductions (column_reduction.h's row adds included: Node::one_op)
// and nodes with masked or indirect accesses stay whole.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spyre/compiler/ir.h"

namespace spyre::compiler {

struct OpSplit {
  std::string node;                  // the node that was split
  std::vector<std::string> nodes;    // the new nodes, in schedule order (the last keeps the name)
  std::vector<std::string> buffers;  // the intermediate buffers, one per new node but the last
  nlohmann::json to_json() const;
};

// Rewrites `g` in place; returns what it split, in node order.
std::vector<OpSplit> split_ops_through_dram(ir::Graph& g);

// Device storage of intermediates. Inductor computes a 16-bit graph's reductions and
// transcendentals in fp32 and, when its kernels stay unfused, stores the fp32 values between
// them (softmax: the row max, exp(x - max) and the row sum). torch-spyre keeps a 16-bit
// graph's tensors at their 16-bit type on the device, the upcast living only inside the SFP:
// the cost model's DRAM byte count of a softmax R x C (spyre_kernels.csv `io_hbm_bytes`) is
// exactly 16 R C, the five steps (max; sub; exp; sum; div) reading and writing 2-byte
// elements, where fp32 intermediates would move 26 R C. store_at_device_dtype retypes every
// fp32 intermediate of a graph whose floating-point inputs and outputs are all of one 16-bit
// type to that type: its stores convert on the way out (to_dtype) and its loads convert back
// (the SFP converts on the way). Buffers that an extern or fallback node reads or writes, that
// a view aliases or a masked sub-block reads keep their type, and so do accumulations whose
// magnitude the inputs do not bound: what a sum, prod or Welford reduction stores (a row's
// sum of squares, Welford's M2 = N var) and row adds' partials. Returns the retyped buffers,
// in buffer order.
std::vector<std::string> store_at_device_dtype(ir::Graph& g);

}  // namespace spyre::compiler
