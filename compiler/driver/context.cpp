// One compile's context (context.h): its options parsed once, and what its passes remember.
#include "spyre/compiler/context.h"

#include <cstdint>
#include <mutex>

namespace spyre::compiler {

KernelPrediction predict_kernel(const CompileContext& ctx,
                                const std::vector<std::vector<isa::Instr>>& per_core,
                                const arch::ArchConfig& cfg) {
  {
    std::lock_guard<std::mutex> lock(ctx.memo_mutex);
    if (ctx.predicted_cfg && ctx.predicted_cfg != &cfg)  // not this compile's: no memo
      return predict(per_core, cfg, ctx.opts.cost);
    ctx.predicted_cfg = &cfg;
  }
  // Two 64-bit chains over every core's length, opcodes and operands, each word first spread
  // over all 64 bits by a splitmix64 finaliser (so no bit of a word reaches only the top of a
  // chain): FNV-1a of it, and a multiply-xorshift of its sum.
  uint64_t h1 = 1469598103934665603ull, h2 = 0x9e3779b97f4a7c15ull;
  auto mix = [&](uint64_t v) {
    v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
    v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
    v ^= v >> 31;
    h1 = (h1 ^ v) * 1099511628211ull;
    h2 = (h2 + v) * 0xbf58476d1ce4e5b9ull;
    h2 ^= h2 >> 29;
  };
  mix(per_core.size());
  for (const auto& core : per_core) {
    mix(core.size());
    for (const isa::Instr& in : core) {
      mix(static_cast<uint64_t>(in.op));
      for (int64_t v : in.a) mix(static_cast<uint64_t>(v));
    }
  }
  const auto key = std::make_pair(h1, h2);
  {
    std::lock_guard<std::mutex> lock(ctx.memo_mutex);
    if (auto it = ctx.predictions.find(key); it != ctx.predictions.end()) return it->second;
  }
  const KernelPrediction p = predict(per_core, cfg, ctx.opts.cost);  // outside the lock
  std::lock_guard<std::mutex> lock(ctx.memo_mutex);
  return ctx.predictions.emplace(key, p).first->second;
}

CompileContext::CompileContext(const CompileOptions& o)
    : opts(o), layout_copy(parse_layout_copy_mode(o.layout_copy)) {
  matmul_split.parts = o.matmul_split;
  matmul_split.tiles = o.matmul_tiles;
  matmul_split.lead = o.matmul_lead;
  matmul_split.one_tile = o.schedule == "ibm";
}

}  // namespace spyre::compiler
