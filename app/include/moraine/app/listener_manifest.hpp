#pragma once
// What a configuration listens on, named as a takeover names it (docs/takeover.md).
#include <moraine/app/app_config.hpp>
#include <moraine/net/takeover_message.hpp>

#include <vector>

namespace moraine::app {

/** Every endpoint `cfg` makes moraine-router listen on, as (adapter, endpoint as configured,
    ordinal): the client and server endpoints, the topic service's TopicManager and Publish
    endpoints when it is enabled, the admin object's and the /metrics one. A takeover hands over
    exactly these: the running router must listen on the same list (net::check_same_listeners). */
std::vector<net::listener_id> listener_manifest(const app_config& cfg);

}  // namespace moraine::app
