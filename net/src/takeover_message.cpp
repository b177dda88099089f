#include <moraine/net/takeover_message.hpp>

#include <cstring>

namespace moraine::net {

namespace {

constexpr std::byte magic[4] = {std::byte{'M'}, std::byte{'R'}, std::byte{'T'}, std::byte{'K'}};
constexpr std::size_t string_max = 4096;       // an endpoint, a program name or a reason
constexpr std::uint32_t sockets_max = 65536;   // endpoints x shards, with room to spare
constexpr std::size_t blob_max = 65536;        // an encoded proxy (a routing table entry, a session proxy)
constexpr std::uint32_t list_max = 65536;      // routes, filter entries, context entries
constexpr std::size_t pending_max = takeover_message_max / 2;  // a partial Ice message carried along
constexpr std::size_t topics_part_max = takeover_topics_part_max;

// The message types on the wire; fixed forever (docs/takeover.md).
enum class wire_type : std::uint8_t {
    hello = 1, listeners = 2, descriptors = 3, accept = 4, refuse = 5, released = 6,
    session = 7, session_taken = 8, session_refused = 9, sessions_done = 10,
    topics = 11, topic_connection = 12, topics_done = 13,
};

/// Appends little-endian integers and length-prefixed strings.
class writer {
public:
    void u8(std::uint8_t v) { out_.push_back(std::byte{v}); }
    void u16(std::uint16_t v) {
        for (int i = 0; i < 2; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
    }
    void u32(std::uint32_t v) {
        for (int i = 0; i < 4; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
    }
    void str(const std::string& s) {
        const auto n = std::min(s.size(), string_max);  // a longer reason is cut, never refused
        u32(static_cast<std::uint32_t>(n));
        for (std::size_t i = 0; i < n; ++i) u8(static_cast<std::uint8_t>(s[i]));
    }
    void blob(const std::vector<std::byte>& b, std::size_t max, const char* what) {
        if (b.size() > max) throw channel_error(std::string(what) + ": " + std::to_string(b.size()) + " bytes, more than allowed");
        u32(static_cast<std::uint32_t>(b.size()));
        out_.insert(out_.end(), b.begin(), b.end());
    }
    /// A count of list entries; refused (not cut) above list_max, as the reader would refuse it.
    void count(std::size_t n, const char* what) {
        if (n > list_max) throw channel_error(std::string(what) + ": " + std::to_string(n) + " entries, more than allowed");
        u32(static_cast<std::uint32_t>(n));
    }
    void strings(const std::vector<std::string>& v, const char* what) {
        count(v.size(), what);
        for (const auto& s : v) {
            if (s.size() > string_max) throw channel_error(std::string(what) + ": an entry longer than allowed");
            str(s);
        }
    }
    void header(wire_type t) {
        out_.insert(out_.end(), std::begin(magic), std::end(magic));
        u16(takeover_version);
        u8(static_cast<std::uint8_t>(t));
    }
    std::vector<std::byte> take() {
        if (out_.size() > takeover_message_max) throw channel_error("message of " + std::to_string(out_.size()) + " bytes, more than allowed");
        return std::move(out_);
    }

private:
    std::vector<std::byte> out_;
};

/// Reads what writer wrote; every read checks the bytes left and throws channel_error.
class reader {
public:
    explicit reader(std::span<const std::byte> in) : in_(in) {}
    std::uint8_t u8() {
        need(1, "a byte");
        return std::to_integer<std::uint8_t>(in_[pos_++]);
    }
    std::uint16_t u16() {
        need(2, "a 16-bit integer");
        std::uint16_t v = 0;
        for (int i = 0; i < 2; ++i) v = static_cast<std::uint16_t>(v | (std::uint16_t{u8()} << (8 * i)));
        return v;
    }
    std::uint32_t u32() {
        need(4, "a 32-bit integer");
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) v |= std::uint32_t{u8()} << (8 * i);
        return v;
    }
    std::string str(const char* what) {
        const std::uint32_t n = u32();
        if (n > string_max) throw channel_error(std::string(what) + ": " + std::to_string(n) + " bytes, more than allowed");
        need(n, what);
        std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
        pos_ += n;
        return s;
    }
    std::vector<std::byte> blob(std::size_t max, const char* what) {
        const std::uint32_t n = u32();
        if (n > max) throw channel_error(std::string(what) + ": " + std::to_string(n) + " bytes, more than allowed");
        need(n, what);
        std::vector<std::byte> b(in_.begin() + static_cast<std::ptrdiff_t>(pos_), in_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
        pos_ += n;
        return b;
    }
    bool boolean(const char* what) {
        const auto v = u8();
        if (v > 1) throw channel_error(std::string(what) + ": " + std::to_string(v) + " is no boolean");
        return v == 1;
    }
    std::uint32_t count(const char* what) {
        const std::uint32_t n = u32();
        if (n > list_max) throw channel_error(std::string(what) + ": " + std::to_string(n) + " entries, more than allowed");
        need(std::size_t{n} * 4, what);  // every entry takes 4 bytes at least: no allocation for a lie
        return n;
    }
    std::vector<std::string> strings(const char* what) {
        std::vector<std::string> v(count(what));
        for (auto& s : v) s = str(what);
        return v;
    }
    void done() const {
        if (pos_ != in_.size())
            throw channel_error(std::to_string(in_.size() - pos_) + " byte(s) after the end of the message");
    }

private:
    void need(std::size_t n, const char* what) const {
        if (in_.size() - pos_ < n) throw channel_error(std::string("truncated message: ") + what + " missing");
    }
    std::span<const std::byte> in_;
    std::size_t pos_ = 0;
};

struct encoder {
    writer& w;
    void operator()(const takeover_hello& m) {
        w.header(wire_type::hello);
        w.str(m.program);
        w.u32(m.pid);
    }
    void operator()(const takeover_listeners& m) {
        w.header(wire_type::listeners);
        w.str(m.program);
        w.u32(m.pid);
        w.u32(static_cast<std::uint32_t>(m.sockets.size()));
        for (const auto& s : m.sockets) {
            w.str(s.id.adapter);
            w.str(s.id.endpoint);
            w.u32(s.id.ordinal);
            w.str(s.bound);
            w.u32(s.shard);
            w.u8(static_cast<std::uint8_t>(s.kind));
        }
    }
    void operator()(const takeover_descriptors& m) {
        w.header(wire_type::descriptors);
        w.u32(m.first);
        w.u32(m.count);
    }
    void operator()(const takeover_accept& m) {
        w.header(wire_type::accept);
        w.u32(m.adopted);
    }
    void operator()(const takeover_refuse& m) {
        w.header(wire_type::refuse);
        w.str(m.reason);
    }
    void operator()(const takeover_released& m) {
        w.header(wire_type::released);
        w.u32(m.closed);
        w.u32(m.sessions);
    }
    void operator()(const takeover_session& m) {
        w.header(wire_type::session);
        w.u32(m.serial);
        w.u8(static_cast<std::uint8_t>(m.transport));
        w.str(m.category);
        w.str(m.user_id);
        w.str(m.control_name);
        w.blob(m.session_proxy, blob_max, "session proxy");
        w.count(m.connection_context.size(), "connection context");
        for (const auto& [k, v] : m.connection_context) {
            w.str(k);
            w.str(v);
        }
        w.u32(m.routes_max);
        w.count(m.routes.size(), "routing table");
        for (const auto& r : m.routes) w.blob(r, blob_max, "routing table entry");
        w.strings(m.filter_categories, "category filter");
        w.strings(m.filter_adapter_ids, "adapter id filter");
        w.strings(m.filter_identities, "identity filter");
        w.u32(m.idle_ms);
        w.blob(m.pending, pending_max, "pending bytes");
    }
    void operator()(const takeover_session_taken& m) {
        w.header(wire_type::session_taken);
        w.u32(m.serial);
    }
    void operator()(const takeover_session_refused& m) {
        w.header(wire_type::session_refused);
        w.u32(m.serial);
        w.str(m.reason);
    }
    void operator()(const takeover_sessions_done& m) {
        w.header(wire_type::sessions_done);
        w.u32(m.moved);
        w.u32(m.stayed);
    }
    void operator()(const takeover_topics& m) {
        w.header(wire_type::topics);
        w.u8(m.last ? 1 : 0);
        w.blob(m.part, topics_part_max, "topic catalog part");
    }
    void operator()(const takeover_topic_connection& m) {
        w.header(wire_type::topic_connection);
        w.u8(m.publish_side ? 1 : 0);
        w.u8(static_cast<std::uint8_t>(m.transport));
        w.u32(m.idle_ms);
        w.blob(m.pending, pending_max, "pending bytes");
    }
    void operator()(const takeover_topics_done& m) {
        w.header(wire_type::topics_done);
        w.u8(m.moved ? 1 : 0);
        w.u32(m.connections);
    }
};

session_transport read_transport(reader& r) {
    const auto transport = r.u8();
    if (transport > static_cast<std::uint8_t>(session_transport::ws))
        throw channel_error("session transport " + std::to_string(transport) + " unknown");
    return static_cast<session_transport>(transport);
}

takeover_session read_session(reader& r) {
    takeover_session m;
    m.serial = r.u32();
    m.transport = read_transport(r);
    m.category = r.str("category");
    m.user_id = r.str("user id");
    m.control_name = r.str("SessionControl name");
    m.session_proxy = r.blob(blob_max, "session proxy");
    m.connection_context.resize(r.count("connection context"));
    for (auto& [k, v] : m.connection_context) {
        k = r.str("context key");
        v = r.str("context value");
    }
    m.routes_max = r.u32();
    m.routes.resize(r.count("routing table"));
    for (auto& route : m.routes) route = r.blob(blob_max, "routing table entry");
    m.filter_categories = r.strings("category filter");
    m.filter_adapter_ids = r.strings("adapter id filter");
    m.filter_identities = r.strings("identity filter");
    m.idle_ms = r.u32();
    m.pending = r.blob(pending_max, "pending bytes");
    return m;
}

listener_record read_record(reader& r) {
    listener_record s;
    s.id.adapter = r.str("adapter");
    s.id.endpoint = r.str("endpoint");
    s.id.ordinal = r.u32();
    s.bound = r.str("bound endpoint");
    s.shard = r.u32();
    const auto kind = r.u8();
    if (kind > static_cast<std::uint8_t>(socket_kind::datagram))
        throw channel_error("socket kind " + std::to_string(kind) + " unknown");
    s.kind = static_cast<socket_kind>(kind);
    return s;
}

takeover_message read_body(reader& r, wire_type type) {
    switch (type) {
    case wire_type::hello: {
        takeover_hello m;
        m.program = r.str("program");
        m.pid = r.u32();
        return m;
    }
    case wire_type::listeners: {
        takeover_listeners m;
        m.program = r.str("program");
        m.pid = r.u32();
        const auto n = r.u32();
        if (n > sockets_max) throw channel_error(std::to_string(n) + " sockets announced, more than allowed");
        for (std::uint32_t i = 0; i < n; ++i) m.sockets.push_back(read_record(r));
        return m;
    }
    case wire_type::descriptors: {
        takeover_descriptors m;
        m.first = r.u32();
        m.count = r.u32();
        return m;
    }
    case wire_type::accept: return takeover_accept{r.u32()};
    case wire_type::refuse: return takeover_refuse{r.str("reason")};
    case wire_type::released: {
        takeover_released m;
        m.closed = r.u32();
        m.sessions = r.u32();
        return m;
    }
    case wire_type::session: return read_session(r);
    case wire_type::session_taken: return takeover_session_taken{r.u32()};
    case wire_type::session_refused: {
        takeover_session_refused m;
        m.serial = r.u32();
        m.reason = r.str("reason");
        return m;
    }
    case wire_type::sessions_done: {
        takeover_sessions_done m;
        m.moved = r.u32();
        m.stayed = r.u32();
        return m;
    }
    case wire_type::topics: {
        takeover_topics m;
        m.last = r.boolean("last part");
        m.part = r.blob(topics_part_max, "topic catalog part");
        return m;
    }
    case wire_type::topic_connection: {
        takeover_topic_connection m;
        m.publish_side = r.boolean("publish side");
        m.transport = read_transport(r);
        m.idle_ms = r.u32();
        m.pending = r.blob(pending_max, "pending bytes");
        return m;
    }
    case wire_type::topics_done: {
        takeover_topics_done m;
        m.moved = r.boolean("moved");
        m.connections = r.u32();
        return m;
    }
    }
    throw channel_error("message type " + std::to_string(static_cast<int>(type)) + " unknown");
}

}  // namespace

std::vector<std::byte> encode_takeover(const takeover_message& m) {
    writer w;
    std::visit(encoder{w}, m);
    return w.take();
}

takeover_message decode_takeover(std::span<const std::byte> bytes) {
    if (bytes.size() < sizeof magic || std::memcmp(bytes.data(), magic, sizeof magic) != 0)
        throw channel_error("not a takeover message (no \"MRTK\" magic)");
    reader r(bytes.subspan(sizeof magic));
    const auto version = r.u16();
    const auto type = static_cast<wire_type>(r.u8());
    if (version != takeover_version && type != wire_type::refuse)
        throw channel_error("takeover format version " + std::to_string(version) + "; this moraine-router speaks version " +
                            std::to_string(takeover_version));
    auto m = read_body(r, type);
    r.done();
    return m;
}

const char* takeover_name(const takeover_message& m) noexcept {
    constexpr const char* names[] = {"hello",   "listeners",     "descriptors",     "accept",       "refuse",
                                     "released", "session", "session_taken", "session_refused", "sessions_done",
                                     "topics",  "topic_connection", "topics_done"};
    return names[m.index()];
}

void send_takeover(int sock, const takeover_message& m, std::span<const int> fds) {
    send_packet(sock, encode_takeover(m), fds);
}

}  // namespace moraine::net
