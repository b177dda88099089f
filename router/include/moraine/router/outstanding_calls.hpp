#pragma once
// The requests a client connection sent to its client and awaits replies for: callbacks from back
// ends and twoway topic events (docs/glacier2.md §6).
#include <moraine/net/callback_route.hpp>
#include <moraine/net/session_directory.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace moraine::router {

/** Request ids on one client connection and what each reply completes: a callback's reply goes
    back to its back end (a callback_route), a twoway topic event's to the topic service (a
    reply_done). Ids count up from 1, wrap after INT32_MAX and skip the ones still outstanding, so
    a late reply never completes another call. An idle connection holds 16 bytes: the tables are
    made by the first outstanding call. Shard-local, no locking. */
class outstanding_calls {
public:
    using reply_done = net::session_directory::reply_done;

    /// `first_id`: the first id next_id() hands out (1 to INT32_MAX); tests start near the wrap.
    explicit outstanding_calls(std::int32_t first_id = 1) noexcept : next_(first_id > 0 ? first_id : 1) {}

    /// A fresh request id, not outstanding (never 0: 0 marks a oneway on the wire).
    std::int32_t next_id() noexcept;
    /// A callback sent under `id` (from next_id): its reply goes along `route`.
    void add_callback(std::int32_t id, net::callback_route route);
    /// A twoway topic event sent under `id` (from next_id): its reply goes to `done`.
    void add_event(std::int32_t id, reply_done done);

    /// What the reply under one id completes: at most one of the two is set.
    struct completion {
        std::optional<net::callback_route> callback;
        reply_done event;
    };
    /// Removes and returns what the reply under `id` completes; both empty for an id not
    /// outstanding (a reply Ice ignores).
    completion complete(std::int32_t id);

    /// Callbacks awaiting their reply (a drain waits for them).
    std::size_t callbacks() const noexcept { return tables_ ? tables_->callbacks.size() : 0; }
    /// True if nothing awaits a reply.
    bool empty() const noexcept { return !tables_ || (tables_->callbacks.empty() && tables_->events.empty()); }
    /// Removes and returns every callback's route (the connection is gone: each gets a failure).
    std::vector<net::callback_route> take_callbacks();
    /// Removes and returns every event's handler (the connection is gone: each gets nullptr).
    std::vector<reply_done> take_events();

private:
    struct tables {
        std::unordered_map<std::int32_t, net::callback_route> callbacks;
        std::unordered_map<std::int32_t, reply_done> events;
    };
    tables& made();
    bool outstanding(std::int32_t id) const noexcept;

    std::int32_t next_;
    std::unique_ptr<tables> tables_;
};

}  // namespace moraine::router
