// Fuzz harnesses: program files, the text assembly and the binary format. A program either
// parser accepts has passed isa::validate, and must round-trip through both formats unchanged
// (format.h: the assembly round-trips through the binary).
#include "harness.h"
#include "spyre/error.h"
#include "spyre/isa/format.h"

namespace spyre::fuzz {
namespace {

void check_round_trips(const isa::Program& p) {
  isa::Program from_binary, from_text;
  try {
    from_binary = isa::decode(isa::encode(p), "encoded");
  } catch (const Error& e) {
    fail(std::string("an accepted program does not decode from its own binary: ") + e.what());
  }
  if (!(from_binary == p)) fail("an accepted program decodes differently from its own binary");
  const std::string text = isa::disassemble(p);
  try {
    from_text = isa::assemble(text, "disassembled.s");
  } catch (const Error& e) {
    fail(std::string("an accepted program does not assemble from its own text: ") + e.what() +
         "\n" + text);
  }
  if (!(from_text == p)) fail("an accepted program assembles differently from its text:\n" + text);
}

}  // namespace

bool assembly(const uint8_t* data, size_t size) {
  isa::Program p;
  try {
    p = isa::assemble(std::string(reinterpret_cast<const char*>(data), size), "fuzz.s");
  } catch (const Error&) {
    return false;
  }
  check_round_trips(p);
  return true;
}

bool binary(const uint8_t* data, size_t size) {
  isa::Program p;
  try {
    p = isa::decode(std::vector<uint8_t>(data, data + size), "fuzz.bin");
  } catch (const Error&) {
    return false;
  }
  check_round_trips(p);
  return true;
}

}  // namespace spyre::fuzz
