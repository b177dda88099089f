#pragma once
// A fake Ice peer for the locator registry tests (admin_registration_test.cpp,
// adapter_registration_test.cpp): records each call an invoke_fn makes and answers it when the
// test says so, as IceGrid's locator and registry would.
#include <moraine/net/locator_registry_call.hpp>

#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/reply.hpp>
#include <moraine/protocol/user_exception.hpp>

#include <gtest/gtest.h>

#include <deque>
#include <optional>
#include <functional>
#include <string>
#include <string_view>

namespace net = moraine::net;
namespace protocol = moraine::protocol;

namespace fake_registry {

inline protocol::proxy direct(std::string category, std::string name, int port) {
    protocol::proxy p;
    p.id = {std::move(name), std::move(category)};
    protocol::endpoint e;
    e.host = "127.0.0.1";
    e.port = port;
    p.endpoints = {e};
    return p;
}

/// IceGrid's locator and its registry, as the fakes answer for them.
inline const protocol::proxy locator = direct("IceGrid", "Locator", 4061);
inline const protocol::proxy registry = direct("IceGrid", "LocatorRegistry", 4062);

/// The results encapsulation of an OK reply returning `p`.
inline protocol::byte_buffer proxy_payload(const protocol::proxy& p) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    protocol::write_proxy(os, p);
    os.end_encapsulation(start);
    return os.take();
}

/// The payload of a user-exception reply: exception `type_id`'s encapsulation, no members.
inline protocol::byte_buffer user_exception_payload(std::string_view type_id) {
    protocol::byte_buffer ex;
    protocol::write_user_exception_encaps(ex, protocol::encoding_1_1, type_id, {}, false);
    return ex;
}

inline protocol::byte_buffer void_payload() {
    protocol::output_stream os;
    os.write_empty_encapsulation(protocol::encoding_1_1);
    return os.take();
}

/// Records the calls and answers them when the test says so.
struct fake_ice {
    struct call {
        protocol::proxy target;
        std::string operation;
        std::uint8_t mode;
        protocol::byte_buffer params;
        net::reply_handler done;
    };
    std::deque<call> calls;

    net::invoke_fn fn() {
        return [this](const protocol::proxy& target, std::string_view op, std::uint8_t mode,
                      protocol::byte_buffer params, net::reply_handler done) {
            calls.push_back({target, std::string(op), mode, std::move(params), std::move(done)});
        };
    }
    void answer(protocol::reply_status status, const protocol::byte_buffer& payload) {
        auto c = std::move(calls.front());
        calls.pop_front();
        protocol::reply_view r{1, status, payload};
        c.done(&r, {});
    }
    void fail(std::string_view why) {
        auto c = std::move(calls.front());
        calls.pop_front();
        c.done(nullptr, why);
    }
};

struct outcome {
    std::optional<bool> ok;
    std::string why;
    std::function<void(bool, std::string)> handler() {
        return [this](bool o, std::string w) {
            EXPECT_FALSE(ok) << "done ran twice";
            ok = o;
            why = std::move(w);
        };
    }
};

}  // namespace fake_registry
