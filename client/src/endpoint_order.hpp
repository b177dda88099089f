#pragma once
// The random choices of the library: reconnect jitter and the order router endpoints are tried in.
#include <cstddef>
#include <random>
#include <vector>

namespace moraine::client {

/// The calling thread's generator, seeded once from std::random_device: every process (and
/// every thread of it) draws its own sequence, so a fleet of clients does not move in step.
std::minstd_rand& thread_rng();

/// 0..n-1 in a fresh random order (thread_rng): the order one connection attempt tries a
/// router's endpoints in, as Ice.Default.EndpointSelection=Random shuffles them per connection.
std::vector<std::size_t> shuffled_order(std::size_t n);

}  // namespace moraine::client
