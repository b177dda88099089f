// takeover_message: every message survives encode → decode unchanged; the decoder names what is
// wrong with garbage, another magic, another version (a refusal excepted), a truncated message,
// bytes left over, an unknown type or socket kind, and counts or strings out of bounds; and
// send_takeover puts one message and its descriptors in one packet.
#include <moraine/net/takeover_message.hpp>

#include <gtest/gtest.h>

#include <sys/socket.h>

#include <algorithm>
#include <chrono>

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
    EXPECT_EQ(bytes, bytes_of({'M', 'R', 'T', 'K', 3, 0, 4, 5, 0, 0, 0}));  // little-endian, type 4 = accept
}

TEST(takeover_message, garbage_and_another_magic_are_refused) {
    EXPECT_NE(error_of({}).find("MRTK"), std::string::npos);
    EXPECT_NE(error_of(bytes_of({'G', 'E', 'T', ' ', '/'})).find("MRTK"), std::string::npos);
    EXPECT_NE(error_of(bytes_of({'I', 'c', 'e', 'P', 1, 0, 1})).find("MRTK"), std::string::npos);
}

TEST(takeover_message, another_version_is_refused_but_its_refusal_is_read) {
    auto hello = net::encode_takeover(net::takeover_hello{"moraine-router 9", 1});
    hello[4] = std::byte{4};  // version 4
    const auto why = error_of(hello);
    EXPECT_NE(why.find("version 4"), std::string::npos) << why;
    EXPECT_NE(why.find("speaks version 3"), std::string::npos) << why;

    auto refusal = net::encode_takeover(net::takeover_refuse{"I speak 1"});
    refusal[4] = std::byte{1};  // a phase-1 router's refusal is still read
    EXPECT_EQ(net::decode_takeover(refusal), net::takeover_message(net::takeover_refuse{"I speak 1"}));
}

namespace {
/// Every cut of `full` after the magic, and `full` with one byte more, are refused.
void expect_cuts_and_leftovers_refused(const std::vector<std::byte>& full) {
    for (std::size_t n = 4; n < full.size(); ++n) {
        const std::vector<std::byte> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        EXPECT_NE(error_of(cut), "") << "cut at " << n;
    }
    auto longer = full;
    longer.push_back(std::byte{0});
    EXPECT_NE(error_of(longer).find("after the end"), std::string::npos);
}
}  // namespace

TEST(takeover_message, truncation_and_leftovers_are_refused) {
    expect_cuts_and_leftovers_refused(net::encode_takeover(sample_listeners()));
}

TEST(takeover_message, unknown_type_kind_and_oversized_fields_are_refused) {
    EXPECT_NE(error_of(bytes_of({'M', 'R', 'T', 'K', 3, 0, 99})).find("type 99"), std::string::npos);

    auto listeners = net::encode_takeover(sample_listeners());
    listeners.back() = std::byte{7};  // the last socket's kind
    EXPECT_NE(error_of(listeners).find("kind 7"), std::string::npos);

    // A listeners message announcing 2^32-1 sockets, with none behind: refused before any allocation.
    auto many = bytes_of({'M', 'R', 'T', 'K', 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff});
    EXPECT_NE(error_of(many).find("more than allowed"), std::string::npos) << error_of(many);

    // A refusal whose reason claims 1 MiB.
    auto huge = bytes_of({'M', 'R', 'T', 'K', 1, 0, 5, 0, 0, 0x10, 0});
    EXPECT_NE(error_of(huge).find("more than allowed"), std::string::npos) << error_of(huge);
}

TEST(takeover_message, a_long_reason_is_cut_not_refused) {
    const auto m = net::decode_takeover(net::encode_takeover(net::takeover_refuse{std::string(10000, 'x')}));
    EXPECT_EQ(std::get<net::takeover_refuse>(m).reason.size(), 4096u);
}

// ---- version 2: the session messages (phase 2a) ------------------------------------------------

