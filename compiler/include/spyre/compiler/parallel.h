#pragma once
// Independent pieces of one compile on a few threads (compiler.threads): the fusion pass's
// own-group trials (fuse.cpp) and the whole-graph LX plan's first lowering of every kernel
// (compile.cpp). What they share is locked (context.h); each piece writes only its own result.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace spyre::compiler {

// fn(i) for every i in [0, n) on up to `threads` threads (the caller's included, at most the
// host's hardware threads, at most one per two pieces). Every piece runs; then the exception
// of the lowest i that threw, if any, is rethrown, as a loop over i would have thrown it.
template <typename Fn>
void for_each_index(size_t n, int64_t threads, Fn&& fn) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t helpers =
      std::min<size_t>({n / 2, std::max(1u, std::thread::hardware_concurrency()) - 1u,
                        static_cast<size_t>(std::max<int64_t>(1, threads)) - 1});
  std::vector<std::thread> pool;
  for (size_t h = 0; h < helpers; ++h) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {  // no thread to be had: the others do its share
      break;
    }
  }
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace spyre::compiler
