#include <moraine/icestorm_bridge/catalog_image.hpp>

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <algorithm>
#include <stdexcept>

namespace moraine::icestorm_bridge {

namespace {

void write_strings(protocol::output_stream& os, const std::vector<std::pair<std::string, std::string>>& entries) {
    os.write_size(static_cast<std::int32_t>(entries.size()));
    for (const auto& [k, v] : entries) {
        os.write_string(k);
        os.write_string(v);
    }
}

/// A sequence count, checked against the bytes left (each entry takes one byte at least), so a
/// corrupt count allocates nothing.
std::size_t read_count(protocol::input_stream& in) {
    const auto n = in.read_size();
    if (!in.ok() || n < 0 || static_cast<std::size_t>(n) > in.remaining())
        throw std::invalid_argument("topic catalog image: bad sequence size");
    return static_cast<std::size_t>(n);
}

}  // namespace

std::vector<std::vector<std::byte>> encode_catalog_image(const stored_catalog& c, std::size_t part_max) {
    protocol::output_stream os(protocol::encoding_1_1);
    os.write_size(static_cast<std::int32_t>(c.topics.size()));
    for (const auto& t : c.topics) os.write_string(t);
    os.write_size(static_cast<std::int32_t>(c.links.size()));
    for (const auto& l : c.links) {
        os.write_string(l.topic);
        os.write_string(l.link.name);
        os.write_int(l.link.cost);
        protocol::write_proxy(os, l.link.topic);
        protocol::write_proxy(os, l.link.link);
    }
    os.write_size(static_cast<std::int32_t>(c.subscribers.size()));
    for (const auto& s : c.subscribers) {
        os.write_string(s.topic);
        os.write_bool(s.session_local);
        protocol::write_proxy(os, s.proxy);
        write_strings(os, s.qos);
    }
    const auto bytes = os.take();
    std::vector<std::vector<std::byte>> parts;
    for (std::size_t at = 0; at < bytes.size() || parts.empty(); at += part_max) {
        const auto end = std::min(bytes.size(), at + part_max);
        parts.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(at), bytes.begin() + static_cast<std::ptrdiff_t>(end));
    }
    return parts;
}

stored_catalog decode_catalog_image(std::span<const std::byte> bytes) {
    protocol::input_stream in(protocol::byte_view(bytes.data(), bytes.size()), protocol::encoding_1_1);
    stored_catalog c;
    c.topics.resize(read_count(in));
    for (auto& t : c.topics) t = std::string(in.read_string());
    c.links.resize(read_count(in));
    for (auto& l : c.links) {
        l.topic = std::string(in.read_string());
        l.link.name = std::string(in.read_string());
        l.link.cost = in.read_int();
        l.link.topic = protocol::read_proxy(in);
        l.link.link = protocol::read_proxy(in);
        if (!in.ok()) break;
    }
    c.subscribers.resize(in.ok() ? read_count(in) : 0);
    for (auto& s : c.subscribers) {
        s.topic = std::string(in.read_string());
        s.session_local = in.read_bool();
        s.proxy = protocol::read_proxy(in);
        s.qos.resize(read_count(in));
        for (auto& [k, v] : s.qos) {
            k = std::string(in.read_string());
            v = std::string(in.read_string());
        }
        if (!in.ok()) break;
    }
    if (!in.ok()) throw std::invalid_argument("topic catalog image: truncated or malformed");
    if (in.remaining() != 0) throw std::invalid_argument("topic catalog image: bytes after its end");
    return c;
}

}  // namespace moraine::icestorm_bridge
