#include "nats_reader.hpp"

#include <charconv>
#include <cstring>

namespace moraine::perf {

namespace {

bool starts_with(std::string_view line, std::string_view word) {
    return line.size() >= word.size() && line.substr(0, word.size()) == word;
}

/// The last space-separated token of a MSG line: the payload size (MSG <subject> <sid> [reply] <n>).
bool msg_size(std::string_view line, std::size_t& n) {
    const auto sp = line.rfind(' ');
    if (sp == std::string_view::npos) return false;
    const auto tok = line.substr(sp + 1);
    return std::from_chars(tok.data(), tok.data() + tok.size(), n).ec == std::errc();
}

}  // namespace

char* nats_reader::space() {
    if (buf_.size() - have_ < 4096) buf_.resize(buf_.size() * 2);
    return buf_.data() + have_;
}

std::size_t nats_reader::next(std::size_t at, nats_frame& f, bool& good) const {
    const std::string_view rest(buf_.data() + at, have_ - at);
    const auto eol = rest.find("\r\n");
    if (eol == std::string_view::npos) return 0;
    const auto line = rest.substr(0, eol);
    f.payload = {};
    if (starts_with(line, "MSG ")) {
        std::size_t n = 0;
        if (!msg_size(line, n)) {
            good = false;
            return 0;
        }
        if (rest.size() < eol + 2 + n + 2) return 0;  // the body is not all here yet
        f.what = nats_frame::kind::msg;
        f.payload = rest.substr(eol + 2, n);
        return eol + 2 + n + 2;
    }
    using k = nats_frame::kind;
    f.what = starts_with(line, "PING")   ? k::ping
             : starts_with(line, "PONG") ? k::pong
             : starts_with(line, "+OK")  ? k::ok
             : starts_with(line, "-ERR") ? k::err
             : starts_with(line, "INFO") ? k::info
                                         : k::other;
    if (f.what == k::err) f.payload = line;
    return eol + 2;
}

void nats_reader::compact(std::size_t consumed) noexcept {
    if (consumed == 0) return;
    std::memmove(buf_.data(), buf_.data() + consumed, have_ - consumed);
    have_ -= consumed;
}

}  // namespace moraine::perf
