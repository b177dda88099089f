#include <moraine/client/session_event.hpp>

namespace moraine::client {

const char* to_string(session_event_kind k) noexcept {
    switch (k) {
    case session_event_kind::lost: return "lost";
    case session_event_kind::reconnecting: return "reconnecting";
    case session_event_kind::restored: return "restored";
    case session_event_kind::gave_up: return "gave_up";
    }
    return "unknown";
}

}  // namespace moraine::client
