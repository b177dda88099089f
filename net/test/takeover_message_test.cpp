// takeover_message: every message survives encode → decode unchanged; the decoder names what is
// wrong with garbage, another magic, another version (a refusal excepted), a truncated message,
// bytes left over, an unknown type or socket kind, and counts or strings out of bounds.
#include <moraine/net/takeover_message.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

std::vector<std::byte> bytes_of(std::initializer_list<int> v) {
    std::vector<std::byte> out;
    for (int b : v) out.push_back(static_cast<std::byte>(b));
    return out;
}

/// The decoder's message for `bytes`, or "" if it decodes.
std::string error_of(const std::vector<std::byte>& bytes) {
    try {
        net::decode_takeover(bytes);
        return "";
    } catch (const net::channel_error& e) {
        return e.what();
    }
}

net::takeover_listeners sample_listeners() {
    net::takeover_listeners m{"moraine-router 0.1.0", 4242, {}};
    m.sockets.push_back({{"Glacier2.Client", "tcp -h 127.0.0.1 -p 0", 0}, "tcp -h 127.0.0.1 -p 40001", 0,
                         net::socket_kind::stream});
    m.sockets.push_back({{"Glacier2.Client", "tcp -h 127.0.0.1 -p 0", 0}, "tcp -h 127.0.0.1 -p 40001", 1,
                         net::socket_kind::stream});
    m.sockets.push_back({{"Glacier2.Server", "udp -h 127.0.0.1 -p 0", 1}, "udp -h 127.0.0.1 -p 40002", 0,
                         net::socket_kind::datagram});
    return m;
}

}  // namespace

TEST(takeover_message, every_message_round_trips) {
    const std::vector<net::takeover_message> all{
        net::takeover_hello{"moraine-router 0.2.0", 77},
        sample_listeners(),
        net::takeover_descriptors{64, 3},
        net::takeover_accept{3},
        net::takeover_refuse{"the new router's configuration differs"},
        net::takeover_released{3, 12},
    };
    for (const auto& m : all) {
        const auto bytes = net::encode_takeover(m);
        EXPECT_EQ(net::decode_takeover(bytes), m) << net::takeover_name(m);
    }
}

TEST(takeover_message, header_is_magic_version_and_type) {
    const auto bytes = net::encode_takeover(net::takeover_accept{5});
    ASSERT_EQ(bytes.size(), net::takeover_header_bytes + 4);
    EXPECT_EQ(bytes, bytes_of({'M', 'R', 'T', 'K', 1, 0, 4, 5, 0, 0, 0}));  // little-endian, type 4 = accept
}

TEST(takeover_message, garbage_and_another_magic_are_refused) {
    EXPECT_NE(error_of({}).find("MRTK"), std::string::npos);
    EXPECT_NE(error_of(bytes_of({'G', 'E', 'T', ' ', '/'})).find("MRTK"), std::string::npos);
    EXPECT_NE(error_of(bytes_of({'I', 'c', 'e', 'P', 1, 0, 1})).find("MRTK"), std::string::npos);
}

TEST(takeover_message, another_version_is_refused_but_its_refusal_is_read) {
    auto hello = net::encode_takeover(net::takeover_hello{"moraine-router 9", 1});
    hello[4] = std::byte{2};  // version 2
    const auto why = error_of(hello);
    EXPECT_NE(why.find("version 2"), std::string::npos) << why;
    EXPECT_NE(why.find("speaks version 1"), std::string::npos) << why;

    auto refusal = net::encode_takeover(net::takeover_refuse{"I speak 2"});
    refusal[4] = std::byte{2};
    EXPECT_EQ(net::decode_takeover(refusal), net::takeover_message(net::takeover_refuse{"I speak 2"}));
}

TEST(takeover_message, truncation_and_leftovers_are_refused) {
    const auto full = net::encode_takeover(sample_listeners());
    for (std::size_t n = 4; n < full.size(); ++n) {
        const std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_NE(error_of(cut), "") << "cut at " << n;
    }
    auto longer = full;
    longer.push_back(std::byte{0});
    EXPECT_NE(error_of(longer).find("after the end"), std::string::npos);
}

TEST(takeover_message, unknown_type_kind_and_oversized_fields_are_refused) {
    EXPECT_NE(error_of(bytes_of({'M', 'R', 'T', 'K', 1, 0, 99})).find("type 99"), std::string::npos);

    auto listeners = net::encode_takeover(sample_listeners());
    listeners.back() = std::byte{7};  // the last socket's kind
    EXPECT_NE(error_of(listeners).find("kind 7"), std::string::npos);

    // A listeners message announcing 2^32-1 sockets, with none behind: refused before any allocation.
    auto many = bytes_of({'M', 'R', 'T', 'K', 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff});
    EXPECT_NE(error_of(many).find("more than allowed"), std::string::npos) << error_of(many);

    // A refusal whose reason claims 1 MiB.
    auto huge = bytes_of({'M', 'R', 'T', 'K', 1, 0, 5, 0, 0, 0x10, 0});
    EXPECT_NE(error_of(huge).find("more than allowed"), std::string::npos) << error_of(huge);
}

TEST(takeover_message, a_long_reason_is_cut_not_refused) {
    const auto m = net::decode_takeover(net::encode_takeover(net::takeover_refuse{std::string(10000, 'x')}));
    EXPECT_EQ(std::get<net::takeover_refuse>(m).reason.size(), 4096u);
}
