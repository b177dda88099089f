#include <moraine/session/crypt_password_file.hpp>

#include <gtest/gtest.h>

#include <crypt.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

using moraine::session::crypt_password_file;

// A fresh hash of `password` with the method `prefix` ("$6$", "$5$", "$y$", "$1$"), made by
// libcrypt itself so the test does not depend on fixed strings.
std::string make_hash(const char* prefix, const char* password) {
    char setting[CRYPT_GENSALT_OUTPUT_SIZE];
    if (crypt_gensalt_rn(prefix, 0, nullptr, 0, setting, sizeof setting) == nullptr)
        throw std::runtime_error(std::string("crypt_gensalt_rn failed for ") + prefix);
    auto data = std::make_unique<crypt_data>();
    const char* out = crypt_r(password, setting, data.get());
    if (out == nullptr || out[0] == '*') throw std::runtime_error(std::string("crypt_r failed for ") + prefix);
    return out;
}

std::string error_of(std::string_view text) {
    try {
        crypt_password_file::parse(text, "pw.txt");
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "no error";
}

class crypt_methods : public ::testing::TestWithParam<const char*> {};

TEST_P(crypt_methods, accepts_right_password_only) {
    auto file = crypt_password_file::parse("alice " + make_hash(GetParam(), "secret") + "\n", "pw.txt");
    EXPECT_EQ(file.size(), 1u);
    EXPECT_TRUE(file.check("alice", "secret"));
    EXPECT_FALSE(file.check("alice", "Secret"));
    EXPECT_FALSE(file.check("alice", ""));
    EXPECT_FALSE(file.check("alice", "secret "));
}

INSTANTIATE_TEST_SUITE_P(all, crypt_methods, ::testing::Values("$6$", "$5$", "$y$", "$1$"),
                         [](const auto& info) {
                             std::string p = info.param;
                             return p == "$6$" ? "sha512" : p == "$5$" ? "sha256" : p == "$y$" ? "yescrypt" : "md5";
                         });

TEST(crypt_password_file, traditional_des) {
    auto file = crypt_password_file::parse("bob " + make_hash("", "pw") + "\n", "pw.txt");
    EXPECT_TRUE(file.check("bob", "pw"));
    EXPECT_FALSE(file.check("bob", "px"));
}

TEST(crypt_password_file, unknown_user_is_refused) {
    auto file = crypt_password_file::parse("alice " + make_hash("$6$", "secret"), "pw.txt");
    EXPECT_FALSE(file.check("mallory", "secret"));
    EXPECT_FALSE(file.check("", ""));
    EXPECT_FALSE(file.check("Alice", "secret"));  // user ids are case-sensitive
}

TEST(crypt_password_file, password_with_nul_is_refused) {
    auto file = crypt_password_file::parse("alice " + make_hash("$6$", "abc"), "pw.txt");
    EXPECT_TRUE(file.check("alice", "abc"));
    EXPECT_FALSE(file.check("alice", std::string_view("abc\0def", 7)));
}

TEST(crypt_password_file, whitespace_blank_lines_and_crlf) {
    std::string text = "\n   \n\talice\t " + make_hash("$6$", "a") + "  \r\n\r\nbob " + make_hash("$5$", "b") +
                       "\r\n  \n";
    auto file = crypt_password_file::parse(text, "pw.txt");
    EXPECT_EQ(file.size(), 2u);
    EXPECT_TRUE(file.check("alice", "a"));
    EXPECT_TRUE(file.check("bob", "b"));
}

TEST(crypt_password_file, empty_file_has_no_users) {
    EXPECT_EQ(crypt_password_file::parse("", "pw.txt").size(), 0u);
    EXPECT_EQ(crypt_password_file::parse("\n\n  \n", "pw.txt").size(), 0u);
}

TEST(crypt_password_file, bad_lines_name_file_and_line) {
    std::string good = "alice " + make_hash("$6$", "a") + "\n";
    EXPECT_EQ(error_of(good + "\nbob\n"), "pw.txt:3: missing password hash for user 'bob'");
    EXPECT_EQ(error_of("bob $1$x$y extra\n"), "pw.txt:1: expected 'userId hash', found 3 fields");
    EXPECT_EQ(error_of(good + "carol $zz$abc\n"),
              "pw.txt:2: user 'carol': not a crypt(3) hash this libcrypt supports");
    EXPECT_EQ(error_of("dave toolong-for-des\n"), "pw.txt:1: user 'dave': not a crypt(3) hash this libcrypt supports");
    EXPECT_EQ(error_of("erin ab!defghijklm\n"), "pw.txt:1: user 'erin': not a crypt(3) hash this libcrypt supports");
    EXPECT_EQ(error_of(good + good), "pw.txt:2: duplicate user 'alice' (first on line 1)");
}

TEST(crypt_password_file, load_reads_a_file) {
    auto path = std::filesystem::temp_directory_path() / ("moraine_pw_" + std::to_string(::getpid()));
    {
        std::ofstream out(path);
        out << "alice " << make_hash("$6$", "secret") << "\n";
    }
    auto file = crypt_password_file::load(path);
    EXPECT_TRUE(file.check("alice", "secret"));
    {
        std::ofstream out(path);
        out << "\nbroken\n";
    }
    try {
        crypt_password_file::load(path);
        ADD_FAILURE() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), path.string() + ":2: missing password hash for user 'broken'");
    }
    std::filesystem::remove(path);
}

TEST(crypt_password_file, load_missing_file_names_it) {
    try {
        crypt_password_file::load("/nonexistent/moraine/passwords");
        ADD_FAILURE() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/moraine/passwords: cannot open", 0), 0u) << e.what();
    }
}

}  // namespace
