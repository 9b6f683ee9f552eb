#pragma once
// The fuzz harnesses: one function per parser that takes untrusted bytes. Each is the body of
// a libFuzzer target (entry.cpp, built by `tools/fuzz/run`) and of the replay test that runs
// every seed and every input that ever crashed (tests/fuzz, part of `make test`).
//
// Contract of every harness: bad input may only end in spyre::Error (the error users see,
// naming the file and field); the harness catches that and returns false (true: accepted). Anything
// else is a finding: another exception escapes (libFuzzer reports it as a crash), a sanitizer
// fires, or a property of accepted input fails and the harness aborts with a message (fail()).
#include <cstddef>
#include <cstdint>
#include <string>

namespace spyre::fuzz {

bool arch_yaml(const uint8_t* data, size_t size);  // isa/src/arch.cpp: parse_arch_yaml
bool ir_json(const uint8_t* data, size_t size);    // compiler/ir/load.cpp: parse_ir_json, load_ir
bool assembly(const uint8_t* data, size_t size);   // isa/src/assembly.cpp: assemble
bool binary(const uint8_t* data, size_t size);     // isa/src/binary.cpp: decode

// A broken property of input the parser accepted: prints `what` and aborts.
[[noreturn]] void fail(const std::string& what);

}  // namespace spyre::fuzz
