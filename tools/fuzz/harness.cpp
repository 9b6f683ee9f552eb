#include "harness.h"

#include <cstdio>
#include <cstdlib>

namespace spyre::fuzz {

void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz harness: broken property: %s\n", what.c_str());
  std::abort();
}

}  // namespace spyre::fuzz
