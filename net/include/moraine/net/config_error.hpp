#pragma once
// The one error type every configuration reader raises, whichever service owns the key.
#include <stdexcept>
#include <string>

namespace moraine::net {

/// A configuration error: the file (with its line when known), the key and the reason,
/// as "FILE[:LINE]: KEY: REASON". Start-up stops on it.
class config_error : public std::runtime_error {
public:
    config_error(const std::string& where, const std::string& key, const std::string& reason)
        : std::runtime_error(where + ": " + key + ": " + reason) {}
};

}  // namespace moraine::net
