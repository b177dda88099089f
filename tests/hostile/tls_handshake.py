#!/usr/bin/python3
"""TLS handshakes that never finish must not hold up anyone else, and must not stay open.

  tls_handshake.py --moraine-bin build/bin/moraine-router [--stalled 200]

moraine-router is started with an ssl client endpoint and Moraine.TLS.HandshakeTimeout=1000 (ms).
The test opens --stalled TCP connections to the ssl port that send nothing, and a few that send
half a ClientHello and stop. Meanwhile a real Ice 3.7 IceSSL client must complete its handshake,
create a session from its certificate and call the router within --max-connect-ms: handshakes
are coroutines of the shards, never blocking calls. Then every stalled connection must have been
closed by the router (no byte sent, least of all an Ice validate connection) within the timeout
plus a margin, and the router must still serve a new TLS session. Moraine-only: the key is
Moraine's (glacier2router bounds handshakes with Ice.Override.ConnectTimeout instead).
"""
import argparse, os, socket, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
import harness as H  # noqa: E402  (before Glacier2: see harness._import_glacier2)
import scenarios as S  # noqa: E402
import scenarios_tls as T  # noqa: E402

HANDSHAKE_TIMEOUT_MS = 1000
# The first 40 bytes of a TLS 1.2 ClientHello record header + handshake header: the router's
# OpenSSL waits for the rest, which never comes.
HALF_CLIENT_HELLO = bytes.fromhex("160301012c01000128030300") + b"\x00" * 28


def start_router(env):
    c = T.certs(env)
    props = c.ice_props("server", verify_peer=1)
    props.update({"Glacier2.SSLPermissionsVerifier": "Glacier2/NullSSLPermissionsVerifier",
                  "Moraine.TLS.HandshakeTimeout": str(HANDSHAKE_TIMEOUT_MS),
                  "Glacier2.SessionTimeout": "30"})
    return env.router("tls-handshake", props, server=False, transport="ssl", tls=c.probe_context())


def stall(port, n, half_hello):
    socks = []
    for _ in range(n):
        s = socket.create_connection((H.HOST, port), timeout=2.0)
        if half_hello:
            s.sendall(HALF_CLIENT_HELLO)
        socks.append(s)
    return socks


def secure_call_ms(env, router):
    """Milliseconds for a fresh IceSSL client to connect, create a session and ping the router."""
    start = time.monotonic()
    with T.tls_client(env, router) as (ic, prx):
        T.secure_session(prx, "client_a")
        prx.ice_ping()
        prx.destroySession()
    return (time.monotonic() - start) * 1000.0


def closed_without_a_byte(sock, deadline):
    """True if the router closes sock by deadline having sent at most a TLS alert (record type
    21): never an Ice message."""
    def bad(data):
        if data.startswith(b"IceP"):
            return "got an Ice message"
        return None if data[0] == 21 else "got %r" % data[:8]
    return H.wait_closed(sock, deadline, bad)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--moraine-bin", default=os.path.join(HERE, "..", "..", "build", "bin", "moraine-router"))
    ap.add_argument("--stalled", type=int, default=200)
    ap.add_argument("--max-connect-ms", type=float, default=1000.0)
    args = ap.parse_args()
    env = H.Env("moraine", os.path.abspath(args.moraine_bin))
    ok = False
    try:
        router = start_router(env)
        baseline = secure_call_ms(env, router)
        opened = time.monotonic()
        stalled = stall(router.client_port, args.stalled, False) + stall(router.client_port, 10, True)
        during = [secure_call_ms(env, router) for _ in range(3)]
        deadline = opened + HANDSHAKE_TIMEOUT_MS / 1000.0 + 2.0
        results = [closed_without_a_byte(s, deadline) for s in stalled]
        closed_at = time.monotonic() - opened
        left_open = [what for closed, what in results if not closed]
        after = secure_call_ms(env, router)
        print("TLS session + call: %.0f ms before, %s ms with %d stalled handshakes, %.0f ms after; "
              "%d/%d stalled connections closed by the router within %.1f s (timeout %d ms)%s"
              % (baseline, "/".join("%.0f" % d for d in during), len(stalled), after,
                 len(stalled) - len(left_open), len(stalled), closed_at, HANDSHAKE_TIMEOUT_MS,
                 "; left: %s" % sorted(set(left_open)) if left_open else ""))
        H.check(max(during) <= args.max_connect_ms,
                "a TLS client waited %.0f ms behind stalled handshakes (limit %.0f)" % (max(during), args.max_connect_ms))
        H.check(not left_open, "%d stalled handshakes were not closed: %s" % (len(left_open), sorted(set(left_open))))
        H.check(router.proc.alive(), "router died")
        ok = True
    except (H.Failure, OSError) as e:
        print("FAIL tls_handshake: %s" % e)
    finally:
        for s in locals().get("stalled", []):
            s.close()
    return env.finish("tls_handshake", ok)


if __name__ == "__main__":
    sys.exit(main())
