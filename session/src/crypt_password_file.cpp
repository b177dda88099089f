// Glacier2.CryptPasswords: parsing the password file and checking passwords with crypt_r(3).
#include <moraine/session/crypt_password_file.hpp>

#include <crypt.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace moraine::session {
namespace {

// SHA-512 hash of a random password that was thrown away. An unknown user's password is checked
// against it so that the answer takes as long as for a real user (no user-name probing by timing).
constexpr const char* dummy_hash =
    "$6$CdX2kDSPOf9hoz7h$Tv/DQSmjig3vNEPgGM653dlQXZ85ygZXhyhwct6qh5PtIgnzBrXAaohY/5XBiqGKAsSjPm7sLAMJitiCzGmRd.";

bool is_blank(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

std::vector<std::string_view> split_fields(std::string_view line) {
    std::vector<std::string_view> fields;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && is_blank(line[i])) ++i;
        std::size_t start = i;
        while (i < line.size() && !is_blank(line[i])) ++i;
        if (i > start) fields.push_back(line.substr(start, i - start));
    }
    return fields;
}

bool is_des_char(char c) noexcept {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '/';
}

// A cheap syntax check at load time, so a mangled hash fails at startup rather than silently
// locking its user out. crypt_checksalt only validates the method prefix, and takes any two
// characters for traditional DES, so a DES hash must also have DES's exact shape.
bool is_usable_hash(std::string_view hash) {
    std::string h(hash);
    int verdict = crypt_checksalt(h.c_str());
    if (verdict != CRYPT_SALT_OK && verdict != CRYPT_SALT_METHOD_LEGACY) return false;
    if (h[0] == '$' || h[0] == '_') return true;
    if (h.size() != 13) return false;
    for (char c : h)
        if (!is_des_char(c)) return false;
    return true;
}

// Compares without an early exit so the time spent does not reveal how long a prefix matched.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

// crypt_r(password, hash) == hash. crypt_data is 32 KiB, hence the heap; it holds
// password-derived state, hence the wipe.
bool crypt_matches(std::string_view password, const std::string& hash) {
    std::string pw(password);
    auto data = std::make_unique<crypt_data>();  // value-initialised: zeroed as crypt_r requires
    const char* out = crypt_r(pw.c_str(), hash.c_str(), data.get());
    // crypt_r returns a "*"-prefixed failure token (or null in some libcs) on a bad setting.
    bool ok = out != nullptr && out[0] != '*' && constant_time_equal(out, hash);
    explicit_bzero(data.get(), sizeof(crypt_data));
    explicit_bzero(pw.data(), pw.size());
    // crypt(3) stops at a NUL: "abc\0x" must not pass as "abc".
    return ok && password.find('\0') == std::string_view::npos;
}

std::runtime_error line_error(std::string_view origin, std::size_t line, const std::string& reason) {
    return std::runtime_error(std::string(origin) + ":" + std::to_string(line) + ": " + reason);
}

}  // namespace

crypt_password_file crypt_password_file::load(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path.string() + ": cannot open: " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw std::runtime_error(path.string() + ": read error");
    return parse(text.str(), path.string());
}

crypt_password_file crypt_password_file::parse(std::string_view text, std::string_view origin) {
    crypt_password_file file;
    std::unordered_map<std::string, std::size_t> first_line;
    std::size_t line_no = 0;
    while (!text.empty()) {
        ++line_no;
        std::size_t eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text = eol == std::string_view::npos ? std::string_view{} : text.substr(eol + 1);

        auto fields = split_fields(line);
        if (fields.empty()) continue;
        if (fields.size() == 1)
            throw line_error(origin, line_no, "missing password hash for user '" + std::string(fields[0]) + "'");
        if (fields.size() > 2)
            throw line_error(origin, line_no,
                             "expected 'userId hash', found " + std::to_string(fields.size()) + " fields");
        std::string user(fields[0]);
        if (!is_usable_hash(fields[1]))
            throw line_error(origin, line_no, "user '" + user + "': not a crypt(3) hash this libcrypt supports");
        // Glacier2 keeps one of the two silently; which password applies must not be a guess.
        if (auto [it, fresh] = first_line.emplace(user, line_no); !fresh)
            throw line_error(origin, line_no,
                             "duplicate user '" + user + "' (first on line " + std::to_string(it->second) + ")");
        file.users_.emplace(std::move(user), std::string(fields[1]));
    }
    return file;
}

bool crypt_password_file::check(std::string_view user, std::string_view password) const {
    auto it = users_.find(std::string(user));
    const bool known = it != users_.end();
    // Always pay for one crypt_r, known user or not.
    const bool matches = crypt_matches(password, known ? it->second : std::string(dummy_hash));
    return known && matches;
}

}  // namespace moraine::session
