#include <moraine/icestorm_bridge/event.hpp>

#include <moraine/protocol/header.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <array>
#include <charconv>
#include <cstring>

namespace moraine::icestorm_bridge {

namespace {

protocol::byte_buffer make_suffix(std::string_view operation, std::uint8_t mode, protocol::byte_view context) {
    protocol::output_stream os;
    os.write_string(operation);
    os.write_byte(mode);
    os.write_bytes(context);
    return os.take();
}

constexpr std::array<std::byte, 1> empty_context{std::byte{0}};  // a dictionary of size 0

}  // namespace

int event_cost(const protocol::context_view& ctx) noexcept {
    int cost = 0;
    if (auto c = ctx.find("cost")) std::from_chars(c->data(), c->data() + c->size(), cost);
    return cost;
}

std::shared_ptr<event> make_event(std::string topic, const protocol::request_view& r) {
    auto ev = std::make_shared<event>();
    ev->topic = std::move(topic);
    ev->operation = std::string(r.operation);
    ev->mode = r.mode;
    ev->context.assign(r.context.raw.begin(), r.context.raw.end());
    ev->suffix = make_suffix(r.operation, r.mode, r.context.raw);
    ev->suffix_without_context = make_suffix(r.operation, r.mode, empty_context);
    ev->params = std::make_shared<const protocol::byte_buffer>(r.params.bytes.begin(), r.params.bytes.end());
    ev->cost = event_cost(r.context);
    return ev;
}

std::shared_ptr<event> make_event(std::string topic, std::string_view operation, std::uint8_t mode, protocol::byte_view params,
                     protocol::byte_view context, int cost) {
    auto ev = std::make_shared<event>();
    ev->topic = std::move(topic);
    ev->operation = std::string(operation);
    ev->mode = mode;
    ev->context.assign(context.begin(), context.end());
    ev->suffix = make_suffix(operation, mode, context);
    ev->suffix_without_context = make_suffix(operation, mode, empty_context);
    ev->params = std::make_shared<const protocol::byte_buffer>(params.begin(), params.end());
    ev->cost = cost;
    ev->from_link = true;
    return ev;
}

net::outbound_frame frame_for(const event& ev, protocol::byte_view target, bool with_context) {
    const auto& suffix = with_context ? ev.suffix : ev.suffix_without_context;
    const std::size_t params = ev.params->size();
    const bool inlined = params <= inline_params_max;
    net::outbound_frame f;
    const std::size_t head = protocol::header_size + 4 + target.size() + suffix.size();
    f.head.resize(head + (inlined ? params : 0));
    std::byte* p = f.head.data();
    protocol::write_header(p, protocol::message_type::request, protocol::compression_status::none,
                           static_cast<std::int32_t>(head + params));
    p += protocol::header_size;
    std::memset(p, 0, 4);  // request id: 0, or set by the subscriber's connection for twoway
    p += 4;
    std::memcpy(p, target.data(), target.size());
    p += target.size();
    std::memcpy(p, suffix.data(), suffix.size());
    if (inlined)
        std::memcpy(p + suffix.size(), ev.params->data(), params);
    else
        f.tail = ev.params;
    return f;
}

protocol::byte_buffer encode_target(const protocol::identity& id, std::string_view facet) {
    protocol::output_stream os;
    os.write_identity(id.view());
    os.write_facet(facet);
    return os.take();
}

}  // namespace moraine::icestorm_bridge
