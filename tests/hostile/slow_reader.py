#!/usr/bin/python3
"""A client that pipelines requests and never reads its replies must not grow the router's
memory without bound, nor slow down another client (isolation, docs/style.md §6).

  slow_reader.py --router moraine --moraine-bin build/bin/moraine-router [--seconds 8]
  slow_reader.py --router glacier2 --report-only     (the same flood against glacier2router)

The flooding client creates a session and adds the back end by hand, then sends twoway
sayHello requests with 4 KiB arguments as fast as the router accepts them, never reading. A
well-behaved Ice client meanwhile calls sayHello in a loop. Checks (unless --report-only):
the router stops reading the flooder (its sends block), the router's RSS grows by less than
--max-rss-growth-mib, the other client's p99 latency stays under --max-p99-ms, and the router
still serves new sessions afterwards. Prints the figures either way.
"""
import argparse, os, select, socket, struct, sys, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
import harness as H  # noqa: E402  (before Glacier2: see harness._import_glacier2)
import scenarios as S  # noqa: E402


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def tcp_proxy(name, port):
    """A 1.1-encoded direct proxy `name:tcp -h 127.0.0.1 -p port` (ice-wire.md §9)."""
    body = H.ice_string("127.0.0.1") + struct.pack("<ii", port, 60000) + b"\x00"
    endpoint = struct.pack("<h", 1) + struct.pack("<i", 6 + len(body)) + b"\x01\x01" + body
    return (H.ice_string(name) + H.ice_string("") + b"\x00\x00\x00" + b"\x01\x00\x01\x01"
            + b"\x01" + endpoint)


def flooder(router, backend_port):
    conn = H.RawConn(router.client_port)
    conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    S.raw_create_session(conn)
    conn.send(H.request(2, "router", "Glacier2", "addProxies", b"\x01" + tcp_proxy("hello", backend_port), mode=2))
    msg = conn.read()
    H.check(isinstance(msg, bytes) and H.reply_status(msg) == (2, 0), "addProxies failed: %r" % (msg,))
    return conn


def flood(conn, seconds, stats):
    """Sends until the router stops accepting for 1 s (backpressure) or `seconds` pass."""
    sock = conn.sock
    sock.setblocking(False)
    rid, sent, pending = 3, 0, b""
    arg = H.ice_string("x" * 4096)
    end = time.monotonic() + seconds
    stats["blocked"] = False
    while time.monotonic() < end:
        if not pending:
            pending = H.request(rid, "hello", "", "sayHello", arg)
            rid += 1
        _, writable, _ = select.select([], [sock], [], 1.0)
        if not writable:
            stats["blocked"] = True
            break
        try:
            n = sock.send(pending)
        except BlockingIOError:
            continue
        sent += n
        pending = pending[n:]
    stats["sent_mib"] = sent / 1048576.0
    stats["requests"] = rid - 3


def good_client(env, router, stop, latencies, errors):
    try:
        with S.session(env, router) as (ic, _):
            hello = S.hello_prx(env, ic)
            while not stop.is_set():
                t0 = time.perf_counter()
                hello.sayHello("good")
                latencies.append((time.perf_counter() - t0) * 1000.0)
                time.sleep(0.01)
    except Exception as e:  # noqa: BLE001 - any failure of the good client is the finding
        errors.append(repr(e))


def percentile(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * p / 100.0))] if v else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--router", choices=["moraine", "glacier2"], default="moraine")
    ap.add_argument("--moraine-bin", default=os.path.join(HERE, "..", "..", "build", "bin", "moraine-router"))
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--max-rss-growth-mib", type=float, default=64.0)
    ap.add_argument("--max-p99-ms", type=float, default=250.0)
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()

    env = H.Env(a.router, os.path.abspath(a.moraine_bin))
    ok = False
    try:
        router = S.main_router(env)
        pid = router.proc.popen.pid
        conn = flooder(router, env.backend())
        stop, latencies, errors, stats = threading.Event(), [], [], {}
        good = threading.Thread(target=good_client, args=(env, router, stop, latencies, errors), daemon=True)
        good.start()
        time.sleep(0.5)
        rss_before = rss_mib(pid)
        flood(conn, a.seconds, stats)
        time.sleep(1.0)  # let queues settle while the flooder still does not read
        rss_after = rss_mib(pid)
        stop.set()
        good.join(10)
        conn.close()
        print("router=%s flooder: %d requests (%.1f MiB) sent, router stopped reading: %s; "
              "router RSS %.1f -> %.1f MiB (+%.1f); good client: %d calls, p50 %.2f ms, p99 %.2f ms, errors %d"
              % (a.router, stats["requests"], stats["sent_mib"], stats["blocked"], rss_before, rss_after,
                 rss_after - rss_before, len(latencies), percentile(latencies, 50), percentile(latencies, 99),
                 len(errors)))
        if a.report_only:
            ok = True
            return 0
        H.check(not errors, "the good client failed: %s" % errors[:1])
        H.check(stats["blocked"], "the router kept reading a client that never reads its replies")
        H.check(rss_after - rss_before < a.max_rss_growth_mib, "router RSS grew by %.1f MiB" % (rss_after - rss_before))
        H.check(latencies and percentile(latencies, 99) < a.max_p99_ms,
                "good client p99 %.1f ms" % percentile(latencies, 99))
        S.check_router_serves(env, router)
        print("PASS slow_reader")
        ok = True
        return 0
    except H.Failure as e:
        print("FAIL slow_reader: %s" % e)
        return 1
    finally:
        env.close(ok)


if __name__ == "__main__":
    sys.exit(main())
