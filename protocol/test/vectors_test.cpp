// Compiles Boost.JSON (header-only) for the test binary and checks the vector files load.
#include <boost/json/src.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol::test {
namespace {

TEST(vectors, every_file_loads_and_every_message_has_hex) {
    const auto names = vector_names();
    ASSERT_GE(names.size(), 20u);
    std::size_t messages = 0;
    for (const auto& n : names) {
        for (const auto& r : load_vectors(n)) {
            if (!has(r, "event")) {
                EXPECT_TRUE(has(r, "hex")) << n;
                ++messages;
            }
        }
    }
    EXPECT_GT(messages, 200u);
}

TEST(vectors, hex_round_trips) {
    EXPECT_EQ(to_hex(from_hex("496365500100")), "496365500100");
    EXPECT_THROW(from_hex("4"), std::invalid_argument);
}

}  // namespace
}  // namespace moraine::protocol::test
