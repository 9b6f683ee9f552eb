// WindowCounter: windowed rates for counters (DRAM bandwidth, ring link utilisation).
#include <algorithm>

#include "spyre/traces/sink.h"

namespace spyre::traces {

// The amount is put into its windows first and only then are the windows before `now` emitted:
// an amount reported when it ends (a unit's instruction, a ring transfer) lands in the windows
// it covered, as long as no window it covers was emitted before (true when the amounts of one
// counter follow each other in time). An amount for a window already emitted is counted in the
// first open one.
void WindowCounter::add(TraceSink& sink, uint64_t now, uint64_t start, uint64_t dur,
                        double amount) {
  auto put = [this](uint64_t w, double a) {
    w = std::max(w, next_);
    if (pending_.empty() || pending_.back().first < w) {  // the usual case: a later window
      pending_.emplace_back(w, a);
      return;
    }
    if (pending_.back().first == w) {
      pending_.back().second += a;
      return;
    }
    auto it = std::lower_bound(pending_.begin(), pending_.end(), std::make_pair(w, -1e300));
    if (it != pending_.end() && it->first == w)
      it->second += a;
    else
      pending_.insert(it, {w, a});
  };
  if (dur == 0) {
    put(start / window_, amount);
  } else {
    const double per_cycle = amount / static_cast<double>(dur);
    for (uint64_t t = start; t < start + dur;) {
      const uint64_t w = t / window_;
      const uint64_t end = std::min(start + dur, (w + 1) * window_);
      put(w, per_cycle * static_cast<double>(end - t));
      t = end;
    }
  }
  flush_before(sink, now / window_);
}

void WindowCounter::flush_before(TraceSink& sink, uint64_t window_index) {
  size_t n = 0;
  for (; n < pending_.size() && pending_[n].first < window_index; ++n) {
    const auto [w, a] = pending_[n];
    const auto wi = static_cast<int64_t>(w);
    if (last_nonzero_ && wi > last_emitted_ + 1)
      sink.counter(group_, name_, static_cast<uint64_t>(last_emitted_ + 1) * window_, 0.0);
    const double v = a / static_cast<double>(window_) * scale_;
    sink.counter(group_, name_, w * window_, v);
    last_emitted_ = wi;
    last_nonzero_ = v != 0.0;
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
  next_ = std::max(next_, window_index);
}

void WindowCounter::flush_all(TraceSink& sink) {
  flush_before(sink, UINT64_MAX);
  if (last_nonzero_) {
    sink.counter(group_, name_, static_cast<uint64_t>(last_emitted_ + 1) * window_, 0.0);
    last_nonzero_ = false;
  }
}

}  // namespace spyre::traces
