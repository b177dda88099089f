#include <moraine/router/forward_options.hpp>

#include <string>

namespace moraine::router {

forward_options decide_forward(bool twoway, const protocol::context_view& ctx, bool buffered, bool always_batch) {
    const bool batch_all = buffered && always_batch;
    forward_options o;
    o.kind = !twoway ? (batch_all ? forward_kind::batch_oneway : forward_kind::oneway) : forward_kind::twoway;
    const auto fwd = ctx.find("_fwd");
    if (!fwd) return o;
    for (char letter : *fwd) {
        switch (letter) {
        case 't': o.kind = forward_kind::twoway; break;
        case 'o': o.kind = batch_all ? forward_kind::batch_oneway : forward_kind::oneway; break;
        case 'd': o.kind = batch_all ? forward_kind::batch_datagram : forward_kind::datagram; break;
        case 'O': o.kind = buffered ? forward_kind::batch_oneway : forward_kind::oneway; break;
        case 'D': o.kind = buffered ? forward_kind::batch_datagram : forward_kind::datagram; break;
        case 's': o.secure = true; break;
        case 'z': o.compress = true; break;
        default: o.unknown.push_back(letter); break;
        }
    }
    return o;
}

namespace {

// Length-prefixed, so no field can run into the next whatever bytes it holds.
void append_field(std::string& key, std::string_view part) {
    key.append(std::to_string(part.size()));
    key.push_back(':');
    key.append(part);
}

}  // namespace

std::string target_key(const protocol::identity_view& id, std::string_view facet, const forward_options& how,
                       std::string_view where) {
    std::string key;
    key.reserve(id.category.size() + id.name.size() + facet.size() + where.size() + 16);
    for (std::string_view part : {id.category, id.name, facet, where}) append_field(key, part);
    key.push_back(static_cast<char>('0' + static_cast<int>(how.kind)));
    key.push_back(how.secure ? 's' : '-');
    key.push_back(how.compress ? 'z' : '-');
    return key;
}

std::string override_key(const protocol::context_view& ctx, const protocol::identity_view& id, std::string_view facet,
                         const forward_options& how, std::string_view where) {
    const auto value = ctx.find("_ovrd");
    if (!value || value->empty() || how.is_twoway()) return {};
    std::string key;
    append_field(key, *value);
    key.append(target_key(id, facet, how, where));
    return key;
}

}  // namespace moraine::router
