#pragma once
// Program files: a binary format with a versioned header and a text assembly that
// round-trips through it. Both throw spyre::Error naming the file and position on bad input.
//
// Binary layout (little endian):
//   "SPYREPRG" u32 version u32 num_cores u64 dram_bytes
//   u64 n_kernels { u32 len, bytes name }
//   u64 n_tensors { str name, str role, u8 dtype, u32 rank, i64 size[rank], i64 stride[rank],
//                   u64 dram_addr, u64 bytes }
//   u64 n_data { u64 dram_addr, u64 len, bytes }
//   per core: u64 n_instr { u16 opcode, u16 kernel, u16 n_operands, u16 0, i64 operands[n] }
//   "ENDPROG"\0
#include <string>
#include <vector>

#include "spyre/isa/isa.h"

namespace spyre::isa {

std::vector<uint8_t> encode(const Program& p);
Program decode(const std::vector<uint8_t>& bytes, const std::string& file = "<memory>");

std::string disassemble(const Program& p);
Program assemble(const std::string& text, const std::string& file = "<memory>");

// Reads either format by content (binary magic or text); writes by extension (.s/.asm text,
// anything else binary), atomically.
Program load_program(const std::string& path);
void save_program(const Program& p, const std::string& path);
bool is_binary_program(const std::vector<uint8_t>& bytes);

// The instruction table as Markdown (for `spyre-sim isa doc`).
std::string isa_markdown();

}  // namespace spyre::isa
