#include <moraine/net/locator_messages.hpp>

#include <moraine/protocol/input_stream.hpp>
#include <moraine/protocol/output_stream.hpp>
#include <moraine/protocol/user_exception.hpp>

namespace moraine::net {

namespace {

/// The results of an OK reply as a proxy; nullopt when they are not one.
std::optional<protocol::proxy> returned_proxy(const protocol::reply_view& r) {
    protocol::input_stream outer(r.payload);
    const auto encaps = outer.read_encapsulation();
    if (!outer.ok()) return std::nullopt;
    protocol::input_stream in(encaps.payload(), encaps.encoding);
    auto p = protocol::read_proxy(in);
    if (!in.ok()) return std::nullopt;
    return p;
}

/// The type id of a status-1 reply's exception, or "" when it cannot be read.
std::string_view exception_type(const protocol::reply_view& r) {
    auto ex = protocol::decode_user_exception(r.payload);
    return ex ? ex->type_id : std::string_view{};
}

/// Shared by both finds: `not_found_type` is the exception meaning "not registered", whose
/// client text is `not_registered`.
locator_answer read_find_reply(const protocol::reply_view* reply, std::string_view failure,
                               std::string_view operation, std::string_view not_found_type,
                               const std::string& not_registered) {
    if (!reply) return {std::nullopt, std::string(failure)};
    if (reply->status == protocol::reply_status::ok) {
        auto p = returned_proxy(*reply);
        if (!p) return {std::nullopt, "::Ice::MarshalException:\nthe locator's " + std::string(operation) +
                                          " returned something that is not a proxy"};
        if (p->is_nil()) return {std::nullopt, not_registered};
        return {std::move(p), {}};
    }
    if (reply->status == protocol::reply_status::user_exception && exception_type(*reply) == not_found_type)
        return {std::nullopt, not_registered};
    return {std::nullopt, "::Ice::UnknownException:\nthe locator answered " + std::string(operation) +
                              " with reply status " + std::to_string(static_cast<int>(reply->status))};
}

}  // namespace

protocol::byte_buffer find_adapter_params(std::string_view adapter_id) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    os.write_string(adapter_id);
    os.end_encapsulation(start);
    return os.take();
}

protocol::byte_buffer find_object_params(protocol::identity_view id) {
    protocol::output_stream os;
    const auto start = os.start_encapsulation(protocol::encoding_1_1);
    os.write_identity(id);
    os.end_encapsulation(start);
    return os.take();
}

std::string adapter_not_registered_text(std::string_view adapter_id) {
    return "src/Ice/LocatorInfo.cpp:671: ::Ice::NotRegisteredException:\nno object adapter with id `" +
           std::string(adapter_id) + "' is registered";
}

std::string object_not_registered_text(const protocol::identity& id) {
    return "src/Ice/LocatorInfo.cpp:684: ::Ice::NotRegisteredException:\nno object with id `" +
           protocol::identity_to_string(id.view()) + "' is registered";
}

locator_answer read_find_adapter_reply(const protocol::reply_view* reply, std::string_view failure,
                                       std::string_view adapter_id) {
    return read_find_reply(reply, failure, find_adapter_operation, "::Ice::AdapterNotFoundException",
                           adapter_not_registered_text(adapter_id));
}

locator_answer read_find_object_reply(const protocol::reply_view* reply, std::string_view failure,
                                      const protocol::identity& id) {
    return read_find_reply(reply, failure, find_object_operation, "::Ice::ObjectNotFoundException",
                           object_not_registered_text(id));
}

}  // namespace moraine::net
