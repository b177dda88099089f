// The admin object's IceBox.ServiceManager facet (see admin_object.hpp): what iceboxadmin and
// IceGrid call on an icebox, served when Moraine hosts the topic service in an icebox's place.
#include <moraine/net/admin_object.hpp>

#include <moraine/net/local_reply.hpp>
#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>

#include <algorithm>
#include <array>

namespace moraine::net {

namespace {
// Type ids, sorted as ice_ids returns them.
constexpr std::array<std::string_view, 2> service_manager_ids{"::Ice::Object", "::IceBox::ServiceManager"};
}  // namespace

std::optional<protocol::byte_buffer> admin_object::service_manager_op(const protocol::request_view& r) {
    bool malformed = false;
    if (auto reply = answer_object_op(r, service_manager_ids, service_manager_ids[1], malformed)) return reply;
    const auto enc = r.params.encoding;
    if (r.operation == "shutdown") return shut_down(r, "IceBox::ServiceManager::shutdown");
    if (r.operation == "getSliceChecksums")  // Ice::SliceChecksumDict: none, as Ice builds without checksums
        return reply_ok(r.request_id, enc, [](protocol::output_stream& os) { os.write_size(0); });
    if (r.operation != "startService" && r.operation != "stopService")
        return reply_not_exist(r, protocol::reply_status::operation_not_exist);
    protocol::input_stream in(r.params.payload(), enc);
    const std::string service(in.read_string());
    if (!in.ok()) return reply_unknown_local(r.request_id, "::Ice::MarshalException");
    const bool hosted = std::find(hooks_.services.begin(), hooks_.services.end(), service) != hooks_.services.end();
    if (!hosted) return reply_user_exception(r.request_id, enc, "::IceBox::NoSuchServiceException", std::nullopt, false);
    if (r.operation == "startService")
        return reply_user_exception(r.request_id, enc, "::IceBox::AlreadyStartedException", std::nullopt, false);
    return reply_unknown_local(r.request_id, "moraine: the " + service +
                                                 " service runs as long as the process; shut the process down instead");
}

}  // namespace moraine::net
