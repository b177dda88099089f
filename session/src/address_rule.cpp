// Glacier2 address filter rules: `address[:port]` with `*`, `[a,b]` and `[a-b]` in the address
// and a number or `[...]` group as the port.
#include "address_rule.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace moraine::session::detail {
namespace {

// Longer digit runs cannot be a port or an address component; refusing them avoids overflow.
constexpr std::size_t max_digits = 9;

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

// Reads a number at the front of `s` and advances past it.
long take_number(std::string_view& s) {
    std::size_t n = 0;
    while (n < s.size() && is_digit(s[n])) ++n;
    if (n == 0) throw std::invalid_argument("expected number");
    if (n > max_digits) throw std::invalid_argument("number too large");
    long value = 0;
    for (std::size_t i = 0; i < n; ++i) value = value * 10 + (s[i] - '0');
    s.remove_prefix(n);
    return value;
}

// `item(,item)*`, item = `N` or `N-M`.
number_set parse_group(std::string_view s) {
    number_set set;
    while (true) {
        long low = take_number(s);
        long high = low;
        if (!s.empty() && s.front() == '-') {
            s.remove_prefix(1);
            high = take_number(s);
            if (high < low) throw std::invalid_argument("range lower bound is greater than its upper bound");
        }
        set.ranges.emplace_back(low, high);
        if (s.empty()) return set;
        if (s.front() != ',') throw std::invalid_argument(std::string("unexpected character '") + s.front() + "'");
        s.remove_prefix(1);
    }
}

number_set parse_port(std::string_view s) {
    if (!s.empty() && s.front() == '[') {
        std::size_t close = s.find(']');
        if (close == std::string_view::npos) throw std::invalid_argument("unclosed group");
        if (close + 1 != s.size()) throw std::invalid_argument("unexpected text after ']'");
        s = s.substr(1, close - 1);
        if (s.empty()) throw std::invalid_argument("empty group");
    }
    number_set ports = parse_group(s);
    for (auto [low, high] : ports.ranges)
        if (high > 65535) throw std::invalid_argument("port " + std::to_string(high) + " out of range");
    return ports;
}

void push_literal(std::vector<address_piece>& pieces, std::string_view text) {
    if (text.empty()) return;
    pieces.push_back({address_piece::kind::literal, lower(text), {}});
}

// Splits the address into literal runs, wildcards and groups.
std::vector<address_piece> parse_host(std::string_view addr) {
    if (addr.empty()) throw std::invalid_argument("expected an address before ':'");
    std::vector<address_piece> pieces;
    std::size_t mark = 0;
    for (std::size_t i = 0; i < addr.size(); ++i) {
        char c = addr[i];
        if (c == '*') {
            push_literal(pieces, addr.substr(mark, i - mark));
            // `**` means the same as `*`; one piece keeps the matcher's work down.
            if (pieces.empty() || pieces.back().what != address_piece::kind::wildcard)
                pieces.push_back({address_piece::kind::wildcard, {}, {}});
            mark = i + 1;
        } else if (c == '[') {
            push_literal(pieces, addr.substr(mark, i - mark));
            std::size_t close = addr.find(']', i + 1);
            if (close == std::string_view::npos) throw std::invalid_argument("unclosed group");
            std::string_view group = addr.substr(i + 1, close - i - 1);
            if (group.empty()) throw std::invalid_argument("empty group");
            if (group.find('*') != std::string_view::npos)
                throw std::invalid_argument("wildcards not permitted in groups");
            if (group.find('[') != std::string_view::npos) throw std::invalid_argument("unexpected '[' in group");
            pieces.push_back({address_piece::kind::number, {}, parse_group(group)});
            i = close;
            mark = close + 1;
        } else if (c == ']') {
            throw std::invalid_argument("']' without '['");
        }
    }
    push_literal(pieces, addr.substr(mark));
    return pieces;
}

address_rule parse_rule(std::string_view text) {
    address_rule rule;
    std::size_t colon = text.find(':');
    rule.host = parse_host(text.substr(0, colon));
    if (colon != std::string_view::npos) rule.port = parse_port(text.substr(colon + 1));
    return rule;
}

// Backtracking matcher over the pieces, remembering (piece, position) pairs that already failed.
class host_matcher {
public:
    host_matcher(const std::vector<address_piece>& pieces, std::string_view host)
        : pieces_(pieces), host_(host), failed_((pieces.size() + 1) * (host.size() + 1), 0) {}

    bool match(std::size_t piece, std::size_t pos) {
        if (piece == pieces_.size()) return pos == host_.size();
        const std::size_t state = piece * (host_.size() + 1) + pos;
        if (failed_[state]) return false;
        bool ok = match_piece(piece, pos);
        failed_[state] = !ok;
        return ok;
    }

private:
    bool match_piece(std::size_t piece, std::size_t pos) {
        const address_piece& p = pieces_[piece];
        switch (p.what) {
        case address_piece::kind::literal:
            return host_.substr(pos).starts_with(p.text) && match(piece + 1, pos + p.text.size());
        case address_piece::kind::number:
            return match_number(piece, pos);
        case address_piece::kind::wildcard:
            return match_wildcard(piece, pos);
        }
        return false;
    }

    // A group takes the whole digit run at `pos` (so `[1-3]` does not match the "1" of "12").
    bool match_number(std::size_t piece, std::size_t pos) {
        std::size_t end = pos;
        while (end < host_.size() && is_digit(host_[end])) ++end;
        if (end == pos || end - pos > max_digits) return false;
        std::string_view digits = host_.substr(pos, end - pos);
        long value = take_number(digits);
        return pieces_[piece].numbers.contains(value) && match(piece + 1, end);
    }

    bool match_wildcard(std::size_t piece, std::size_t pos) {
        if (piece + 1 == pieces_.size()) return true;  // a trailing `*` takes the rest
        const bool group_next = pieces_[piece + 1].what == address_piece::kind::number;
        for (std::size_t q = pos; q <= host_.size(); ++q) {
            // Before a group, `*` stops only at the start of a digit run, never inside one.
            if (group_next && q > pos && is_digit(host_[q - 1])) continue;
            if (match(piece + 1, q)) return true;
        }
        return false;
    }

    const std::vector<address_piece>& pieces_;
    std::string_view host_;
    std::vector<unsigned char> failed_;  // by (piece, position); not vector<bool>: plain bytes
};

}  // namespace

bool number_set::contains(long value) const noexcept {
    return std::any_of(ranges.begin(), ranges.end(),
                       [value](const auto& r) { return value >= r.first && value <= r.second; });
}

bool address_rule::matches(std::string_view endpoint_host, std::int32_t endpoint_port) const {
    if (endpoint_host.empty()) return false;
    if (port && !port->contains(endpoint_port)) return false;
    std::string h = lower(endpoint_host);
    return host_matcher(host, h).match(0, 0);
}

std::vector<address_rule> parse_address_rules(std::string_view rules) {
    std::vector<address_rule> parsed;
    std::size_t i = 0;
    while (i < rules.size()) {
        while (i < rules.size() && std::isspace(static_cast<unsigned char>(rules[i]))) ++i;
        std::size_t start = i;
        while (i < rules.size() && !std::isspace(static_cast<unsigned char>(rules[i]))) ++i;
        if (i == start) break;
        std::string_view text = rules.substr(start, i - start);
        try {
            parsed.push_back(parse_rule(text));
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument("rule '" + std::string(text) + "': " + e.what());
        }
    }
    return parsed;
}

}  // namespace moraine::session::detail
