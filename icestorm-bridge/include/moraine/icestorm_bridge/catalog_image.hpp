#pragma once
// The topic service's catalog as bytes, for a takeover (docs/takeover.md "The topic service moves").
#include <moraine/icestorm_bridge/topic_store.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace moraine::icestorm_bridge {

/** `c` in Ice encoding 1.1: the topic names (a string sequence); the links (topic, linked topic's
    name, cost as an int, the linked Topic* and TopicLink* proxies); the subscribers (topic,
    session-local flag as a bool, subscriber proxy, QoS as a string dictionary). Cut into parts
    of at most `part_max` bytes (at least one part, even for an empty catalog), to be
    concatenated in order by the reader. */
std::vector<std::vector<std::byte>> encode_catalog_image(const stored_catalog& c, std::size_t part_max);

/// Reads what encode_catalog_image wrote (its parts concatenated).
/// @throws std::invalid_argument on truncated, malformed or trailing bytes.
stored_catalog decode_catalog_image(std::span<const std::byte> bytes);

}  // namespace moraine::icestorm_bridge
