// The topic database (topic_store.hpp): SQLite, one writer thread, completions posted home.
#include <moraine/icestorm_bridge/topic_store.hpp>

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <boost/asio/post.hpp>

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <filesystem>
#include <variant>

namespace moraine::icestorm_bridge {

std::size_t icestorm_key_bytes(std::string_view instance_name, std::string_view topic,
                               const protocol::identity& subscriber) {
    // A 1.1 string: a size (1 byte below 255, else 5), then its bytes. The topic's identity is
    // its proxy's, {"topic.<name>", <instance name>} (docs/icestorm.md §2).
    auto string_bytes = [](std::size_t n) -> std::size_t { return (n < 255 ? 1 : 5) + n; };
    return string_bytes(6 + topic.size()) + string_bytes(instance_name.size()) + string_bytes(subscriber.name.size()) +
           string_bytes(subscriber.category.size());
}

namespace {

constexpr const char* file_name = "moraine-topics.sqlite3";
// 2: a link's row is keyed by the linked topic's identity (link_info::key()); 1 keyed it by the
// linked topic's bare name, and is rekeyed when opened.
constexpr int schema_version = 2;

// Proxies and QoS are stored as Ice encoding 1.1 bytes: the very form they arrived in, decoded
// again by the codec the service already trusts.
constexpr const char* schema = R"(
CREATE TABLE IF NOT EXISTS topics(name TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS subscribers(topic TEXT, key TEXT, proxy BLOB, qos BLOB, PRIMARY KEY(topic, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS links(topic TEXT, linked TEXT, proxy BLOB, cost INTEGER, link_proxy BLOB,
                                 PRIMARY KEY(topic, linked)) WITHOUT ROWID;
)";

protocol::byte_buffer encode_proxy(const protocol::proxy& p) {
    protocol::output_stream os;
    protocol::write_proxy(os, p);
    return os.take();
}

protocol::byte_buffer encode_qos(const std::vector<std::pair<std::string, std::string>>& qos) {
    protocol::output_stream os;
    os.write_size(static_cast<std::int32_t>(qos.size()));
    for (const auto& [k, v] : qos) {
        os.write_string(k);
        os.write_string(v);
    }
    return os.take();
}

protocol::byte_view column_bytes(sqlite3_stmt* s, int i) {
    const auto* p = static_cast<const std::byte*>(sqlite3_column_blob(s, i));
    return {p, static_cast<std::size_t>(sqlite3_column_bytes(s, i))};
}

std::string column_text(sqlite3_stmt* s, int i) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s, i))) : std::string();
}

/// A decoded proxy, or nullopt when the stored bytes no longer decode.
std::optional<protocol::proxy> decode_proxy(protocol::byte_view b) {
    protocol::input_stream in(b);
    auto p = protocol::read_proxy(in);
    if (!in.ok() || p.is_nil()) return std::nullopt;
    return p;
}

std::optional<std::vector<std::pair<std::string, std::string>>> decode_qos(protocol::byte_view b) {
    protocol::input_stream in(b);
    std::vector<std::pair<std::string, std::string>> qos;
    const auto n = in.read_size();
    for (std::int32_t i = 0; i < n && in.ok(); ++i) {
        std::string k(in.read_string());
        qos.emplace_back(std::move(k), std::string(in.read_string()));
    }
    if (!in.ok()) return std::nullopt;
    return qos;
}

}  // namespace

/// A prepared statement, finalized when it goes out of scope.
struct topic_store::statement {
    sqlite3_stmt* s = nullptr;
    statement(sqlite3* db, const char* sql) {
        if (sqlite3_prepare_v2(db, sql, -1, &s, nullptr) != SQLITE_OK) s = nullptr;
    }
    ~statement() { sqlite3_finalize(s); }
    statement(const statement&) = delete;
    statement& operator=(const statement&) = delete;
};

struct topic_store::write_op {
    using value = std::variant<std::string, protocol::byte_buffer, std::int64_t>;
    const char* sql;
    std::vector<value> args;
};

struct topic_store::change {
    std::vector<write_op> ops;
    done_fn done;
};

