#pragma once
// The kernel buffers of a TCP socket, as Ice.TCP.SndSize / Ice.TCP.RcvSize set them.
#include <moraine/net/asio.hpp>
#include <moraine/net/runtime_config.hpp>

namespace moraine::net {

/** Sets SO_SNDBUF and SO_RCVBUF on `s` to cfg.tcp_send_buffer / cfg.tcp_receive_buffer bytes
    (each left to the kernel's autotuned default when 0). Linux caps a request at
    net.core.wmem_max / rmem_max: the first socket whose buffer (as getsockopt reports it) came out
    smaller than asked logs a warning once per process, naming the key. Errors are ignored (the socket keeps
    the kernel's size).

    Why: a peer slower than its events leaves them in the kernel's buffers, several MB per
    socket when autotuned, where neither the connection's queue limits nor the memory budget
    see them, and where they add latency. A small send buffer keeps that backlog in the queue. */
void apply_socket_buffers(tcp::socket& s, const runtime_config& cfg);

}  // namespace moraine::net
