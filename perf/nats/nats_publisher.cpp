// The publisher role of nats-fanout: a blocking socket, paced with sleep_until as clock-publisher is.
#include "nats_fanout.hpp"

#include "clock/tick.hpp"

#include <boost/asio.hpp>

#include <atomic>
#include <csignal>
#include <iostream>
#include <thread>

namespace moraine::perf {

namespace {

std::atomic<bool> stopping{false};

using tcp = boost::asio::ip::tcp;

/// Waits for the server's PONG (every PUB before the PING has been processed by then).
void flush(tcp::socket& sock) {
    boost::asio::write(sock, boost::asio::buffer(std::string_view("PING\r\n")));
    boost::asio::streambuf in;
    for (;;) {
        boost::asio::read_until(sock, in, "\r\n");
        std::istream is(&in);
        std::string line;
        std::getline(is, line);
        if (line.rfind("PONG", 0) == 0) return;
        if (line.rfind("-ERR", 0) == 0) throw std::runtime_error("server: " + line);
    }
}

}  // namespace

int run_publisher(const publisher_settings& s) {
    std::signal(SIGINT, [](int) { stopping = true; });
    std::signal(SIGTERM, [](int) { stopping = true; });
    try {
        boost::asio::io_context io;
        tcp::socket sock(io);
        sock.connect({boost::asio::ip::make_address(s.server.host), s.server.port});
        sock.set_option(tcp::no_delay(true));  // one tick per write, sent at once (as Ice sends)
        boost::asio::write(sock, boost::asio::buffer(std::string_view(
                                     "CONNECT {\"verbose\":false,\"pedantic\":false,\"name\":\"nats-fanout-pub\"}\r\n")));
        flush(sock);
        std::cout << "nats-fanout: publishing on " << s.subject << " at " << s.rate << " tick/s" << std::endl;
        const auto period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(1.0 / s.rate));
        const auto start = std::chrono::steady_clock::now();
        auto next = start;
        std::uint64_t seq = 0;
        std::string frame;
        while (!stopping) {
            const auto now = std::chrono::steady_clock::now();
            if (s.duration > 0 && now - start >= std::chrono::duration<double>(s.duration)) break;
            const auto body = demo::format_tick({++seq, now});
            frame = "PUB " + s.subject + " " + std::to_string(body.size()) + "\r\n" + body + "\r\n";
            boost::asio::write(sock, boost::asio::buffer(frame));
            next += period;
            std::this_thread::sleep_until(next);
        }
        flush(sock);
        std::cout << "nats-fanout: " << seq << " ticks published" << std::endl;
    } catch (const std::exception& e) {
        std::cerr << "nats-fanout pub: " << e.what() << "\n";
        return 1;
    }
    return 0;
}

}  // namespace moraine::perf
