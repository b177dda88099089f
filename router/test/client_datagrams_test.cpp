// client_datagrams: a session's `_fwd=d` / `_fwd=D` requests, sent to a udp socket on loopback.
// Checked: a datagram request leaves as one datagram with request id 0 (a twoway answered OK),
// buffered `_fwd=D` oneways leave as one batch datagram, and a back end without a udp endpoint
// loses the request (counted) with glacier2router's answers: NoEndpointException naming the
// proxy with `-d` when unbuffered, OK when buffered (docs/glacier2.md "udp").
#include "glacier2_harness.hpp"

#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/request.hpp>
#include <moraine/net/asio.hpp>

#include <gtest/gtest.h>

#include <array>
#include <vector>

using namespace moraine;

namespace {

/// A back end's udp endpoint on loopback, read without blocking.
class udp_receiver {
public:
    udp_receiver() : socket_(io_, udp::endpoint(net::asio::ip::make_address("127.0.0.1"), 0)) {
        socket_.non_blocking(true);
    }
    std::string endpoint() const { return "udp -h 127.0.0.1 -p " + std::to_string(socket_.local_endpoint().port()); }
    /// Reads every datagram waiting into `datagrams`.
    void pump() {
        std::array<std::byte, 65536> buf;
        for (;;) {
            boost::system::error_code ec;
            const auto n = socket_.receive(net::asio::buffer(buf), 0, ec);
            if (ec) return;
            datagrams.emplace_back(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n));
        }
    }
    std::vector<protocol::byte_buffer> datagrams;

private:
    using udp = net::asio::ip::udp;
    net::asio::io_context io_;
    udp::socket socket_;
};

using ctx = std::vector<std::pair<std::string, std::string>>;

protocol::byte_buffer note(std::int32_t id, const ctx& context) {
    return test::request_message(id, {"hello", ""}, "note",
                                 test::encaps([](protocol::output_stream& os) { os.write_string("n"); }), 0, {},
                                 context);
}

/// A client with a session whose routing table holds `hello:<endpoints>`.
test::glacier2_client& session_to(test::glacier2& g, const std::string& endpoints) {
    auto& c = g.connect();
    EXPECT_FALSE(g.create_session(c).empty());
    EXPECT_EQ(test::reply_of(g.add_proxy(c, "hello:" + endpoints)).status, protocol::reply_status::ok);
    return c;
}

void wait_for_datagrams(test::glacier2& g, udp_receiver& back, std::size_t n) {
    EXPECT_TRUE(test::run_until(g.shards(), [&] {
        back.pump();
        return back.datagrams.size() >= n;
    })) << back.datagrams.size() << " of " << n << " datagrams";
}

}  // namespace

TEST(client_datagrams, a_fwd_d_oneway_leaves_as_one_datagram_with_request_id_0) {
    test::glacier2 g;
    udp_receiver back;
    auto& c = session_to(g, back.endpoint());
    c.peer().send(note(0, {{"_fwd", "d"}}));
    wait_for_datagrams(g, back, 1);
    ASSERT_EQ(back.datagrams.size(), 1u);
    const auto r = test::request_of(back.datagrams[0]);
    EXPECT_EQ(r.request_id, 0);
    EXPECT_EQ(r.operation, "note");
    EXPECT_EQ(r.id.name, "hello");
    EXPECT_FALSE(r.context.find("_fwd")) << "context dropped (ForwardContext=0), _fwd included";
    EXPECT_EQ(g.local().metrics().requests_forwarded, 1u);
    EXPECT_EQ(g.local().metrics().datagram_requests_lost, 0u);
}

TEST(client_datagrams, a_fwd_d_twoway_is_answered_ok_and_sent_as_a_datagram) {
    test::glacier2 g;
    udp_receiver back;
    auto& c = session_to(g, back.endpoint());
    const auto reply = g.exchange(c, note(9, {{"_fwd", "d"}}));
    ASSERT_FALSE(reply.empty());
    EXPECT_EQ(test::reply_of(reply).request_id, 9);
    EXPECT_EQ(test::reply_of(reply).status, protocol::reply_status::ok);
    wait_for_datagrams(g, back, 1);
    EXPECT_EQ(test::request_of(back.datagrams.at(0)).request_id, 0);
}

TEST(client_datagrams, buffered_fwd_D_oneways_leave_as_one_batch_datagram) {
    test::glacier2 g([](router::config& cfg) { cfg.client_buffered = true; });
    udp_receiver back;
    auto& c = session_to(g, back.endpoint());
    for (int i = 0; i < 3; ++i) c.peer().send(note(0, {{"_fwd", "D"}}));
    wait_for_datagrams(g, back, 1);
    test::settle(g.shards());
    back.pump();
    ASSERT_EQ(back.datagrams.size(), 1u) << "one flush, one proxy: one batch";
    EXPECT_EQ(test::header_of(back.datagrams[0]).type, protocol::message_type::batch_request);
    protocol::batch_reader batch(protocol::byte_view(back.datagrams[0]).subspan(protocol::header_size));
    EXPECT_EQ(batch.count(), 3);
    EXPECT_EQ(g.local().metrics().requests_forwarded, 3u);
}

TEST(client_datagrams, unbuffered_fwd_D_is_a_plain_datagram) {
    test::glacier2 g;
    udp_receiver back;
    auto& c = session_to(g, back.endpoint());
    c.peer().send(note(0, {{"_fwd", "D"}}));
    wait_for_datagrams(g, back, 1);
    EXPECT_EQ(test::header_of(back.datagrams.at(0)).type, protocol::message_type::request);
}

TEST(client_datagrams, unbuffered_without_udp_a_twoway_gets_no_endpoint_and_the_request_is_lost) {
    test::glacier2 g;
    test::loopback_backend stream_only;
    auto& c = session_to(g, stream_only.endpoint());
    const auto reply = g.exchange(c, note(4, {{"_fwd", "d"}}));
    ASSERT_FALSE(reply.empty());
    const auto r = test::reply_of(reply);
    ASSERT_EQ(r.status, protocol::reply_status::unknown_local_exception);
    const std::string text(protocol::decode_unknown_text(r.payload).value());
    EXPECT_NE(text.find("::Ice::NoEndpointException"), std::string::npos) << text;
    EXPECT_NE(text.find("`hello -d"), std::string::npos) << "the proxy as Glacier2 invoked it: " << text;
    c.peer().send(note(0, {{"_fwd", "d"}}));  // a oneway: nothing to answer
    ASSERT_TRUE(test::run_until(g.shards(), [&] { return g.local().metrics().datagram_requests_lost == 2; }));
    stream_only.pump();
    EXPECT_TRUE(stream_only.requests.empty()) << "nothing goes over tcp instead";
    EXPECT_FALSE(c.conn->closed());
}

TEST(client_datagrams, buffered_without_udp_a_twoway_is_answered_ok_and_the_request_lost) {
    test::glacier2 g([](router::config& cfg) { cfg.client_buffered = true; });
    test::loopback_backend stream_only;
    auto& c = session_to(g, stream_only.endpoint());
    const auto reply = g.exchange(c, note(4, {{"_fwd", "d"}}));
    ASSERT_FALSE(reply.empty());
    EXPECT_EQ(test::reply_of(reply).status, protocol::reply_status::ok);
    EXPECT_EQ(g.local().metrics().datagram_requests_lost, 1u);
    EXPECT_EQ(g.local().metrics().requests_forwarded, 0u);
}
