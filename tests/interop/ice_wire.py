"""Hand-encoded Ice protocol messages (docs/ice-wire.md), for tests and benchmarks that speak Ice
on a raw socket: what a well-behaved Ice client never sends, or what must cost no Ice runtime.
Plain Python, no Ice import (perf/idle_rss.py uses it as well as harness.py)."""
import struct

# Ice's validate connection message, also its heartbeat (ice-wire.md §3).
VALIDATE = b"IceP\x01\x00\x01\x00\x03\x00\x0e\x00\x00\x00"


def header(msg_type, size, compress=0):
    """The 14-byte message header: magic, protocol 1.0, encoding 1.0, type, compression, size."""
    return b"IceP\x01\x00\x01\x00" + bytes([msg_type, compress]) + struct.pack("<i", size)


def ice_string(s):
    """A Slice string: its size (one byte, or 255 and an int) and its UTF-8 bytes."""
    b = s.encode()
    return (bytes([len(b)]) if len(b) < 255 else b"\xff" + struct.pack("<i", len(b))) + b


def request(rid, name, category, op, params=b"", mode=0, enc=b"\x01\x01"):
    """A request message (ice-wire.md §4): no facet, empty context."""
    body = struct.pack("<i", rid) + ice_string(name) + ice_string(category) + b"\x00"
    body += ice_string(op) + bytes([mode]) + b"\x00"
    body += struct.pack("<i", 6 + len(params)) + enc + params
    return header(0, 14 + len(body)) + body
