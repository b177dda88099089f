#include <moraine/protocol/error.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/user_exception.hpp>

#include "vectors.hpp"

#include <gtest/gtest.h>

namespace moraine::protocol {
namespace {

using test::from_hex;
using test::to_hex;

// The encapsulation of a user-exception reply record.
byte_buffer encaps_of(const test::record& r) {
    const auto b = test::bytes(r);
    return byte_buffer(b.begin() + header_size + 5, b.end());
}

test::record reply_of(std::string_view file) {
    return test::find_record(file, [](auto& r) { return test::is_type(r, "reply") && test::num(r, "replyStatus") == 1; });
}

TEST(user_exception, decode_1_1_sliced_permission_denied) {
    const auto r = reply_of("create-session-denied");
    const auto encaps = encaps_of(r);
    const auto ex = decode_user_exception(encaps);
    ASSERT_TRUE(ex) << ex.error().message();
    const auto& slice = r.at("decoded").at("exception").at("slices").at(0);
    EXPECT_EQ(ex->type_id, std::string_view(slice.at("typeId").as_string()));
    EXPECT_EQ(to_hex(ex->members), std::string_view(slice.at("sliceBodyHex").as_string()));
}

TEST(user_exception, decode_1_1_compact_boom) {
    const auto r = reply_of("user-exception");
    const auto encaps = encaps_of(r);
    const auto ex = decode_user_exception(encaps);
    ASSERT_TRUE(ex);
    EXPECT_EQ(ex->type_id, "::Demo::Boom");
    EXPECT_EQ(to_hex(ex->members), "066b61626f6f6d");
}

TEST(user_exception, decode_1_0_boom) {
    const auto r = reply_of("encoding-1.0");
    const auto encaps = encaps_of(r);
    const auto ex = decode_user_exception(encaps);
    ASSERT_TRUE(ex);
    EXPECT_EQ(ex->type_id, "::Demo::Boom");
    EXPECT_EQ(to_hex(ex->members), "036f6c64");
}

TEST(user_exception, decode_every_captured_exception) {
    for (const auto& name : test::vector_names()) {
        for (const auto& r : test::load_vectors(name)) {
            if (!test::is_type(r, "reply") || test::num(r, "replyStatus") != 1) continue;
            const auto encaps = encaps_of(r);
            const auto ex = decode_user_exception(encaps);
            ASSERT_TRUE(ex) << name;
            EXPECT_EQ(ex->type_id, std::string_view(r.at("decoded").at("exception").at("slices").at(0).at("typeId").as_string()))
                << name;
        }
    }
}

TEST(user_exception, write_reproduces_the_three_captured_layouts) {
    struct row {
        const char* file;
        encoding_version enc;
        const char* type_id;
        const char* members;
        bool sliced;
    };
    const row rows[] = {
        {"create-session-denied", encoding_1_1, "::Glacier2::PermissionDeniedException", "117065726d697373696f6e2064656e696564", true},
        {"user-exception", encoding_1_1, "::Demo::Boom", "066b61626f6f6d", false},
        {"encoding-1.0", encoding_1_0, "::Demo::Boom", "036f6c64", false},
    };
    for (const auto& r : rows) {
        byte_buffer out;
        write_user_exception_encaps(out, r.enc, r.type_id, from_hex(r.members), r.sliced);
        EXPECT_EQ(to_hex(out), to_hex(encaps_of(reply_of(r.file)))) << r.file;
    }
}

TEST(user_exception, cannot_create_session_round_trip) {
    output_stream members;
    members.write_string("session exists");
    byte_buffer out;
    write_user_exception_encaps(out, encoding_1_1, "::Glacier2::CannotCreateSessionException", members.view(), true);
    const auto r = reply_of("second-create-session");
    EXPECT_EQ(to_hex(out), to_hex(encaps_of(r)));
}

TEST(user_exception, errors) {
    EXPECT_EQ(decode_user_exception(from_hex("05000000")).error(), errc::bad_encapsulation);
    EXPECT_EQ(decode_user_exception(from_hex("070000000101")).error(), errc::out_of_bounds);
    // 1.1 sliced, slice size 2 (< 4)
    EXPECT_EQ(decode_user_exception(from_hex("0d000000" "0101" "30" "0161" "02000000")).error(), errc::bad_encapsulation);
    // 1.1 sliced, slice size beyond the encapsulation
    EXPECT_EQ(decode_user_exception(from_hex("0d000000" "0101" "30" "0161" "09000000")).error(), errc::out_of_bounds);
    // 1.0 with a truncated type id
    EXPECT_EQ(decode_user_exception(from_hex("08000000" "0100" "00" "05")).error(), errc::out_of_bounds);
    // empty type id
    EXPECT_EQ(decode_user_exception(from_hex("08000000" "0101" "20" "00")).error(), errc::bad_encapsulation);
}

}  // namespace
}  // namespace moraine::protocol
