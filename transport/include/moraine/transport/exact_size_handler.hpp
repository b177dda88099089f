#pragma once
// Completion handlers allocated at their own size, for the waits an idle connection keeps pending:
// the runtime's (net/) readability wait and the client library's waits. No asio include: asio
// finds the allocator through the handler's allocator_type.
#include <cstddef>
#include <memory>
#include <utility>

namespace moraine::transport {

/// std::allocator under asio's allocator interface: each operation takes its own size from the heap.
template <class T>
struct exact_allocator {
    using value_type = T;
    exact_allocator() noexcept = default;
    template <class U>
    exact_allocator(const exact_allocator<U>&) noexcept {}
    T* allocate(std::size_t n) { return std::allocator<T>().allocate(n); }
    void deallocate(T* p, std::size_t n) noexcept { std::allocator<T>().deallocate(p, n); }
    template <class U>
    bool operator==(const exact_allocator<U>&) const noexcept { return true; }
};

/** `f` as a completion handler whose operation is allocated by exact_allocator. asio's default
    handler allocator recycles blocks per thread, so a wait that stays pending while a session
    idles (readability, a session's timer) would sit in a block cut for a larger operation or
    coroutine frame of the set-up (hundreds of bytes more per session, perf/README.md "Client
    library: an idle session's heap" and "Idle RSS per session"). The allocator is a member
    type, not asio::bind_allocator, whose binder makes asio keep a second executor in the
    operation (208 bytes instead of 144 for a timer wait). */
template <class F>
struct exact_size_handler {
    F f;
    using allocator_type = exact_allocator<void>;
    allocator_type get_allocator() const noexcept { return {}; }
    template <class... Args>
    void operator()(Args&&... args) {
        f(std::forward<Args>(args)...);
    }
};

/// exact_size_handler{f}.
template <class F>
exact_size_handler<F> exact_size(F f) {
    return {std::move(f)};
}

}  // namespace moraine::transport
