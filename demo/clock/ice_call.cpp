#include "clock/ice_call.hpp"

#include <moraine/protocol/frame_parser.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <cstring>
#include <stdexcept>

namespace moraine::demo {

namespace asio = boost::asio;

ice_call::ice_call(asio::io_context& io, const protocol::endpoint& ep) : socket_(io) {
    asio::ip::tcp::resolver resolver(io);
    boost::system::error_code ec;
    asio::connect(socket_, resolver.resolve(ep.host.empty() ? "127.0.0.1" : ep.host, std::to_string(ep.port)), ec);
    if (ec) throw std::runtime_error("cannot connect to " + protocol::endpoint_to_string(ep) + ": " + ec.message());
    socket_.set_option(asio::ip::tcp::no_delay(true));
    const auto first = read_message();
    if (first.size() != protocol::header_size || first[8] != std::byte{3})
        throw std::runtime_error(protocol::endpoint_to_string(ep) + " is not an Ice peer");
}

protocol::byte_buffer ice_call::request(std::int32_t id, const protocol::identity& target, std::string_view operation,
                                        std::uint8_t mode, const protocol::byte_buffer& params) const {
    protocol::output_stream os;
    os.start_message(protocol::message_type::request);
    os.write_int(id);
    os.write_identity(target.view());
    os.write_facet("");
    os.write_string(operation);
    os.write_byte(mode);
    os.write_size(0);  // empty context
    os.write_bytes(params);
    os.end_message();
    return os.take();
}

protocol::byte_buffer ice_call::read_message() {
    protocol::byte_buffer msg(protocol::header_size);
    boost::system::error_code ec;
    asio::read(socket_, asio::buffer(msg), ec);
    if (ec) throw std::runtime_error("connection lost: " + ec.message());
    std::int32_t size = 0;
    std::memcpy(&size, msg.data() + 10, 4);
    if (size < static_cast<std::int32_t>(protocol::header_size) || size > (64 << 20))
        throw std::runtime_error("bad message size from peer");
    msg.resize(static_cast<std::size_t>(size));
    asio::read(socket_, asio::buffer(msg.data() + protocol::header_size, msg.size() - protocol::header_size), ec);
    if (ec) throw std::runtime_error("connection lost: " + ec.message());
    return msg;
}

ice_call::reply ice_call::invoke(const protocol::identity& id, std::string_view operation, std::uint8_t mode,
                                 const protocol::byte_buffer& params) {
    const std::int32_t rid = next_id_++;
    asio::write(socket_, asio::buffer(request(rid, id, operation, mode, params)));
    for (;;) {
        const auto msg = read_message();
        if (msg[8] != std::byte{2}) continue;  // heartbeats
        auto r = protocol::decode_reply(protocol::byte_view(msg).subspan(protocol::header_size));
        if (!r) throw std::runtime_error("malformed reply");
        if (r->request_id != rid) continue;
        return reply{r->status, protocol::byte_buffer(r->payload.begin(), r->payload.end())};
    }
}

void ice_call::send_oneway(const protocol::identity& id, std::string_view operation, const protocol::byte_buffer& params) {
    boost::system::error_code ec;
    asio::write(socket_, asio::buffer(request(0, id, operation, 0, params)), ec);
    if (ec) throw std::runtime_error("publish failed: " + ec.message());
}

}  // namespace moraine::demo
