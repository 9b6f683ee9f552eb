#pragma once
// Callback: a move-only void() callable for the simulator's events and completions. One that
// fits kInline bytes (the event lambdas: a few pointers and integers) is kept in place, where
// std::function allocates for anything over 16 bytes; a larger one goes to the heap. The
// allocation and free per scheduled event cost about 2 % of a timing-only run's instructions
// (callgrind, the GPT-2 block).
#include <cstddef>
#include <functional>
#include <new>
#include <type_traits>
#include <utility>

namespace spyre::sim {

class Callback {
 public:
  static constexpr size_t kInline = 48;  // bytes kept in place

  Callback() noexcept = default;
  Callback(std::nullptr_t) noexcept {}  // NOLINT: as std::function
  template <
      class F, class D = std::decay_t<F>,
      class = std::enable_if_t<!std::is_same_v<D, Callback> && !std::is_same_v<D, std::nullptr_t> &&
                               std::is_invocable_r_v<void, D&>>>
  Callback(F&& f) {  // NOLINT: implicit, as std::function
    assign<D>(std::forward<F>(f));
  }
  Callback(Callback&& o) noexcept { take(o); }
  Callback& operator=(Callback&& o) noexcept {
    if (this != &o) {
      reset();
      take(o);
    }
    return *this;
  }
  Callback& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { reset(); }

  explicit operator bool() const noexcept { return ops_ != nullptr; }
  // Calling an empty Callback throws std::bad_function_call, as std::function does.
  void operator()() {
    if (!ops_) throw_empty();
    ops_->call(buf_);
  }

 private:
  struct Ops {
    void (*call)(void*);
    void (*move)(void* dst, void* src) noexcept;  // into dst; src is left destroyed
    void (*destroy)(void*) noexcept;
  };
  template <class D>
  static constexpr bool kInPlace =
      sizeof(D) <= kInline &&
      alignof(D) <= alignof(std::max_align_t) && std::is_nothrow_move_constructible_v<D>;

  template <class D, class F>
  void assign(F&& f) {
    if constexpr (kInPlace<D>) {
      ::new (static_cast<void*>(buf_)) D(std::forward<F>(f));
      static constexpr Ops ops{[](void* p) { (*static_cast<D*>(p))(); },
                               [](void* d, void* s) noexcept {
                                 ::new (d) D(std::move(*static_cast<D*>(s)));
                                 static_cast<D*>(s)->~D();
                               },
                               [](void* p) noexcept { static_cast<D*>(p)->~D(); }};
      ops_ = &ops;
    } else {
      D* heap = new D(std::forward<F>(f));
      ::new (static_cast<void*>(buf_)) D*(heap);
      static constexpr Ops ops{
          [](void* p) { (**static_cast<D**>(p))(); },
          [](void* d, void* s) noexcept { ::new (d) D*(*static_cast<D**>(s)); },
          [](void* p) noexcept { delete *static_cast<D**>(p); }};
      ops_ = &ops;
    }
  }
  void take(Callback& o) noexcept {
    if (!o.ops_) return;
    o.ops_->move(buf_, o.buf_);
    ops_ = o.ops_;
    o.ops_ = nullptr;
  }
  void reset() noexcept {
    if (!ops_) return;
    const Ops* ops = ops_;
    ops_ = nullptr;
    ops->destroy(buf_);
  }
  [[noreturn]] static void throw_empty() { throw std::bad_function_call(); }

  alignas(std::max_align_t) unsigned char buf_[kInline];
  const Ops* ops_ = nullptr;
};

}  // namespace spyre::sim