topic_store::topic_store(const std::string& dir, boost::asio::any_io_executor home)
    : path_((std::filesystem::path(dir) / file_name).string()), home_(std::move(home)) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw store_error("topic database: directory '" + dir + "' does not exist (create it first)");
    if (sqlite3_open_v2(path_.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
        SQLITE_OK) {
        std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
        sqlite3_close(db_);
        db_ = nullptr;
        throw store_error("topic database " + path_ + ": " + why);
    }
    // EXCLUSIVE holds the lock from the first access until close: one process per database.
    // WAL + FULL: a commit is on disk when it returns.
    const std::string setup = "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                              "BEGIN EXCLUSIVE; COMMIT;" +
                              std::string(schema);
    char* err = nullptr;
    if (const int rc = sqlite3_exec(db_, setup.c_str(), nullptr, nullptr, &err); rc != SQLITE_OK) {
        std::string why = err ? err : sqlite3_errmsg(db_);
        sqlite3_free(err);
        sqlite3_close(db_);
        db_ = nullptr;
        // BEGIN EXCLUSIVE without a busy handler: another process's lock answers BUSY at once.
        if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
            throw store_held("topic database " + path_ + ": " + why + " (another process uses it)");
        throw store_error("topic database " + path_ + ": " + why);
    }
    statement version(db_, "PRAGMA user_version");
    const int found = version.s && sqlite3_step(version.s) == SQLITE_ROW ? sqlite3_column_int(version.s, 0) : -1;
    if (found != 0 && found != 1 && found != schema_version) {
        sqlite3_close(db_);
        db_ = nullptr;
        throw store_error("topic database " + path_ + ": schema version " + std::to_string(found) + ", expected " +
                          std::to_string(schema_version));
    }
    if (found == 1) rekey_links();
    sqlite3_exec(db_, ("PRAGMA user_version=" + std::to_string(schema_version)).c_str(), nullptr, nullptr, nullptr);
}

void topic_store::rekey_links() {
    struct move {
        std::string topic, from, to;
    };
    std::vector<move> moves;
    {
        statement links(db_, "SELECT topic, linked, proxy FROM links");
        while (links.s && sqlite3_step(links.s) == SQLITE_ROW)
            if (auto p = decode_proxy(column_bytes(links.s, 2)))
                if (auto key = protocol::identity_to_string(p->id.view()); key != column_text(links.s, 1))
                    moves.push_back({column_text(links.s, 0), column_text(links.s, 1), std::move(key)});
    }
    for (const auto& m : moves) {
        statement up(db_, "UPDATE links SET linked=? WHERE topic=? AND linked=?");
        if (!up.s) break;
        sqlite3_bind_text(up.s, 1, m.to.data(), static_cast<int>(m.to.size()), SQLITE_TRANSIENT);
        sqlite3_bind_text(up.s, 2, m.topic.data(), static_cast<int>(m.topic.size()), SQLITE_TRANSIENT);
        sqlite3_bind_text(up.s, 3, m.from.data(), static_cast<int>(m.from.size()), SQLITE_TRANSIENT);
        if (sqlite3_step(up.s) != SQLITE_DONE)
            spdlog::warn("topic database: link from '{}' to '{}' could not be rekeyed: {}", m.topic, m.from,
                         sqlite3_errmsg(db_));
    }
}

topic_store::~topic_store() {
    writer_.join();
    sqlite3_close(db_);
}

stored_catalog topic_store::load() {
    stored_catalog c;
    auto check = [&](const statement& st) {
        if (!st.s) throw store_error("topic database " + path_ + ": " + sqlite3_errmsg(db_));
    };
    statement topics(db_, "SELECT name FROM topics ORDER BY name");
    check(topics);
    while (sqlite3_step(topics.s) == SQLITE_ROW) c.topics.push_back(column_text(topics.s, 0));

    statement subs(db_, "SELECT topic, key, proxy, qos FROM subscribers");
    check(subs);
    while (sqlite3_step(subs.s) == SQLITE_ROW) {
        auto proxy = decode_proxy(column_bytes(subs.s, 2));
        auto qos = decode_qos(column_bytes(subs.s, 3));
        if (!proxy || !qos) {
            spdlog::warn("topic database: subscriber '{}' of topic '{}' does not decode, skipped", column_text(subs.s, 1),
                         column_text(subs.s, 0));
            continue;
        }
        c.subscribers.push_back(stored_subscriber{column_text(subs.s, 0), std::move(*proxy), std::move(*qos)});
    }

    statement links(db_, "SELECT topic, linked, proxy, cost, link_proxy FROM links");
    check(links);
    while (sqlite3_step(links.s) == SQLITE_ROW) {
        auto topic = decode_proxy(column_bytes(links.s, 2));
        auto link = decode_proxy(column_bytes(links.s, 4));
        if (!topic || !link) {
            spdlog::warn("topic database: link from '{}' to '{}' does not decode, skipped", column_text(links.s, 0),
                         column_text(links.s, 1));
            continue;
        }
        std::string name = topic_name_of(*topic);
        c.links.push_back(stored_link{column_text(links.s, 0), link_info{std::move(*topic), std::move(name),
                                                                         sqlite3_column_int(links.s, 3), std::move(*link)}});
    }
    return c;
}

