// process_* figures from /proc/self, as Prometheus' client libraries export them.
#include <moraine/net/metrics.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace moraine::net {

namespace {

constexpr metric_family cpu{"process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds."};
constexpr metric_family rss{"process_resident_memory_bytes", "gauge", "Resident memory size in bytes."};
constexpr metric_family vsize{"process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes."};
constexpr metric_family open_fds{"process_open_fds", "gauge", "Number of open file descriptors."};
constexpr metric_family max_fds{"process_max_fds", "gauge", "Maximum number of open file descriptors."};
constexpr metric_family start_time{"process_start_time_seconds", "gauge",
                                   "Start time of the process since the Unix epoch, in seconds."};

/// Fields 14, 15 (utime, stime), 22 (starttime) and 23 (vsize) of /proc/self/stat, after the
/// command name, which may itself hold blanks and parentheses: parse from its last ')'.
bool read_stat(double& cpu_s, double& start_ticks, double& vsize_bytes) {
    std::ifstream in("/proc/self/stat");
    std::string line;
    if (!std::getline(in, line)) return false;
    const auto close = line.rfind(')');
    if (close == std::string::npos) return false;
    std::istringstream fields(line.substr(close + 2));
    std::string f;
    double utime = 0, stime = 0;
    for (int i = 3; fields >> f; ++i) {  // field 3 is the state, right after the name
        if (i == 14) utime = std::stod(f);
        if (i == 15) stime = std::stod(f);
        if (i == 22) start_ticks = std::stod(f);
        if (i == 23) {
            vsize_bytes = std::stod(f);
            break;
        }
    }
    cpu_s = (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
    return true;
}

double resident_bytes() {
    std::ifstream in("/proc/self/statm");
    double size = 0, resident = 0;
    in >> size >> resident;
    return resident * static_cast<double>(sysconf(_SC_PAGESIZE));
}

double boot_time() {
    std::ifstream in("/proc/stat");
    std::string key;
    double value = 0;
    while (in >> key) {
        if (key == "btime" && in >> value) return value;
        in.ignore(1 << 16, '\n');
    }
    return 0;
}

double count_fds() {
    std::error_code ec;
    double n = 0;
    for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end; it.increment(ec)) ++n;
    return n;
}

}  // namespace

metric_sink process_metrics() {
    metric_sink s;
    double cpu_s = 0, start_ticks = 0, vsize_bytes = 0;
    if (read_stat(cpu_s, start_ticks, vsize_bytes)) {
        s.add(cpu, cpu_s);
        s.add(vsize, vsize_bytes);
        if (const double btime = boot_time(); btime > 0)
            s.add(start_time, btime + start_ticks / static_cast<double>(sysconf(_SC_CLK_TCK)));
    }
    s.add(rss, resident_bytes());
    s.add(open_fds, count_fds() - 1);  // minus the directory handle the count itself opened
    if (rlimit lim{}; getrlimit(RLIMIT_NOFILE, &lim) == 0) s.add(max_fds, static_cast<double>(lim.rlim_cur));
    return s;
}

}  // namespace moraine::net