namespace {

net::takeover_session sample_session() {
    net::takeover_session s;
    s.serial = 7;
    s.category = "!abcdefghijklmnopqrs";
    s.user_id = "alice";
    s.control_name = "ctl-1";
    s.session_proxy = bytes_of({1, 2, 3, 4});
    s.connection_context = {{"_con.type", "tcp"}, {"_con.remotePort", "40000"}};
    s.routes_max = 1000;
    s.routes = {bytes_of({9, 9}), bytes_of({8})};
    s.filter_categories = {"cat"};
    s.filter_adapter_ids = {"adapter-1", "adapter-2"};
    s.filter_identities = {"c/n"};
    s.idle_ms = 1234;
    s.pending = bytes_of({'I', 'c', 'e'});
    return s;
}

}  // namespace

TEST(takeover_message, session_messages_round_trip) {
    net::takeover_session empty;  // a session without proxy, routes, filters or pending bytes
    empty.category = "#aaaaaaaaaaaaaaaaaaa";
    const std::vector<net::takeover_message> all{
        sample_session(),
        empty,
        net::takeover_session_taken{7},
        net::takeover_session_refused{7, "a category already in use here"},
        net::takeover_sessions_done{12, 3},
    };
    for (const auto& m : all) EXPECT_EQ(net::decode_takeover(net::encode_takeover(m)), m) << net::takeover_name(m);
    EXPECT_STREQ(net::takeover_name(net::takeover_sessions_done{}), "sessions_done");
}

TEST(takeover_message, session_header_and_first_fields_are_as_documented) {
    const auto bytes = net::encode_takeover(sample_session());
    // Header (version 3, type 7), serial 7, transport 0 (tcp), the category's length (20).
    const auto head = bytes_of({'M', 'R', 'T', 'K', 3, 0, 7, 7, 0, 0, 0, 0, 20, 0, 0, 0});
    ASSERT_GT(bytes.size(), head.size());
    EXPECT_TRUE(std::equal(head.begin(), head.end(), bytes.begin()));
}

TEST(takeover_message, a_truncated_or_longer_session_is_refused) {
    expect_cuts_and_leftovers_refused(net::encode_takeover(sample_session()));
}

TEST(takeover_message, a_message_of_version_2_is_refused) {
    // A router of the previous format (sessions, no topic messages): refused with a message.
    auto bytes = net::encode_takeover(sample_session());
    bytes[4] = std::byte{2};
    const auto why = error_of(bytes);
    EXPECT_NE(why.find("version 2"), std::string::npos) << why;
}

TEST(takeover_message, a_session_of_version_1_is_refused) {
    auto bytes = net::encode_takeover(sample_session());
    bytes[4] = std::byte{1};  // what a phase-1 peer would make of it, seen from the other side
    const auto why = error_of(bytes);
    EXPECT_NE(why.find("version 1"), std::string::npos) << why;
}

TEST(takeover_message, oversized_session_fields_are_refused) {
    // An unknown transport.
    auto bytes = net::encode_takeover(sample_session());
    bytes[11] = std::byte{5};
    EXPECT_NE(error_of(bytes).find("transport 5"), std::string::npos) << error_of(bytes);

    // A routing table announcing 2^32-1 entries: refused before any allocation.
    auto many = bytes_of({'M', 'R', 'T', 'K', 3, 0, 7, 0, 0, 0, 0, 0});  // serial 0, tcp
    for (int field = 0; field < 3; ++field) many.insert(many.end(), {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}});
    many.insert(many.end(), {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}});  // no session proxy
    many.insert(many.end(), {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}});  // no context
    many.insert(many.end(), {std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}});  // routes_max
    many.insert(many.end(), {std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff}});
    EXPECT_NE(error_of(many).find("more than allowed"), std::string::npos) << error_of(many);

    // A count within bounds but with fewer bytes behind it than its entries need.
    auto lying = many;
    lying.resize(lying.size() - 4);
    lying.insert(lying.end(), {std::byte{0}, std::byte{0}, std::byte{1}, std::byte{0}});  // 65536 entries, none there
    EXPECT_NE(error_of(lying).find("truncated"), std::string::npos) << error_of(lying);

    // Encoding refuses what decoding would: an oversized proxy, too many entries, a message over 1 MiB.
    auto big = sample_session();
    big.session_proxy.assign(70000, std::byte{1});
    EXPECT_THROW(net::encode_takeover(big), net::channel_error);
    big = sample_session();
    big.filter_categories.assign(70000, "c");
    EXPECT_THROW(net::encode_takeover(big), net::channel_error);
    big = sample_session();
    big.routes.assign(20, std::vector<std::byte>(60000, std::byte{2}));
    EXPECT_THROW(net::encode_takeover(big), net::channel_error);
}

