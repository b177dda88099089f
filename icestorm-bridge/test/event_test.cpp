#include <moraine/icestorm_bridge/event.hpp>

#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <gtest/gtest.h>

using namespace moraine;

namespace {

/// A publisher's oneway `tick("12:00:00")` to IceStorm/clock.publish with context {cost: 3}.
protocol::byte_buffer publish_request() {
    protocol::output_stream os;
    os.start_message(protocol::message_type::request);
    os.write_int(0);
    os.write_identity({"clock.publish", "IceStorm"});
    os.write_facet("");
    os.write_string("tick");
    os.write_byte(0);
    os.write_context({{"cost", "3"}});
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    os.write_string("12:00:00");
    os.end_encapsulation(start);
    os.end_message();
    return os.take();
}

protocol::byte_buffer joined(const net::outbound_frame& f) {
    protocol::byte_buffer all = f.head;
    if (f.tail) all.insert(all.end(), f.tail->begin(), f.tail->end());
    return all;
}

}  // namespace

TEST(event, frame_for_a_subscriber_keeps_operation_mode_params_and_optionally_the_context) {
    const auto message = publish_request();
    auto r = protocol::decode_request(protocol::byte_view(message).subspan(protocol::header_size));
    ASSERT_TRUE(r);
    auto ev = icestorm_bridge::make_event("clock", *r);
    EXPECT_EQ(ev->cost, 3);
    const protocol::identity subscriber{"clock-oneway", "!U*en}CTFygZy\\P65tQZ"};
    const auto target = icestorm_bridge::encode_target(subscriber, "");

    for (bool with_context : {true, false}) {
        const auto bytes = joined(icestorm_bridge::frame_for(*ev, target, with_context));
        boost::system::error_code ec;
        auto frame = protocol::parse_frame(bytes, protocol::limits{}, ec);
        ASSERT_TRUE(frame) << ec.message();
        ASSERT_EQ(frame->size(), bytes.size());
        auto d = protocol::decode_request(frame->body());
        ASSERT_TRUE(d);
        EXPECT_EQ(d->request_id, 0);
        EXPECT_EQ(d->id, subscriber.view());
        EXPECT_EQ(d->operation, "tick");
        EXPECT_EQ(d->mode, 0);
        EXPECT_EQ(d->context.empty(), !with_context);
        EXPECT_TRUE(std::equal(d->params.bytes.begin(), d->params.bytes.end(), r->params.bytes.begin(),
                               r->params.bytes.end()));  // params byte for byte
    }
}

TEST(event, large_params_are_one_buffer_shared_by_every_frame) {
    const protocol::byte_buffer params(icestorm_bridge::inline_params_max + 1, std::byte{7});
    auto ev = icestorm_bridge::make_event("clock", "tick", 0, params, {}, 0);
    auto a = icestorm_bridge::frame_for(*ev, icestorm_bridge::encode_target({"a", "c1"}, ""), false);
    auto b = icestorm_bridge::frame_for(*ev, icestorm_bridge::encode_target({"b", "c2"}, "facet"), false);
    ASSERT_TRUE(a.tail);
    EXPECT_EQ(a.tail.get(), b.tail.get());
    EXPECT_NE(a.head, b.head);
    EXPECT_EQ(a.size(), a.head.size() + params.size());
}

TEST(event, small_params_are_copied_into_each_frame_head) {
    for (std::size_t n : {std::size_t{6}, icestorm_bridge::inline_params_max}) {
        const protocol::byte_buffer params(n, std::byte{7});
        auto ev = icestorm_bridge::make_event("clock", "tick", 0, params, {}, 0);
        const auto target = icestorm_bridge::encode_target({"a", "c1"}, "");
        auto f = icestorm_bridge::frame_for(*ev, target, false);
        EXPECT_FALSE(f.tail);  // no shared buffer, so no reference count touched per delivery
        ASSERT_GE(f.head.size(), n);
        EXPECT_TRUE(std::equal(f.head.end() - static_cast<std::ptrdiff_t>(n), f.head.end(), params.begin()));
        boost::system::error_code ec;
        auto frame = protocol::parse_frame(f.head, protocol::limits{}, ec);
        ASSERT_TRUE(frame) << ec.message();
        EXPECT_EQ(frame->size(), f.head.size());
    }
}

TEST(event, cost_is_zero_when_absent_or_not_a_number) {
    protocol::context_view none;
    EXPECT_EQ(icestorm_bridge::event_cost(none), 0);
    protocol::context_view junk;
    junk.entries.emplace_back("cost", "lots");
    EXPECT_EQ(icestorm_bridge::event_cost(junk), 0);
}
