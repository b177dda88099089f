#!/usr/bin/python3
"""A TLS handshake attacker against one ssl endpoint on loopback, for the handshake-flood test
(tests/hostile/tls_handshake_flood.py) and measurement (perf/tls_handshake_flood.py).

  handshake_attack.py flood     --port P --seconds S [--procs 4] [--nice 10]
  handshake_attack.py half-open --port P --seconds S [--connections 200] [--nice 10]

flood: --procs worker processes each loop for S seconds: connect, complete a full TLS handshake
  (no session resumption: a fresh context per connection would cost the attacker, a fresh
  session is enough: Python's ssl never resumes unless given a session), read the server's
  first 14 bytes, which for Ice is the validate connection message the router sends only once
  it has completed the handshake, then abort (SO_LINGER 0: RST, no TIME_WAIT, so a long flood
  never runs out of ephemeral ports). A handshake counts as completed when those 14 bytes are
  an Ice message; so `completed` is what the router completed, not just what the client sent.
  The server's certificate is not verified (an attacker does not care; it saves client CPU).
half-open: keeps --connections TCP connections open for S seconds, half of them having sent the
  first 40 bytes of a ClientHello, half nothing; one the router closes is opened again at once
  (so the pressure stays constant), and counted as `closed_by_router`.

Prints one JSON line on stdout at the end: {"mode", "seconds", "completed", "failed", "per_s",
"handshake_ms_p50", "handshake_ms_p99"} or {"mode", "seconds", "connections", "closed_by_router",
"open_failed"}. Runs at most S + 10 s; --nice lowers its priority first, so on a small machine the
attacker takes the CPU the router and its sessions leave (a remote attacker would take none).
Workers are this process's own children, stopped by PID.
"""
import argparse
import json
import multiprocessing
import os
import selectors
import socket
import ssl
import struct
import sys
import time

HOST = "127.0.0.1"
ICE_MAGIC = b"IceP"
VALIDATE_SIZE = 14
# Record header + handshake header of a ClientHello announcing 300 bytes, then 28 of them: the
# server's TLS engine waits for the rest, which never comes (as tests/hostile/tls_handshake.py).
HALF_CLIENT_HELLO = bytes.fromhex("160301012c01000128030300") + b"\x00" * 28
CONNECT_TIMEOUT_S = 5.0
LINGER_RST = struct.pack("ii", 1, 0)


def _percentile(sorted_values, q):
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))]


def one_handshake(ctx, port):
    """One complete handshake; True if the router then sent an Ice message. Raises OSError."""
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RST)
    raw.settimeout(CONNECT_TIMEOUT_S)
    try:
        raw.connect((HOST, port))
        s = ctx.wrap_socket(raw, do_handshake_on_connect=True)
        data = b""
        while len(data) < VALIDATE_SIZE:
            chunk = s.recv(VALIDATE_SIZE - len(data))
            if not chunk:
                break
            data += chunk
        return data.startswith(ICE_MAGIC)
    finally:
        raw.close()


def flood_worker(port, end, out):
    """Loops handshakes until monotonic time end; puts (completed, failed, durations in ms) on out."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    completed, failed, durations = 0, 0, []
    while time.monotonic() < end:
        t0 = time.monotonic()
        try:
            ok = one_handshake(ctx, port)
        except (OSError, ssl.SSLError):
            ok = False
        if ok:
            completed += 1
            durations.append(1000.0 * (time.monotonic() - t0))
        else:
            failed += 1
            time.sleep(0.01)  # a refusing router: do not spin
    out.put((completed, failed, durations))


def flood(port, seconds, procs):
    """The flood mode's result dict (see the module docstring)."""
    mp = multiprocessing.get_context("fork")  # no threads exist yet in this process
    out = mp.Queue()
    t0 = time.monotonic()
    end = t0 + seconds
    workers = [mp.Process(target=flood_worker, args=(port, end, out), daemon=True) for _ in range(procs)]
    for w in workers:
        w.start()
    completed, failed, durations = 0, 0, []
    try:
        for _ in workers:
            c, f, d = out.get(timeout=seconds + CONNECT_TIMEOUT_S + 5)
            completed, failed = completed + c, failed + f
            durations += d
    finally:
        for w in workers:
            w.join(2)
            if w.is_alive():
                w.kill()  # by PID: our own child
                w.join(2)
    elapsed = time.monotonic() - t0
    durations.sort()
    return {"mode": "flood", "procs": procs, "seconds": elapsed, "completed": completed, "failed": failed,
            "per_s": completed / elapsed, "handshake_ms_p50": _percentile(durations, 0.50),
            "handshake_ms_p99": _percentile(durations, 0.99)}


def half_open(port, seconds, connections):
    """The half-open mode's result dict (see the module docstring)."""
    sel = selectors.DefaultSelector()
    closed, open_failed = 0, 0

    def opened(i):
        nonlocal open_failed
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, LINGER_RST)
        s.settimeout(CONNECT_TIMEOUT_S)
        try:
            s.connect((HOST, port))
            if i % 2:
                s.sendall(HALF_CLIENT_HELLO)
        except OSError:
            open_failed += 1
            s.close()
            return False
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, i)
        return True

    t0 = time.monotonic()
    end = t0 + seconds
    for i in range(connections):
        opened(i)
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=max(0.0, min(0.2, end - time.monotonic()))):
            try:
                data = key.fileobj.recv(4096)
            except OSError:
                data = b""
            if not data:  # closed by the router (at its handshake deadline): open another
                sel.unregister(key.fileobj)
                key.fileobj.close()
                closed += 1
                if not opened(key.data) and time.monotonic() < end:
                    time.sleep(0.01)
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    return {"mode": "half-open", "seconds": time.monotonic() - t0, "connections": connections,
            "closed_by_router": closed, "open_failed": open_failed}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=("flood", "half-open"))
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--procs", type=int, default=4, help="flood: worker processes (default 4)")
    ap.add_argument("--connections", type=int, default=200, help="half-open: connections held (default 200)")
    ap.add_argument("--nice", type=int, default=10, help="nice increment before starting (default 10; 0: none)")
    args = ap.parse_args()
    if args.nice:
        os.nice(args.nice)
    if args.mode == "flood":
        result = flood(args.port, args.seconds, args.procs)
    else:
        result = half_open(args.port, args.seconds, args.connections)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
