#pragma once
// Test support: loads the golden vectors in tests/vectors/*.jsonl (real Ice 3.7.8 traffic, see
// tests/vectors/README.md). Boost.JSON's implementation is compiled into vectors_test.cpp.
#include <moraine/protocol/bytes.hpp>

#include <algorithm>
#include <deque>
#include <boost/json.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace moraine::protocol::test {

using record = boost::json::object;

inline std::string vectors_dir() { return std::string(MORAINE_SOURCE_DIR) + "/tests/vectors/"; }

inline byte_buffer from_hex(std::string_view hex) {
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        throw std::invalid_argument("bad hex digit");
    };
    byte_buffer out;
    std::string digits;
    for (char c : hex)
        if (c != ' ') digits += c;
    if (digits.size() % 2) throw std::invalid_argument("odd hex length");
    for (std::size_t i = 0; i < digits.size(); i += 2)
        out.push_back(static_cast<std::byte>(nibble(digits[i]) * 16 + nibble(digits[i + 1])));
    return out;
}

/// Bytes of `hex` that live until the test program exits: for views and streams, which borrow.
inline byte_view lasting_hex(std::string_view hex) {
    static std::deque<byte_buffer> kept;
    return kept.emplace_back(from_hex(hex));
}

inline std::string to_hex(byte_view b) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string s;
    for (std::byte x : b) {
        s += digits[static_cast<unsigned>(x) >> 4];
        s += digits[static_cast<unsigned>(x) & 0xF];
    }
    return s;
}

/// All records of tests/vectors/<name>.jsonl, in file order.
inline std::vector<record> load_vectors(std::string_view name) {
    std::ifstream in(vectors_dir() + std::string(name) + ".jsonl");
    if (!in) throw std::runtime_error("missing vector file " + std::string(name));
    std::vector<record> out;
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) out.push_back(boost::json::parse(line).as_object());
    return out;
}

/// Names (without .jsonl) of every vector file.
inline std::vector<std::string> vector_names() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(vectors_dir()))
        if (e.path().extension() == ".jsonl") names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
    return names;
}

inline std::string str(const record& r, std::string_view key) {
    const auto* v = r.if_contains(key);
    return v && v->is_string() ? std::string(v->as_string()) : std::string();
}
inline std::int64_t num(const record& r, std::string_view key) { return r.at(key).to_number<std::int64_t>(); }
inline bool has(const record& r, std::string_view key) { return r.contains(key); }
inline byte_buffer bytes(const record& r) { return from_hex(str(r, "hex")); }
/// A message record (not a TCP event) of the given type ("request", "reply", ...).
inline bool is_type(const record& r, std::string_view type) { return str(r, "type") == type && has(r, "hex"); }

/// The first record of `name` satisfying `pred`; throws if none.
template <class Pred>
record find_record(std::string_view name, Pred pred) {
    for (auto& r : load_vectors(name))
        if (pred(r)) return r;
    throw std::runtime_error("no matching record in " + std::string(name));
}

/// Encoding string "1.1" → {1,1}.
inline std::pair<int, int> version(const boost::json::value& v) {
    const std::string s(v.as_string());
    return {s[0] - '0', s[2] - '0'};
}

/// "a->b" → "b->a".
inline std::string reversed(std::string_view dir) {
    const auto arrow = dir.find("->");
    return std::string(dir.substr(arrow + 2)) + "->" + std::string(dir.substr(0, arrow));
}

/// A request as the router received it and as it forwarded it (both records in one file).
struct relay {
    record in;
    record out;
};

inline bool same_call(const record& a, const record& b) {
    auto params = [](const record& r) { return std::string(r.at("params").at("payloadHex").as_string()); };
    return a.at("identity") == b.at("identity") && str(a, "operation") == str(b, "operation") && params(a) == params(b);
}

/// Pairs every request the router received (client->router, server->router) with the request it
/// forwarded (router->backend, router->client, peer->topicmanager): same identity, operation
/// and params, later in the file, on another leg.
inline std::vector<relay> request_relays(std::string_view name) {
    const auto records = load_vectors(name);
    std::vector<bool> used(records.size());
    std::vector<relay> out;
    for (std::size_t i = 0; i < records.size(); ++i) {
        const auto& in = records[i];
        if (!is_type(in, "request")) continue;
        const auto dir = str(in, "dir");
        if (dir != "client->router" && dir != "server->router") continue;
        for (std::size_t j = i + 1; j < records.size(); ++j) {
            const auto& o = records[j];
            const auto odir = str(o, "dir");
            if (used[j] || !is_type(o, "request") || str(o, "leg") == str(in, "leg")) continue;
            if (odir != "router->backend" && odir != "router->client" && odir != "peer->topicmanager") continue;
            if (!same_call(in, o)) continue;
            used[j] = true;
            out.push_back({in, o});
            break;
        }
    }
    return out;
}

/// Pairs each reply the router received for a forwarded twoway request with the reply it sent
/// back to the original caller (found through request_relays' request ids).
inline std::vector<relay> reply_relays(std::string_view name) {
    const auto records = load_vectors(name);
    std::vector<relay> out;
    for (const auto& rq : request_relays(name)) {
        if (num(rq.out, "requestId") == 0 || num(rq.in, "requestId") == 0) continue;
        const record* from = nullptr;
        const record* to = nullptr;
        for (const auto& r : records) {
            if (!is_type(r, "reply")) continue;
            if (!from && str(r, "leg") == str(rq.out, "leg") && num(r, "conn") == num(rq.out, "conn") &&
                str(r, "dir") == reversed(str(rq.out, "dir")) && num(r, "requestId") == num(rq.out, "requestId")) {
                from = &r;
            } else if (from && str(r, "leg") == str(rq.in, "leg") && num(r, "conn") == num(rq.in, "conn") &&
                       str(r, "dir") == reversed(str(rq.in, "dir")) && num(r, "requestId") == num(rq.in, "requestId")) {
                to = &r;
                break;
            }
        }
        if (from && to) out.push_back({*from, *to});
    }
    return out;
}

}  // namespace moraine::protocol::test
