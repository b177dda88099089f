#include "endpoint_order.hpp"

#include <algorithm>
#include <numeric>

namespace moraine::client {

std::minstd_rand& thread_rng() {
    thread_local std::minstd_rand rng{std::random_device{}()};
    return rng;
}

std::vector<std::size_t> shuffled_order(std::size_t n) {
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::shuffle(order.begin(), order.end(), thread_rng());
    return order;
}

}  // namespace moraine::client
