// The `_con.*` entries of Glacier2.AddConnectionContext and the context of createSession*'s
// verifier and session manager calls.
#include <moraine/router/connection_context.hpp>

#include <gtest/gtest.h>

namespace moraine::router {
namespace {

using protocol::context;

connection_facts tcp_facts() {
    connection_facts f;
    f.type = "tcp";
    f.local_address = "127.0.0.1";
    f.local_port = 4063;
    f.remote_address = "10.0.0.7";
    f.remote_port = 51234;
    return f;
}

protocol::context_view view(const std::vector<std::pair<std::string_view, std::string_view>>& entries) {
    protocol::context_view v;
    v.entries = entries;
    return v;
}

TEST(ConnectionContext, TcpHasTypeAddressesAndPortsOnly) {
    EXPECT_EQ(make_connection_context(tcp_facts()), (context{{"_con.localAddress", "127.0.0.1"},
                                                             {"_con.localPort", "4063"},
                                                             {"_con.remoteAddress", "10.0.0.7"},
                                                             {"_con.remotePort", "51234"},
                                                             {"_con.type", "tcp"}}));
}

TEST(ConnectionContext, SslAddsCipherAndCertificate) {
    auto f = tcp_facts();
    f.type = "ssl";
    f.cipher = "TLS_AES_256_GCM_SHA384";
    f.peer_cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    const auto ctx = make_connection_context(f);
    ASSERT_EQ(ctx.size(), 7u);
    EXPECT_EQ(ctx[0], (std::pair<std::string, std::string>{"_con.cipher", "TLS_AES_256_GCM_SHA384"}));
    EXPECT_EQ(ctx[3], (std::pair<std::string, std::string>{"_con.peerCert", f.peer_cert}));
    EXPECT_EQ(ctx[6], (std::pair<std::string, std::string>{"_con.type", "ssl"}));
}

TEST(ConnectionContext, SslWithoutClientCertificateHasNoPeerCert) {
    auto f = tcp_facts();
    f.type = "ssl";
    f.cipher = "ECDHE-RSA-AES128-GCM-SHA256";
    const auto ctx = make_connection_context(f);
    ASSERT_EQ(ctx.size(), 6u);
    for (const auto& [k, v] : ctx) EXPECT_NE(k, "_con.peerCert");
}

TEST(ConnectionContext, IPv6AddressesHaveNoBrackets) {
    auto f = tcp_facts();
    f.local_address = "::1";
    f.remote_address = "::1";
    const auto ctx = make_connection_context(f);
    EXPECT_EQ(ctx[0].second, "::1");
    EXPECT_EQ(ctx[2].second, "::1");
}

TEST(ConnectionContext, ReservedKeysAreExactlyTheSeven) {
    for (const char* k : {"_con.type", "_con.localAddress", "_con.localPort", "_con.remoteAddress", "_con.remotePort",
                          "_con.cipher", "_con.peerCert"})
        EXPECT_TRUE(is_connection_context_key(k)) << k;
    for (const char* k : {"_con", "_con.", "_con.foo", "_conx", "_con.Type", "con.type", ""})
        EXPECT_FALSE(is_connection_context_key(k)) << k;
}

TEST(SessionCallContext, ZeroPassesTheClientsEntriesWithoutReservedKeys) {
    const auto con = make_connection_context(tcp_facts());
    const auto client = view({{"k", "v"}, {"_con.remoteAddress", "6.6.6.6"}, {"_con.foo", "x"}, {"_con.peerCert", "p"}});
    EXPECT_EQ(session_call_context(client, 0, con), (context{{"k", "v"}, {"_con.foo", "x"}}));
}

TEST(SessionCallContext, OneAndTwoAddTheConnectionEntries) {
    const auto con = make_connection_context(tcp_facts());
    const auto client = view({{"k", "v"}, {"_con.remoteAddress", "6.6.6.6"}});
    for (int add : {1, 2}) {
        context expected{{"k", "v"}};
        expected.insert(expected.end(), con.begin(), con.end());
        EXPECT_EQ(session_call_context(client, add, con), expected) << add;
    }
}

TEST(SessionCallContext, EmptyClientContext) {
    const auto con = make_connection_context(tcp_facts());
    EXPECT_TRUE(session_call_context(view({}), 0, con).empty());
    EXPECT_EQ(session_call_context(view({}), 2, con), con);
}

}  // namespace
}  // namespace moraine::router
