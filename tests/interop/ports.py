"""Listening ports for test processes, picked so they cannot collide with outgoing connections.

A port the kernel hands out for `bind(0)` comes from the ephemeral range
(`net.ipv4.ip_local_port_range`), the same range every outgoing connection takes its local port
from. Between the moment a test picks such a port and the moment a router binds it, any client,
back end or IceStorm on the machine may connect out from that very port, and the router then
fails to start with "Address already in use" (seen in CI). Ports below the ephemeral range are
never used for outgoing connections, so a free one stays free unless another listener takes it;
a process-wide set keeps this run from handing the same port out twice."""

import random
import socket
import threading

_LOWEST = 10000
_given = set()
_lock = threading.Lock()


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(host, port):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host="127.0.0.1"):
    """A TCP port below the ephemeral range that nothing listens on now and that this process has
    not handed out before. Raises RuntimeError if none is found in 2,000 tries."""
    high = _ephemeral_low()
    low = _LOWEST if high > _LOWEST + 1000 else 1024
    with _lock:
        for _ in range(2000):
            port = random.randrange(low, high)
            if port not in _given and _bindable(host, port):
                _given.add(port)
                return port
    raise RuntimeError("no free port in %d..%d" % (low, high - 1))


def listening_sockets():
    """Every listening TCP socket of this network namespace, from /proc/net/tcp and tcp6:
    (address, port, inode), the address dotted for IPv4 and bracketed hex for IPv6."""
    out = []
    for table, v6 in (("/proc/net/tcp", False), ("/proc/net/tcp6", True)):
        try:
            with open(table) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if cols[3] != "0A":  # LISTEN
                continue
            addr, port = cols[1].rsplit(":", 1)
            ip = "[%s]" % addr if v6 else ".".join(str(int(addr[i:i + 2], 16)) for i in (6, 4, 2, 0))
            out.append((ip, int(port, 16), cols[9]))
    return out
