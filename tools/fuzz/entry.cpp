// The libFuzzer entry point of one harness, chosen when built (SPYRE_FUZZ_TARGET).
#include "harness.h"

#ifndef SPYRE_FUZZ_TARGET
#error "SPYRE_FUZZ_TARGET must name a harness of harness.h"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  spyre::fuzz::SPYRE_FUZZ_TARGET(data, size);
  return 0;
}
