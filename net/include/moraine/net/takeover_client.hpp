#pragma once
// The new router's side of a takeover (docs/takeover.md): `moraine-router --takeover PATH`
// asks the running router for its listening sockets and adopts them instead of binding.
#include <moraine/net/inherited_listeners.hpp>
#include <moraine/net/unique_fd.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace moraine::net {

/// Nobody listens on the takeover socket (no such file, or connection refused): there is no
/// running router to take over from.
class takeover_unreachable : public channel_error {
public:
    using channel_error::channel_error;
};

/// A takeover as the new process sees it, once the listeners and their descriptors have arrived.
struct takeover_offer {
    std::string program;  ///< the running router's version
    std::uint32_t pid = 0;
    std::vector<inherited_socket> sockets;  ///< checked with check_descriptors
};

/** The new process's side of a takeover: connects to the running router's takeover socket,
    receives its listening sockets, then either refuses (the running router goes on serving) or
    accepts (it stops accepting and drains). Blocking calls with bounded waits. */
class takeover_client {
public:
    /// Connects to `path`. @throws takeover_unreachable if nobody listens there, channel_error
    /// for another failure (a bad path, permission denied).
    explicit takeover_client(const std::string& path);

    /** Asks for the listening sockets. @return them, with their descriptors checked.
        @throws channel_error: the running router refused (its reason), sent something wrong, or
        did not answer within `timeout`. */
    takeover_offer request(const std::string& program, std::chrono::milliseconds timeout = std::chrono::seconds(10));
    /// Tells the running router no (it goes on serving), with `reason` for its log. Never throws.
    void refuse(const std::string& reason) noexcept;
    /** Tells the running router that all `adopted` sockets accept here, and waits for it to close
        its copies. @throws channel_error if it does not confirm within `timeout` (it may then
        still accept on its copies; nothing is refused either way). */
    takeover_released accept(std::uint32_t adopted, std::chrono::milliseconds timeout = std::chrono::seconds(10));

    /// What receive_session_batches did, for the log.
    struct sessions_received {
        std::uint32_t adopted = 0;
        std::uint32_t refused = 0;
        std::uint64_t bytes = 0;           ///< of the adopted sessions' messages
        std::uint32_t stayed = 0;          ///< sessions the old process still holds (its sessions_done)
        bool done = false;                 ///< the old process said sessions_done
        std::chrono::milliseconds took{};  ///< from the call to the last session adopted
    };
    /// What becomes of the topic service's messages (version 3); each may be empty.
    struct topic_receiver {
        std::function<void(std::vector<std::byte> image)> install;  ///< the whole catalog image, once
        std::function<void(const takeover_topic_connection&, unique_fd)> adopt;
        std::function<void(bool moved)> done;  ///< topics_done: the topic service's move is over
    };
    /// Upper bound of a topic catalog image, over all its parts.
    static constexpr std::size_t catalog_image_max = std::size_t{256} << 20;
    /// Adopts several moved sessions at once (their descriptors consumed): one entry per session,
    /// in order, empty or why it cannot be honoured.
    using session_batch_adopter = std::function<std::vector<std::string>(std::vector<std::pair<takeover_session, unique_fd>>&)>;
    /** After accept(): receives the sessions the old process moves (version 2), answering each
        session_taken or session_refused (adopt's reason), until sessions_done, the channel
        closes, nothing comes for `idle_limit`, or `cancel` (a descriptor) becomes readable. The
        messages already waiting on the channel (at most `max_batch`, the first waited for) are
        adopted together, then answered in order: the old process sends several before it reads
        the answers (docs/takeover.md). A message that is no session, or a session without
        exactly one descriptor, ends it. The topic service's messages in between go to `topics`:
        the catalog's parts, concatenated, to install once the last one came; each connection
        (exactly one descriptor) to adopt; topics_done to done. */
    sessions_received receive_session_batches(const session_batch_adopter& adopt, int cancel,
                                              std::chrono::milliseconds idle_limit, std::size_t max_batch,
                                              const topic_receiver& topics = {});

private:
    unique_fd sock_;
};

}  // namespace moraine::net
