// error: the client library's error codes. Checked: the category's name and a message for every
// code, interoperability with boost and std error codes, and error_info's failure test and
// "message: detail" text.
#include <moraine/client/error.hpp>

#include <gtest/gtest.h>

#include <set>
#include <system_error>

namespace moraine::client {
namespace {

TEST(error, every_code_has_its_own_message_in_the_moraine_category) {
    EXPECT_STREQ(error_category().name(), "moraine.client");
    std::set<std::string> messages;
    for (int e = static_cast<int>(errc::connection_lost); e <= static_cast<int>(errc::reconnecting); ++e) {
        const auto code = make_error_code(static_cast<errc>(e));
        EXPECT_EQ(&code.category(), &error_category());
        EXPECT_TRUE(code.failed());
        const auto m = code.message();
        EXPECT_NE(m, "unknown moraine.client error") << "code " << e;
        messages.insert(m);
    }
    EXPECT_EQ(messages.size(), static_cast<std::size_t>(errc::reconnecting)) << "distinct messages";
    EXPECT_EQ(make_error_code(errc::timeout).message(), "timed out");
}

TEST(error, codes_compare_as_boost_and_std_error_codes) {
    const boost::system::error_code b = errc::permission_denied;  // is_error_code_enum
    EXPECT_EQ(b, make_error_code(errc::permission_denied));
    EXPECT_NE(b, make_error_code(errc::cannot_create_session));
    const std::error_code s = b;
    EXPECT_EQ(s.value(), static_cast<int>(errc::permission_denied));
    EXPECT_EQ(s.message(), "permission denied");
}

TEST(error, error_info_is_false_on_success_and_joins_its_detail) {
    error_info ok;
    EXPECT_FALSE(ok);
    EXPECT_EQ(ok.message(), "");
    const auto denied = make_error(errc::permission_denied, "bad password");
    EXPECT_TRUE(denied);
    EXPECT_EQ(denied.message(), "permission denied: bad password");
    EXPECT_EQ(make_error(errc::queue_full).message(), "write queue full");
}

}  // namespace
}  // namespace moraine::client
