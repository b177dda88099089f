// session_directory: the interface services use to reach session servants. Its one concrete
// piece, frame_source, must build a frame only when called (a subscriber whose queue is full
// costs no allocation) and call the callable it refers to, every time. The implementation,
// session_router::deliver, is tested in router/test/session_router_test.cpp.
#include <moraine/net/session_directory.hpp>

#include <gtest/gtest.h>

using namespace moraine;

TEST(session_directory, frame_source_builds_only_when_called) {
    int built = 0;
    auto make = [&] {
        ++built;
        return net::outbound_frame{protocol::byte_buffer(10, std::byte{0x49}), nullptr};
    };
    const net::session_directory::frame_source source(make);
    EXPECT_EQ(built, 0);
    const auto f = source();
    EXPECT_EQ(built, 1);
    EXPECT_EQ(f.size(), 10u);
    EXPECT_EQ(source().head.front(), std::byte{0x49});
    EXPECT_EQ(built, 2);
}

TEST(session_directory, frame_source_refers_to_the_callable_and_its_current_state) {
    std::size_t size = 1;
    auto make = [&] { return net::outbound_frame{protocol::byte_buffer(size), nullptr}; };
    const net::session_directory::frame_source source(make);
    size = 7;
    EXPECT_EQ(source().size(), 7u);
}

TEST(session_directory, a_session_cache_starts_empty) {
    net::session_directory::session_cache cache;
    EXPECT_TRUE(cache.connection.expired());
    EXPECT_EQ(cache.serial, 0u);
}
