// Replays every seed (tools/fuzz/corpus/NAME) and every input that ever broke a harness
// (tests/data/fuzz/NAME, named after what it broke) through the harnesses of harness.h. A
// finding aborts or throws here as it did under libFuzzer; under `make test-sanitize` the
// sanitizers watch too. Each corpus must hold seeds the parser accepts, so the replay
// exercises the accepted path (round trips, graph promises), not only the error paths.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <vector>

#include "harness.h"
#include "spyre/io.h"

namespace {

namespace fs = std::filesystem;
using Harness = std::function<bool(const uint8_t*, size_t)>;

struct Replay {
  size_t files = 0, accepted = 0;
};

Replay replay_dir(const fs::path& dir, const Harness& h) {
  Replay r;
  if (!fs::is_directory(dir)) return r;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    const std::vector<uint8_t> bytes = spyre::read_file_bytes(f.string());
    r.accepted += h(bytes.data(), bytes.size()) ? 1 : 0;
    ++r.files;
  }
  return r;
}

void replay(const std::string& name, const Harness& h, size_t min_seeds) {
  const Replay seeds = replay_dir(fs::path(SPYRE_FUZZ_CORPUS_DIR) / name, h);
  EXPECT_GE(seeds.files, min_seeds) << "seed corpus tools/fuzz/corpus/" << name;
  EXPECT_GE(seeds.accepted, 1u) << "no seed of " << name << " is accepted";
  const Replay found = replay_dir(fs::path(SPYRE_FUZZ_REGRESSION_DIR) / name, h);
  std::printf("%s: %zu seeds (%zu accepted), %zu past findings replayed\n", name.c_str(),
              seeds.files, seeds.accepted, found.files);
}

TEST(FuzzReplay, ArchYamlSeedsAndPastFindingsKeepTheContract) {
  replay("arch", spyre::fuzz::arch_yaml, 4);
}
TEST(FuzzReplay, IrJsonSeedsAndPastFindingsKeepTheContract) {
  replay("ir", spyre::fuzz::ir_json, 4);
}
TEST(FuzzReplay, AssemblySeedsAndPastFindingsKeepTheContract) {
  replay("asm", spyre::fuzz::assembly, 4);
}
TEST(FuzzReplay, BinarySeedsAndPastFindingsKeepTheContract) {
  replay("binary", spyre::fuzz::binary, 4);
}

// Rejected input is the quiet path; a broken property is loud (libFuzzer saves the input).
TEST(FuzzReplay, RejectedInputReturnsAndABrokenPropertyAborts) {
  const std::string bad = "{\"schema\": \"spyre-sim-ir\", \"version\": 1";  // truncated
  EXPECT_FALSE(spyre::fuzz::ir_json(reinterpret_cast<const uint8_t*>(bad.data()), bad.size()));
  EXPECT_DEATH(spyre::fuzz::fail("sizes differ"), "broken property: sizes differ");
}

}  // namespace
