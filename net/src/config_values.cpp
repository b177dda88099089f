// Value parsers shared by every configuration reader (see config_values.hpp).
#include <moraine/net/config_values.hpp>

#include <cctype>

namespace moraine::net {

std::string where(const std::string& file, std::size_t line) {
    return line == 0 ? file : file + ":" + std::to_string(line);
}

std::vector<protocol::endpoint> parse_endpoints(std::string_view value, const std::string& at, const std::string& key,
                                                std::string_view default_host) {
    bool blank = true;
    for (char c : value) blank = blank && std::isspace(static_cast<unsigned char>(c));
    if (blank) return {};
    auto endpoints = protocol::endpoints_from_string(value, default_host);
    if (!endpoints || endpoints->empty())
        throw config_error(at, key, "not a valid Ice endpoint list: '" + std::string(value) + "'");
    return *endpoints;
}

protocol::proxy parse_proxy(std::string_view value, const std::string& at, const std::string& key,
                            std::string_view default_host) {
    auto p = protocol::proxy_from_string(value, default_host);
    if (!p || p->is_nil()) throw config_error(at, key, "not a valid proxy: '" + std::string(value) + "'");
    return *p;
}

std::vector<std::string> split_words(std::string_view value, const std::string& at, const std::string& key) {
    std::vector<std::string> words;
    std::size_t i = 0;
    while (i < value.size()) {
        if (std::isspace(static_cast<unsigned char>(value[i]))) {
            ++i;
            continue;
        }
        std::string word;
        while (i < value.size() && !std::isspace(static_cast<unsigned char>(value[i]))) {
            char c = value[i++];
            if (c != '"' && c != '\'') {
                word += c;
                continue;
            }
            // Inside quotes, a backslash before the quote character stands for it (`"a\"b"` is
            // a"b), as Glacier2's tokenizer reads its filter lists.
            bool closed = false;
            while (i < value.size()) {
                const char q = value[i++];
                if (q == '\\' && i < value.size() && value[i] == c) {
                    word += value[i++];
                } else if (q == c) {
                    closed = true;
                    break;
                } else {
                    word += q;
                }
            }
            if (!closed) throw config_error(at, key, std::string("unmatched ") + c);
        }
        words.push_back(std::move(word));
    }
    return words;
}

}  // namespace moraine::net
