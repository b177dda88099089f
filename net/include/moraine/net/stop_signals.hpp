#pragma once
// SIGINT / SIGTERM / SIGHUP handling for the executables: blocked everywhere, awaited by the main thread.

#include <chrono>

namespace moraine::net {

/// Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (and so in every thread it starts later) and
/// ignores SIGPIPE (a peer closing mid-write is an ordinary socket error). Call first in main.
void block_stop_signals();

/// Waits for SIGINT, SIGTERM or SIGHUP (blocked by block_stop_signals). @return the signal number.
int wait_for_stop_signal();

/// The same for at most `timeout`. @return the signal number, or 0 if none came in time.
int wait_for_stop_signal_for(std::chrono::milliseconds timeout);

}  // namespace moraine::net
