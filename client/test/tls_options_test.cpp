// tls_options: what an empty field means, and that any subset of fields can be named (the
// header promises `tls_options{.ca_file = ...}` under -Wextra, and this file builds with -Werror).
#include <moraine/client/tls_options.hpp>

#include <moraine/client/tls_context.hpp>

#include "test_pki.hpp"

#include <gtest/gtest.h>

namespace moraine::client {
namespace {

using test::test_pki;

TEST(tls_options, every_field_starts_empty) {
    const tls_options o;
    EXPECT_TRUE(o.ca_file.empty());
    EXPECT_TRUE(o.cert_file.empty());
    EXPECT_TRUE(o.key_file.empty());
    EXPECT_TRUE(o.key_password.empty());
    EXPECT_TRUE(o.server_name.empty());
}

TEST(tls_options, any_subset_of_fields_can_be_named) {
    const tls_options only_name{.server_name = "router.example.com"};
    EXPECT_EQ(only_name.server_name, "router.example.com");
    EXPECT_TRUE(only_name.ca_file.empty());
    const tls_options cert_and_key{.cert_file = "c.pem", .key_file = "k.pem"};
    EXPECT_EQ(cert_and_key.cert_file, "c.pem");
    EXPECT_EQ(cert_and_key.key_file, "k.pem");
    EXPECT_TRUE(cert_and_key.key_password.empty());
}

TEST(tls_options, empty_fields_mean_the_documented_defaults) {
    // Empty ca_file: the system's trust store; empty cert_file: no client certificate; empty
    // server_name: only the chain is checked. Each loads into a context as such.
    const auto& pki = test_pki::get();
    error_info err;
    auto none = tls_context::create(tls_options{}, err);
    ASSERT_TRUE(none) << err.message();
    EXPECT_TRUE(none->options().server_name.empty());
    auto ca_only = tls_context::create(tls_options{.ca_file = pki.ca()}, err);
    ASSERT_TRUE(ca_only) << err.message();
    EXPECT_EQ(ca_only->options().ca_file, pki.ca());
    EXPECT_TRUE(ca_only->options().cert_file.empty());
}

}  // namespace
}  // namespace moraine::client
