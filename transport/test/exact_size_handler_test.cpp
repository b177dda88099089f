// exact_size_handler: the allocator it names (what asio's associated_allocator reads from a
// handler's allocator_type) and the calls it forwards. net/test/exact_size_wait_test.cpp drives it
// through asio's waits (this layer includes no asio).
#include <moraine/transport/exact_size_handler.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <type_traits>

namespace {

using moraine::transport::exact_allocator;
using moraine::transport::exact_size;

TEST(exact_size_handler, names_the_exact_allocator) {
    auto h = exact_size([](int) {});
    static_assert(std::is_same_v<decltype(h)::allocator_type, exact_allocator<void>>);
    static_assert(std::is_same_v<decltype(h.get_allocator()), exact_allocator<void>>);
    // Rebound as asio rebinds it for an operation: same family, every instance equal.
    using op_alloc = std::allocator_traits<exact_allocator<void>>::rebind_alloc<long>;
    static_assert(std::is_same_v<op_alloc, exact_allocator<long>>);
    EXPECT_TRUE(op_alloc() == exact_allocator<char>());
}

TEST(exact_size_handler, allocates_and_frees_the_requested_size) {
    exact_allocator<long> alloc;
    long* p = alloc.allocate(3);
    ASSERT_NE(p, nullptr);
    p[0] = 1, p[2] = 3;  // all three are usable (ASan checks the bounds)
    EXPECT_EQ(p[0] + p[2], 4);
    alloc.deallocate(p, 3);
}

TEST(exact_size_handler, forwards_the_arguments_to_the_function) {
    int sum = 0;
    std::string last;
    auto h = exact_size([&](int n, std::string s) {
        sum += n;
        last = std::move(s);
    });
    h(2, std::string("a"));
    h(3, std::string("b"));
    EXPECT_EQ(sum, 5);
    EXPECT_EQ(last, "b");
}

}  // namespace
