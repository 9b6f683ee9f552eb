#pragma once
// A TraceSink that keeps everything in memory, for tests.
#include <string>
#include <utility>
#include <vector>

#include "spyre/traces/sink.h"

namespace spyre::traces::testing {

class RecordingSink : public TraceSink {
 public:
  struct Span {
    std::string group, track, name, kernel;
    uint64_t start, dur;
    int core;
    int64_t pc;
    std::vector<LxAccess> lx;
  };
  struct Counter {
    std::string group, name;
    uint64_t t;
    double value;
  };
  struct Flow {
    uint64_t id;
    int src, dst;
    uint64_t src_t, dst_t;
  };
  int track(std::string_view g, std::string_view t) override {
    tracks.emplace_back(std::string(g), std::string(t));
    return static_cast<int>(tracks.size()) - 1;
  }
  void span(int t, std::string_view name, uint64_t start, uint64_t dur,
            const SpanArgs& a) override {
    auto& tr = tracks.at(static_cast<size_t>(t));
    spans.push_back({tr.first, tr.second, std::string(name), std::string(a.kernel), start, dur,
                     a.core, a.pc, a.lx ? *a.lx : std::vector<LxAccess>{}});
  }
  using TraceSink::span;
  void counter(std::string_view g, std::string_view n, uint64_t t, double v) override {
    counters.push_back({std::string(g), std::string(n), t, v});
  }
  void flow(uint64_t id, int s, uint64_t st, int d, uint64_t dt) override {
    flows.push_back({id, s, d, st, dt});
  }
  void finish() override { finished = true; }

  const Span* find(const std::string& group, const std::string& track,
                   const std::string& name) const {
    for (const auto& s : spans)
      if (s.group == group && s.track == track && s.name == name) return &s;
    return nullptr;
  }
  std::vector<std::pair<std::string, std::string>> tracks;
  std::vector<Span> spans;
  std::vector<Counter> counters;
  std::vector<Flow> flows;
  bool finished = false;
};

}  // namespace spyre::traces::testing
