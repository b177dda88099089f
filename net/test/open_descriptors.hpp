#pragma once
// For the tests that pass descriptors between processes (descriptor_passing_test.cpp,
// takeover_server_test.cpp): how many this process has open, to show none is leaked.
#include <dirent.h>

namespace moraine::net::test {

/// The entries of /proc/self/fd (the directory's own descriptor while it is read included).
inline int open_descriptors() {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
        while (::readdir(d)) ++n;
        ::closedir(d);
    }
    return n;
}

}  // namespace moraine::net::test
