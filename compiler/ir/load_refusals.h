#pragma once
// Refusals the IR loader makes on the raw JSON, before it reads buffers and nodes (load.cpp):
// the user's real problem named first, by the op and its source line.
#include <string>

#include "spyre/compiler/ir.h"

namespace spyre::compiler::ir {

// A node that reads or writes a buffer whose size a data-dependent op computes (SCHEMA.md
// `symbolic`), unless it is a host call under `host_fallback` or a MultiOutput of one.
void reject_value_dependent_sizes(const nlohmann::json& j, const std::string& file,
                                  bool host_fallback);
// A fallback kernel nothing lowers (select.h), unless `host_fallback`; an extern kernel with
// no tensor result.
void reject_fallbacks(const nlohmann::json& j, const std::string& file, bool host_fallback);

}  // namespace spyre::compiler::ir
