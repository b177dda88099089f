#!/usr/bin/python3
"""WebSocket clients that stall or break the protocol are closed, logged, and hurt nobody else.

  ws_abuse.py --moraine-bin build/bin/moraine-router [--stalled 200]

moraine-router is started with a ws client endpoint and Moraine.TLS.HandshakeTimeout=1000 (ms),
which bounds the WebSocket upgrade too. The test opens --stalled TCP connections that send
nothing and 10 that send half an upgrade request and stop; meanwhile a real Ice 3.7 client over
ws must create a session and call the router within --max-connect-ms. Every stalled connection
must be closed by the router, without a 101 or an Ice byte, within the timeout plus a margin.
Then, after valid upgrades, one connection each sends: a frame longer than the router's message
size limit (Ice.MessageSizeMax=64 KiB here), a text frame, an unmasked frame, and an upgrade
asking for another subprotocol. Each must be closed, with a log line of the router naming the
reason; the router must stay up and still serve a new ws session. Moraine-only (the key and the
log lines are Moraine's).
"""
import argparse, base64, os, socket, struct, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
import harness as H  # noqa: E402  (before Glacier2: see harness._import_glacier2)
import Ice  # noqa: E402
import Glacier2  # noqa: E402

HANDSHAKE_TIMEOUT_MS = 1000
MESSAGE_SIZE_MAX_KB = 64
HALF_UPGRADE = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"


def start_router(env):
    return env.router("ws-abuse", {"Glacier2.CryptPasswords": env.passwords,
                                   "Glacier2.SessionTimeout": "30",
                                   "Ice.MessageSizeMax": str(MESSAGE_SIZE_MAX_KB),
                                   "Moraine.TLS.HandshakeTimeout": str(HANDSHAKE_TIMEOUT_MS)},
                      server=False, transport="ws")


def ws_call_ms(router):
    """Milliseconds for a fresh Ice client over ws to create a session and ping the router."""
    start = time.monotonic()
    props = ["--Ice.Default.Router=Glacier2/router:ws -h %s -p %d" % (H.HOST, router.client_port),
             "--Ice.Override.Timeout=5000"]
    with Ice.initialize(props) as ic:
        prx = Glacier2.RouterPrx.checkedCast(ic.getDefaultRouter())
        prx.createSession("alice", "secret")
        prx.ice_ping()
        prx.destroySession()
    return (time.monotonic() - start) * 1000.0


def upgraded(port, protocol="ice.zeroc.com"):
    """A socket after a successful upgrade and the router's validate connection frame."""
    s = socket.create_connection((H.HOST, port), timeout=3.0)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n\r\n"
               % (H.HOST, key, protocol)).encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            return s, data
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    while len(rest) < 16:  # 82 0e + validate connection
        chunk = s.recv(16 - len(rest))
        if not chunk:
            break
        rest += chunk
    return s, head


def frame(opcode, payload, masked=True, length=None):
    n = len(payload) if length is None else length
    head = bytes([0x80 | opcode])
    mask_bit = 0x80 if masked else 0
    if n < 126:
        head += bytes([mask_bit | n])
    elif n < 65536:
        head += bytes([mask_bit | 126]) + struct.pack(">H", n)
    else:
        head += bytes([mask_bit | 127]) + struct.pack(">Q", n)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def closed_by_router(sock, deadline, allow_101=False):
    """True if the router closes sock by deadline without sending an Ice message (or a 101);
    anything else (an HTTP error answer, a close frame) may come first."""
    def bad(data):
        if b"IceP" in data or (b" 101 " in data and not allow_101):
            return "got %r" % data[:20]
        return None
    return H.wait_closed(sock, deadline, bad)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moraine-bin", default=os.path.join(HERE, "..", "..", "build", "bin", "moraine-router"))
    ap.add_argument("--stalled", type=int, default=200)
    ap.add_argument("--max-connect-ms", type=float, default=1000.0)
    args = ap.parse_args()
    env = H.Env("moraine", os.path.abspath(args.moraine_bin))
    ok = False
    socks = []
    try:
        router = start_router(env)
        port = router.client_port
        baseline = ws_call_ms(router)
        opened = time.monotonic()
        for i in range(args.stalled + 10):
            s = socket.create_connection((H.HOST, port), timeout=2.0)
            if i >= args.stalled:
                s.sendall(HALF_UPGRADE)
            socks.append(s)
        during = [ws_call_ms(router) for _ in range(3)]
        deadline = opened + HANDSHAKE_TIMEOUT_MS / 1000.0 + 2.0
        left_open = [what for closed, what in (closed_by_router(s, deadline) for s in socks) if not closed]
        closed_at = time.monotonic() - opened
        print("ws session + call: %.0f ms before, %s ms with %d stalled upgrades; %d/%d closed by the router "
              "within %.1f s (timeout %d ms)" % (baseline, "/".join("%.0f" % d for d in during), len(socks),
                                                 len(socks) - len(left_open), len(socks), closed_at,
                                                 HANDSHAKE_TIMEOUT_MS))
        H.check(max(during) <= args.max_connect_ms,
                "a ws client waited %.0f ms behind stalled upgrades (limit %.0f)" % (max(during), args.max_connect_ms))
        H.check(not left_open, "%d stalled upgrades were not closed: %s" % (len(left_open), sorted(set(left_open))))

        cases = []
        s, _ = upgraded(port)
        # Only the header of a frame above the limit: the router must refuse it before the body.
        s.sendall(frame(2, b"", length=MESSAGE_SIZE_MAX_KB * 1024 + 100))
        cases.append(("oversized frame", s, "WebSocket message larger than the message size limit"))
        s, _ = upgraded(port)
        s.sendall(frame(1, b"IceP in a text frame"))
        cases.append(("text frame", s, "WebSocket text frame"))
        s, _ = upgraded(port)
        s.sendall(frame(2, b"IceP\x01\x00\x01\x00\x03\x00\x0e\x00\x00\x00", masked=False))
        cases.append(("unmasked frame", s, "WebSocket protocol error"))
        s, head = upgraded(port, protocol="foo")
        H.check(b" 101 " not in head, "an upgrade asking for protocol foo was answered %r" % head[:40])
        cases.append(("other subprotocol", s, "asks for protocol 'foo', not ice.zeroc.com"))
        socks += [c[1] for c in cases]
        deadline = time.monotonic() + 8.0  # Beast's close handshake waits at most 5 s for the peer
        for name, sock, _ in cases:
            closed, what = closed_by_router(sock, deadline, allow_101=True)
            H.check(closed, "%s: connection %s" % (name, what))
            sock.close()  # ends the router's WebSocket teardown, which reads until our EOF
        deadline = time.monotonic() + 3.0
        missing = [c for c in cases]
        while missing and time.monotonic() < deadline:
            time.sleep(0.1)
            log = open(router.proc.log_path, errors="replace").read()
            missing = [c for c in missing if c[2] not in log]
        for name, _, line in missing:
            H.check(False, "%s: the router's log has no line with %r" % (name, line))
        after = ws_call_ms(router)
        print("closed with a log line each: %s; ws session + call after: %.0f ms"
              % (", ".join(c[0] for c in cases), after))
        H.check(router.proc.alive(), "router died")
        ok = True
    except (H.Failure, OSError, Ice.Exception) as e:
        print("FAIL ws_abuse: %s" % e)
    finally:
        for s in socks:
            s.close()
    return env.finish("ws_abuse", ok)


if __name__ == "__main__":
    sys.exit(main())