// ---- version 3: the topic service's messages ---------------------------------------------------

TEST(takeover_message, topic_messages_round_trip) {
    net::takeover_topic_connection publisher;
    publisher.publish_side = true;
    publisher.transport = net::session_transport::ws;
    publisher.idle_ms = 17;
    publisher.pending = bytes_of({'I', 'c', 'e', 'P'});
    const std::vector<net::takeover_message> all{
        net::takeover_topics{bytes_of({1, 2, 3}), false},
        net::takeover_topics{{}, true},
        publisher,
        net::takeover_topic_connection{},
        net::takeover_topics_done{true, 4},
        net::takeover_topics_done{false, 0},
    };
    for (const auto& m : all) EXPECT_EQ(net::decode_takeover(net::encode_takeover(m)), m) << net::takeover_name(m);
    EXPECT_STREQ(net::takeover_name(net::takeover_topic_connection{}), "topic_connection");
    EXPECT_STREQ(net::takeover_name(net::takeover_topics_done{}), "topics_done");
}

TEST(takeover_message, topic_messages_are_as_documented) {
    // Header (version 3, type 12), publish side 1, transport 0 (tcp), idle 5 ms, 1 pending byte.
    net::takeover_topic_connection c{true, net::session_transport::tcp, 5, bytes_of({'I'})};
    EXPECT_EQ(net::encode_takeover(c), bytes_of({'M', 'R', 'T', 'K', 3, 0, 12, 1, 0, 5, 0, 0, 0, 1, 0, 0, 0, 'I'}));
    // Type 11: last 1, the part's length and bytes.
    EXPECT_EQ(net::encode_takeover(net::takeover_topics{bytes_of({7}), true}),
              bytes_of({'M', 'R', 'T', 'K', 3, 0, 11, 1, 1, 0, 0, 0, 7}));
    // Type 13: moved 1, 2 connections.
    EXPECT_EQ(net::encode_takeover(net::takeover_topics_done{true, 2}), bytes_of({'M', 'R', 'T', 'K', 3, 0, 13, 1, 2, 0, 0, 0}));
}

TEST(takeover_message, bad_topic_messages_are_refused) {
    expect_cuts_and_leftovers_refused(net::encode_takeover(net::takeover_topics{bytes_of({1, 2}), true}));
    expect_cuts_and_leftovers_refused(net::encode_takeover(net::takeover_topic_connection{true, net::session_transport::ws, 1, bytes_of({1})}));
    auto flag = net::encode_takeover(net::takeover_topics_done{true, 1});
    flag[7] = std::byte{2};  // "moved" is 0 or 1
    EXPECT_NE(error_of(flag).find("no boolean"), std::string::npos) << error_of(flag);
    std::vector<std::byte> too_large(net::takeover_topics_part_max + 1);
    EXPECT_THROW(net::encode_takeover(net::takeover_topics{too_large, true}), net::channel_error);
}

TEST(takeover_message, send_takeover_sends_one_packet_with_its_descriptors) {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
    net::unique_fd a(sv[0]), b(sv[1]);
    const int passed[] = {a.get()};  // any open descriptor will do: the receiver gets its own
    net::send_takeover(a.get(), net::takeover_hello{"moraine-router 9.9", 4242}, passed);
    auto p = net::receive_packet(b.get(), net::takeover_message_max, 4, std::chrono::milliseconds(1000));
    ASSERT_EQ(p.fds.size(), 1u);
    EXPECT_GE(p.fds[0].get(), 0);
    const auto m = net::decode_takeover(p.bytes);
    ASSERT_TRUE(std::holds_alternative<net::takeover_hello>(m));
    EXPECT_EQ(std::get<net::takeover_hello>(m).program, "moraine-router 9.9");
    EXPECT_EQ(std::get<net::takeover_hello>(m).pid, 4242u);
}
