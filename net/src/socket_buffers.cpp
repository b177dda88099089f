#include <moraine/net/socket_buffers.hpp>

#include <spdlog/spdlog.h>

#include <atomic>
#include <string_view>

namespace moraine::net {

namespace {

/// Sets one buffer; warns once (per option) when the kernel gave less than `bytes`.
template <typename Option>
void set_buffer(tcp::socket& s, std::size_t bytes, std::string_view key, std::atomic<bool>& warned) {
    boost::system::error_code ec;
    s.set_option(Option(static_cast<int>(bytes)), ec);
    if (ec) return;
    Option got;
    s.get_option(got, ec);
    // Linux reports twice what it grants (the other half is its bookkeeping), other kernels the
    // size itself: less than asked is a cap either way.
    const auto granted = static_cast<std::size_t>(got.value());
    if (ec || granted >= bytes || warned.exchange(true)) return;
    spdlog::warn("{}: requested {} bytes, the kernel grants {} (raise net.core.{}_max to allow more)", key, bytes,
                 granted, key == "Ice.TCP.SndSize" ? "wmem" : "rmem");
}

}  // namespace

void apply_socket_buffers(tcp::socket& s, const runtime_config& cfg) {
    static std::atomic<bool> send_warned{false}, receive_warned{false};
    if (cfg.tcp_send_buffer) set_buffer<asio::socket_base::send_buffer_size>(s, cfg.tcp_send_buffer, "Ice.TCP.SndSize", send_warned);
    if (cfg.tcp_receive_buffer)
        set_buffer<asio::socket_base::receive_buffer_size>(s, cfg.tcp_receive_buffer, "Ice.TCP.RcvSize", receive_warned);
}

}  // namespace moraine::net
