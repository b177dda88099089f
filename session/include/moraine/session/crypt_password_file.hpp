#pragma once
// Glacier2.CryptPasswords: a file of `userId hash` lines checked with crypt(3) (docs/glacier2.md §7).
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>

namespace moraine::session {

/// The users and crypt(3) hashes of a Glacier2 password file. Immutable after load; safe to
/// share between threads.
class crypt_password_file {
public:
    /// Reads `path`: whitespace-separated `userId hash` per line, blank lines skipped.
    /// @throws std::runtime_error "FILE:LINE: reason" for any other line or an unreadable file.
    static crypt_password_file load(const std::filesystem::path& path);

    /// Parses the same format from memory (`origin` names it in errors).
    static crypt_password_file parse(std::string_view text, std::string_view origin);

    /// True if `user` exists and crypt_r(password, hash) equals the hash (SHA-512, SHA-256,
    /// yescrypt, MD5 or DES, whatever libcrypt accepts). Unknown users are checked against a dummy
    /// hash so timing does not reveal them. Slow by design (ms): never call on an I/O thread.
    bool check(std::string_view user, std::string_view password) const;

    std::size_t size() const noexcept { return users_.size(); }

private:
    std::unordered_map<std::string, std::string> users_;
};

}  // namespace moraine::session
