#include <moraine/net/asio.hpp>

#include <spdlog/spdlog.h>

#include <atomic>

namespace moraine::net {

namespace {
std::atomic<unsigned long> bug_count{0};  // rare path only: an escaped exception, never per message
}

void report_bug(std::exception_ptr e) {
    if (!e) return;
    bug_count.fetch_add(1, std::memory_order_relaxed);
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& ex) {
        spdlog::critical("bug: exception escaped a coroutine: {}", ex.what());
    } catch (...) {
        spdlog::critical("bug: unknown exception escaped a coroutine");
    }
}

unsigned long bugs_total() noexcept { return bug_count.load(std::memory_order_relaxed); }

}  // namespace moraine::net
