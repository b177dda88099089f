#pragma once
// The client TLS settings the TLS and wss tests share: trust a CA of test_pki, optionally
// present the test client certificate (its key encrypted), connect within 3 s.
#include <moraine/client/session_client.hpp>
#include <moraine/client/tls_context.hpp>

#include "test_pki.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace moraine::client::test {

/// Client TLS settings trusting `ca`, with the test client certificate if `with_cert`, and
/// `server_name` as the name to verify (empty: the router's host).
inline session_options tls_session_options(std::string ca, bool with_cert = false, std::string server_name = {}) {
    const auto& pki = test_pki::get();
    tls_options o{.ca_file = std::move(ca), .server_name = std::move(server_name)};
    if (with_cert) {
        o.cert_file = pki.client_cert();
        o.key_file = pki.client_key_encrypted();
        o.key_password = test_pki::key_password;
    }
    error_info err;
    session_options so;
    so.tls = tls_context::create(o, err);
    EXPECT_TRUE(so.tls) << err.message();
    so.connect_timeout = std::chrono::seconds(3);
    return so;
}

}  // namespace moraine::client::test
