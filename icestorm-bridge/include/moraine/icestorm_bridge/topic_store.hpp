#pragma once
// The topic database: topics, subscribers and links kept across restarts (docs/icestorm.md §8),
// in SQLite, written on a thread of its own so no shard waits for the disk.
#include <moraine/icestorm_bridge/local_topics.hpp>
#include <moraine/protocol/proxy.hpp>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/thread_pool.hpp>

#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace moraine::icestorm_bridge {

/// The database could not be opened or read (start-up); the message names the file and SQLite's cause.
class store_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The database is locked by another process (a router serving, or one being taken over).
class store_held : public store_error {
public:
    using store_error::store_error;
};

/** IceStorm 3.7 keys its database (LMDB) by two Ice identities, the topic's and the
    subscriber's (empty for the topic itself), and LMDB keys hold at most 511 bytes: a longer
    topic name or subscriber identity fails there with an UnknownException, in persistent mode
    only. Moraine's database has no such limit, but keeps IceStorm's, so that what one accepts
    the other accepts too (docs/icestorm.md §8). */
inline constexpr std::size_t icestorm_key_bytes_max = 511;

/// The size (bytes) of IceStorm's database key for subscriber `subscriber` (empty for the topic
/// itself) of topic `topic` of the service `instance_name`: both identities in the 1.1 encoding.
std::size_t icestorm_key_bytes(std::string_view instance_name, std::string_view topic,
                               const protocol::identity& subscriber);

/// One stored subscription: its topic, the subscriber proxy and the QoS it subscribed with.
struct stored_subscriber {
    std::string topic;
    protocol::proxy proxy;
    std::vector<std::pair<std::string, std::string>> qos;
    /// A servant in a session of the router (only a takeover carries one; the database never
    /// holds one, since its session ends with the process): `proxy` then has no endpoints.
    bool session_local = false;
};

/// One stored link: from `topic` to `link.name`.
struct stored_link {
    std::string topic;
    link_info link;
};

/// Everything the database holds, as read at start-up.
struct stored_catalog {
    std::vector<std::string> topics;
    std::vector<stored_subscriber> subscribers;
    std::vector<stored_link> links;
};

/** The catalog's durable copy: one SQLite file, `<dir>/moraine-topics.sqlite3`, in WAL mode with
    synchronous=FULL, so a write whose completion ran survives a crash of the process or the
    machine. Changes are made in the order given, on the store's own thread, those queued together
    in one transaction;
    each completion is posted to `home` (the catalog's shard) with an empty string, or with the
    SQLite error when the write was not made. The file is locked for the process's lifetime:
    a second router on the same directory stops at start-up. */
class topic_store {
public:
    /// Called on `home` once a write is committed (empty) or failed (SQLite's message).
    using done_fn = std::function<void(const std::string& error)>;

    /** Opens or creates the database in directory `dir`, which must exist.
        @throws store_held when another process holds it; store_error: no such directory, not
        writable, or not a Moraine topic database. */
    topic_store(const std::string& dir, boost::asio::any_io_executor home);
    /// Finishes the queued writes, then closes the file.
    ~topic_store();
    topic_store(const topic_store&) = delete;
    topic_store& operator=(const topic_store&) = delete;

    /// The file's path, for logs.
    const std::string& path() const noexcept { return path_; }

    /** Reads everything; call once, before the first write (start-up, before the shards run).
        A row that no longer decodes is skipped with a warning. @throws store_error. */
    stored_catalog load();

    void put_topic(const std::string& name, done_fn done);
    /// Removes the topic with its subscribers and links (IceStorm's Topic::destroy).
    void erase_topic(const std::string& name, done_fn done);
    /// Adds or replaces the subscription of `proxy`'s identity to `topic`.
    void put_subscriber(const std::string& topic, const protocol::proxy& proxy,
                        const std::vector<std::pair<std::string, std::string>>& qos, done_fn done);
    /// `key`: the subscriber's stringified identity.
    void erase_subscriber(const std::string& topic, const std::string& key, done_fn done);
    /// Adds or replaces `topic`'s link to `link.topic`, keyed by link_info::key().
    void put_link(const std::string& topic, const link_info& link, done_fn done);
    /// `linked`: the link's key (link_info::key()). A row an earlier version keyed by the linked
    /// topic's bare name is rekeyed as the database opens.
    void erase_link(const std::string& topic, const std::string& linked, done_fn done);

private:
    /// A version 1 database keyed each link by the linked topic's bare name: its rows are
    /// rekeyed by identity (link_info::key()) as it opens.
    void rekey_links();
    struct statement;
    /// One SQL statement with its text/blob/int arguments.
    struct write_op;
    /// One change: its statements (one transaction) and its completion.
    struct change;
    void submit(std::vector<write_op> ops, done_fn done);
    /// Writer thread: commits every change queued so far in one transaction (group commit: one
    /// fsync for a burst of subscribes); if that fails, each change alone, so each gets its own outcome.
    void drain();
    /// Runs `ops` inside the open transaction; SQLite's message on failure.
    std::string apply(const std::vector<write_op>& ops);
    std::string commit(std::span<const change> batch);

    std::string path_;
    sqlite3* db_ = nullptr;
    boost::asio::any_io_executor home_;
    std::mutex mutex_;
    std::vector<change> queued_;  // guarded by mutex_
    bool draining_ = false;       // a drain is posted and has not taken the queue yet; guarded by mutex_
    boost::asio::thread_pool writer_{1};  // one thread: changes keep their order
};

}  // namespace moraine::icestorm_bridge