void topic_store::put_topic(const std::string& name, done_fn done) {
    submit({{"INSERT OR IGNORE INTO topics(name) VALUES(?)", {name}}}, std::move(done));
}

void topic_store::erase_topic(const std::string& name, done_fn done) {
    submit({{"DELETE FROM topics WHERE name=?", {name}},
            {"DELETE FROM subscribers WHERE topic=?", {name}},
            {"DELETE FROM links WHERE topic=?", {name}}},
           std::move(done));
}

void topic_store::put_subscriber(const std::string& topic, const protocol::proxy& proxy,
                                 const std::vector<std::pair<std::string, std::string>>& qos, done_fn done) {
    submit({{"INSERT OR REPLACE INTO subscribers(topic, key, proxy, qos) VALUES(?, ?, ?, ?)",
             {topic, protocol::identity_to_string(proxy.id.view()), encode_proxy(proxy), encode_qos(qos)}}},
           std::move(done));
}

void topic_store::erase_subscriber(const std::string& topic, const std::string& key, done_fn done) {
    submit({{"DELETE FROM subscribers WHERE topic=? AND key=?", {topic, key}}}, std::move(done));
}

void topic_store::put_link(const std::string& topic, const link_info& link, done_fn done) {
    submit({{"INSERT OR REPLACE INTO links(topic, linked, proxy, cost, link_proxy) VALUES(?, ?, ?, ?, ?)",
             {topic, link.key(), encode_proxy(link.topic), std::int64_t{link.cost}, encode_proxy(link.link)}}},
           std::move(done));
}

void topic_store::erase_link(const std::string& topic, const std::string& linked, done_fn done) {
    submit({{"DELETE FROM links WHERE topic=? AND linked=?", {topic, linked}}}, std::move(done));
}

void topic_store::submit(std::vector<write_op> ops, done_fn done) {
    std::lock_guard lock(mutex_);
    queued_.push_back(change{std::move(ops), std::move(done)});
    if (draining_) return;  // the posted drain takes this one too
    draining_ = true;
    boost::asio::post(writer_, [this] { drain(); });
}

void topic_store::drain() {
    std::vector<change> batch;
    {
        std::lock_guard lock(mutex_);
        batch.swap(queued_);
        draining_ = false;
    }
    std::vector<std::string> outcome(batch.size());
    if (auto error = commit(batch); !error.empty()) {
        for (std::size_t i = 0; i < batch.size(); ++i) outcome[i] = commit(std::span(batch).subspan(i, 1));
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (!outcome[i].empty()) spdlog::error("topic database {}: write failed: {}", path_, outcome[i]);
        if (batch[i].done)
            boost::asio::post(home_, [done = std::move(batch[i].done), error = std::move(outcome[i])] { done(error); });
    }
}

std::string topic_store::commit(std::span<const change> batch) {
    if (sqlite3_exec(db_, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK) return sqlite3_errmsg(db_);
    std::string error;
    for (const change& c : batch) {
        error = apply(c.ops);
        if (!error.empty()) break;
    }
    if (error.empty() && sqlite3_exec(db_, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK) return {};
    if (error.empty()) error = sqlite3_errmsg(db_);
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    return error;
}

std::string topic_store::apply(const std::vector<write_op>& ops) {
    for (const auto& op : ops) {
        statement st(db_, op.sql);
        if (!st.s) return sqlite3_errmsg(db_);
        int i = 1;
        for (const auto& a : op.args) {
            if (const auto* text = std::get_if<std::string>(&a))
                sqlite3_bind_text(st.s, i, text->data(), static_cast<int>(text->size()), SQLITE_TRANSIENT);
            else if (const auto* blob = std::get_if<protocol::byte_buffer>(&a))
                sqlite3_bind_blob(st.s, i, blob->data(), static_cast<int>(blob->size()), SQLITE_TRANSIENT);
            else
                sqlite3_bind_int64(st.s, i, std::get<std::int64_t>(a));
            ++i;
        }
        if (sqlite3_step(st.s) != SQLITE_DONE) return sqlite3_errmsg(db_);
    }
    return {};
}

}  // namespace moraine::icestorm_bridge
