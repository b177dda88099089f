// tls_context::create: which TLS settings load, and the error each bad one gives.
#include <moraine/client/tls_context.hpp>

#include "test_pki.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace moraine::client {
namespace {

using test::test_pki;

std::shared_ptr<const tls_context> make(const tls_options& o, error_info& err) { return tls_context::create(o, err); }

TEST(tls_context, ca_only) {
    const auto& pki = test_pki::get();
    error_info err;
    auto ctx = make({.ca_file = pki.ca()}, err);
    ASSERT_TRUE(ctx) << err.message();
    EXPECT_FALSE(err);
    EXPECT_EQ(ctx->options().ca_file, pki.ca());
}

TEST(tls_context, default_trust_store_when_no_ca_file) {
    error_info err;
    EXPECT_TRUE(make({}, err)) << err.message();
}

TEST(tls_context, client_certificate_and_key) {
    const auto& pki = test_pki::get();
    error_info err;
    EXPECT_TRUE(make({.ca_file = pki.ca(), .cert_file = pki.client_cert(), .key_file = pki.client_key()}, err))
        << err.message();
}

TEST(tls_context, key_in_the_certificate_file) {
    const auto& pki = test_pki::get();
    const auto both = (pki.dir / "client_and_key.pem").string();
    {
        std::ofstream out(both);
        out << std::ifstream(pki.client_cert()).rdbuf() << std::ifstream(pki.client_key()).rdbuf();
    }
    error_info err;
    EXPECT_TRUE(make({.ca_file = pki.ca(), .cert_file = both}, err)) << err.message();
    // A certificate file without a key, and no key_file: refused.
    EXPECT_FALSE(make({.ca_file = pki.ca(), .cert_file = pki.client_cert()}, err));
    EXPECT_EQ(err.code, errc::bad_tls_config);
    EXPECT_NE(err.detail.find(pki.client_cert()), std::string::npos) << err.detail;
}

TEST(tls_context, encrypted_key_needs_the_right_password) {
    const auto& pki = test_pki::get();
    tls_options o{.ca_file = pki.ca(), .cert_file = pki.client_cert(), .key_file = pki.client_key_encrypted()};
    error_info err;
    o.key_password = test_pki::key_password;
    auto ctx = make(o, err);
    ASSERT_TRUE(ctx) << err.message();
    EXPECT_TRUE(ctx->options().key_password.empty()) << "the password is not kept";
    o.key_password = "wrong";
    EXPECT_FALSE(make(o, err));
    EXPECT_EQ(err.code, errc::bad_tls_config);
    EXPECT_NE(err.detail.find("key file '" + pki.client_key_encrypted() + "'"), std::string::npos) << err.detail;
    o.key_password.clear();  // no password: an error, never a prompt on the terminal
    EXPECT_FALSE(make(o, err));
    EXPECT_EQ(err.code, errc::bad_tls_config);
}

TEST(tls_context, missing_or_unusable_files) {
    const auto& pki = test_pki::get();
    error_info err;
    EXPECT_FALSE(make({.ca_file = "/nonexistent/ca.pem"}, err));
    EXPECT_EQ(err.code, errc::bad_tls_config);
    EXPECT_EQ(err.detail, "CA file '/nonexistent/ca.pem': No such file or directory");
    EXPECT_EQ(err.message(), "bad TLS configuration: CA file '/nonexistent/ca.pem': No such file or directory");

    const auto garbage = (pki.dir / "garbage.pem").string();
    std::ofstream(garbage) << "not a certificate\n";
    EXPECT_FALSE(make({.ca_file = garbage}, err));
    EXPECT_EQ(err.code, errc::bad_tls_config);
    EXPECT_EQ(err.detail.rfind("CA file '" + garbage + "': ", 0), 0u) << err.detail;

    EXPECT_FALSE(make({.ca_file = pki.ca(), .cert_file = "/nonexistent/c.pem", .key_file = pki.client_key()}, err));
    EXPECT_EQ(err.detail, "certificate file '/nonexistent/c.pem': No such file or directory");
    EXPECT_FALSE(make({.ca_file = pki.ca(), .cert_file = pki.client_cert(), .key_file = garbage}, err));
    EXPECT_EQ(err.detail.rfind("key file '" + garbage + "': ", 0), 0u) << err.detail;
}

TEST(tls_context, key_must_match_the_certificate) {
    const auto& pki = test_pki::get();
    error_info err;
    EXPECT_FALSE(make({.ca_file = pki.ca(), .cert_file = pki.client_cert(), .key_file = pki.server_key()}, err));
    EXPECT_EQ(err.code, errc::bad_tls_config);
    EXPECT_NE(err.detail.find(pki.server_key()), std::string::npos) << err.detail;
}

TEST(tls_context, key_without_certificate) {
    const auto& pki = test_pki::get();
    error_info err;
    EXPECT_FALSE(make({.ca_file = pki.ca(), .key_file = pki.client_key()}, err));
    EXPECT_EQ(err.code, errc::bad_tls_config);
    EXPECT_EQ(err.detail, "key_file '" + pki.client_key() + "' given without cert_file");
}

TEST(tls_context, server_name_dns_or_ip) {
    const auto& pki = test_pki::get();
    error_info err;
    for (const char* name : {"127.0.0.1", "::1", "router.example.com", "localhost"}) {
        auto ctx = make({.ca_file = pki.ca(), .server_name = name}, err);
        ASSERT_TRUE(ctx) << name << ": " << err.message();
        EXPECT_EQ(ctx->options().server_name, name);
    }
}

TEST(tls_context, error_messages) {
    EXPECT_EQ(make_error(errc::tls_not_configured).message(), "TLS not configured");
    EXPECT_EQ(make_error(errc::bad_tls_config, "x").message(), "bad TLS configuration: x");
    EXPECT_EQ(make_error(errc::tls_handshake_failed).message(), "TLS handshake failed");
}

}  // namespace
}  // namespace moraine::client
