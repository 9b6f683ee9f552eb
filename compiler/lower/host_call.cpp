// Host fallback (host_call.h): a fallback kernel the chip cannot run becomes one `host.call` on
// core 0 between two chip-wide barriers, and a description of the ATen call in the report.
#include "spyre/compiler/host_call.h"

#include "spyre/compiler/kernel.h"
#include "spyre/compiler/select.h"
#include "spyre/error.h"

namespace spyre::compiler {
namespace {

// Where a tensor lies for the host: dtype, size and stride in elements, and the device-memory
// byte address of its first element. A size a data-dependent op computes (`symbolic`) comes
// with its expressions: the layout given is the one at the symbols' upper bounds, which the
// buffer is planned for and the link time counts; the host lays the real result out by the
// expressions at the values it finds (spyre_sim/host_fallback.py).
nlohmann::json placed(const Kernel& k, const std::string& buffer, isa::DType dt,
                      const std::vector<int64_t>& size, const std::vector<int64_t>& stride,
                      int64_t offset, const nlohmann::json& symbolic, uint64_t& bytes) {
  bytes += isa::storage_span_bytes(dt, size, stride, k.g.file + ": buffer " + buffer);
  nlohmann::json t = {{"buffer", buffer}, {"dtype", std::string(isa::dtype_name(dt))},
                      {"size", size},     {"stride", stride},
                      {"offset", offset}, {"dram_addr", k.dram_addr(buffer, offset)}};
  if (!symbolic.is_null()) t["symbolic"] = symbolic;
  return t;
}

}  // namespace

bool runs_on_host(const ir::Node& n, bool host_fallback) {
  return host_fallback && n.kind == "fallback" && n.kernel != "MultiOutput" &&
         !select_lowers(n.op_overload);
}

void lower_host_call(Kernel& k) {
  const ir::Node& n = k.node;
  if (n.call.is_null())
    k.unsupported(
        "host fallback needs the ATen call of the node (an IR captured by this "
        "spyre-sim records it as `call`)");
  nlohmann::json call = {{"op", n.op_overload},
                         {"args", n.call["args"]},
                         {"kwargs", n.call["kwargs"]},
                         {"source", n.source}};
  uint64_t in_bytes = 0, out_bytes = 0;
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  // The call's {"input": i} count the node's tensor inputs (a null entry is not one).
  std::vector<const ir::TensorView*> tensors;
  for (const auto& t : n.inputs) {
    if (t.buffer.empty()) continue;
    tensors.push_back(&t);
    inputs.push_back(
        placed(k, t.buffer, t.dtype, t.size, t.stride, t.offset, t.symbolic, in_bytes));
  }
  // The result: a tensor written to the node's own output, or a tuple whose elements the
  // MultiOutput nodes reading it name (their `indices` into the result).
  const ir::Buffer& result = k.g.buffer(n.outputs.at(0));
  if (!result.tuple) {
    outputs.push_back(placed(k, result.name, result.dtype, result.size, result.stride,
                             result.offset, result.symbolic, out_bytes));
    outputs.back()["index"] = nlohmann::json::array();
  }
  for (const auto& m : k.g.nodes) {
    if (m.kernel != "MultiOutput" || m.inputs.empty() || m.inputs[0].buffer != result.name)
      continue;
    const ir::Buffer& b = k.g.buffer(m.outputs.at(0));
    outputs.push_back(
        placed(k, b.name, b.dtype, b.size, b.stride, b.offset, b.symbolic, out_bytes));
    outputs.back()["index"] = m.indices;
  }
  // Inputs the op updates in place go back too: the capture names them (`mutated_inputs`).
  nlohmann::json mutated = n.call.value("mutated_inputs", nlohmann::json::array());
  for (const auto& i : mutated) {
    if (!i.is_number_unsigned() || i.get<size_t>() >= inputs.size())
      k.unsupported("call.mutated_inputs: expected indices into the node's tensor inputs");
    const ir::TensorView& t = *tensors[i.get<size_t>()];
    placed(k, t.buffer, t.dtype, t.size, t.stride, t.offset, t.symbolic, out_bytes);
  }
  call["inputs"] = inputs;
  call["outputs"] = outputs;
  call["mutated"] = mutated;
  call["in_bytes"] = in_bytes;
  call["out_bytes"] = out_bytes;

  isa::Instr in;
  in.op = isa::Opcode::HostCall;
  in.kernel = k.id;
  in.a[0] = static_cast<int64_t>(in_bytes);
  in.a[1] = static_cast<int64_t>(out_bytes);
  k.cores.at(0).emit(in, Access{});  // alone between two barriers: nothing to order against
  k.report["unit"] = "host";
  k.report["host_call"] = call;
}

}  // namespace spyre::compiler
