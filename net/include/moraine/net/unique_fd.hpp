#pragma once
// One owned POSIX descriptor: closed exactly once, by its owner. The takeover channel moves
// descriptors between processes, and a leaked listening socket would keep a port open forever.
#include <unistd.h>

#include <utility>

namespace moraine::net {

/// Owns a file descriptor (-1 = none) and closes it when destroyed or reset. Move-only.
class unique_fd {
public:
    unique_fd() noexcept = default;
    explicit unique_fd(int fd) noexcept : fd_(fd) {}
    unique_fd(unique_fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    unique_fd& operator=(unique_fd&& o) noexcept {
        if (this != &o) reset(std::exchange(o.fd_, -1));
        return *this;
    }
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd() { reset(); }

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    /// Gives the descriptor up to the caller, who closes it from then on.
    int release() noexcept { return std::exchange(fd_, -1); }
    /// Closes the descriptor held, if any, and holds `fd` instead.
    void reset(int fd = -1) noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }

private:
    int fd_ = -1;
};

}  // namespace moraine::net
