#!/usr/bin/python3
"""A client that stops reading while a back end floods it with oneway callbacks must neither grow
the router's memory without bound nor lose the newest `_ovrd` update (buffered mode:
docs/architecture.md, "Buffered mode").

  slow_callback_reader.py --router moraine --moraine-bin build/bin/moraine-router [--seconds 4]
  slow_callback_reader.py --router glacier2 --report-only     (the same floods against glacier2router)

Everything is raw Ice protocol 1.0 over sockets. A client creates a session, asks
getCategoryForClient, shrinks its SO_RCVBUF and stops reading. A "back end" connects to the
router's server endpoint and sends oneway ping(string) requests to <category>/cb, each with a
1 KiB argument that carries a sequence number, as fast as its socket accepts, for --seconds
(or until --max-offered-mib were sent).
Two cases, each on its own router configuration (Glacier2.Server.Buffered=1):

  override   every ping has the context {"_ovrd": "tick"}: the router keeps at most one queued
             ping for the slow client, replacing it with each newer one. Checks: router RSS growth
             under --max-rss-growth-mib; the client connection stays open; once the client reads,
             it gets no more pings than the two socket buffers and one queued ping can hold
             (far fewer than sent, and under a quarter of them), the last of which carries
             the final sequence number sent; a twoway call on that connection still answers.
  plain      the same flood without a context: nothing can be replaced, so the router must close
             the slow client (Moraine: over limits.connection_queue_max, 16 MiB by default)
             instead of queueing everything. Checks: RSS growth under --max-plain-rss-growth-mib; the
             client's socket ends (EOF or reset) once it reads; the router still creates sessions.

RSS growth is the router's VmHWM (peak) after the flood minus its VmRSS before it (each case has
a fresh router). In Moraine the back end's connection lands on any shard (SO_REUSEPORT) and the
session lives on the shard its category names; when the two differ, each ping is posted from one
shard to the other before it reaches the session's queue, so the RSS bound covers that hop too.
Which of the two a run gets is chance: run the script several times.

Prints the figures either way (--report-only: no checks). Every process it starts is stopped by
PID; a watchdog (--watchdog, 60 s) bounds the whole run.
"""
import argparse, os, select, signal, socket, struct, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
import harness as H  # noqa: E402  (before Glacier2: see harness._import_glacier2)
import scenarios as S  # noqa: E402

PAYLOAD = 1024        # bytes of each ping's string argument
CHUNK = 64            # pings per send() call
CLIENT_RCVBUF = 4096  # SO_RCVBUF of the slow client, set before connect


def rss_mib(pid, field="VmRSS"):
    """The router's resident set (VmRSS), or its peak over the process's life (VmHWM), in MiB."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


# ---------------------------------------------------------------------------------------------
# Raw messages

def request_with_context(rid, name, category, op, params=b"", mode=0, context=None):
    """A request message like harness.request(), with a context (ice-wire.md §4)."""
    ctx = dict(context or {})
    body = struct.pack("<i", rid) + H.ice_string(name) + H.ice_string(category) + b"\x00"
    body += H.ice_string(op) + bytes([mode]) + ice_size(len(ctx))
    for k, v in ctx.items():
        body += H.ice_string(k) + H.ice_string(v)
    body += struct.pack("<i", 6 + len(params)) + b"\x01\x01" + params
    return H.header(0, 14 + len(body)) + body


def ice_size(n):
    return bytes([n]) if n < 255 else b"\xff" + struct.pack("<i", n)


class PingMaker:
    """Oneway ping(string) requests to <category>/cb, all of the same size: a fixed prefix, then
    the argument "seq=<10 digits>;xxx...x" (PAYLOAD bytes)."""

    def __init__(self, category, context):
        sample = request_with_context(0, "cb", category, "ping", H.ice_string("s" * PAYLOAD), context=context)
        self.size = len(sample)
        self.prefix = sample[:self.size - PAYLOAD]
        self.pad = b"x" * (PAYLOAD - 15)

    def make(self, seq):
        return self.prefix + b"seq=%010d;" % seq + self.pad


class Reader:
    """Parses what the router sends: returns ('ping', seq) for a ping request, ('reply', rid)
    for a reply, or ('other', type); each request of a batch counts as a ping."""

    def __init__(self, data):
        self.d, self.i = data, 0

    def size(self):
        n = self.d[self.i]
        self.i += 1
        if n == 255:
            n = struct.unpack_from("<i", self.d, self.i)[0]
            self.i += 4
        return n

    def string(self):
        n = self.size()
        s = self.d[self.i:self.i + n]
        self.i += n
        return s

    def request(self, with_id):
        if with_id:
            self.i += 4
        self.string(), self.string()                    # identity
        for _ in range(self.size()):                     # facet
            self.string()
        op = self.string()
        self.i += 1                                      # mode
        for _ in range(self.size()):                     # context
            self.string(), self.string()
        size = struct.unpack_from("<i", self.d, self.i)[0]
        start = self.i
        self.i += 6
        arg = self.string() if op == b"ping" else b""
        self.i = start + size
        return op, arg


def seq_of(arg):
    return int(arg[4:14]) if arg.startswith(b"seq=") else None


def messages(msg):
    """The (kind, value) items of one whole message."""
    t = msg[8]
    if t == 2:
        return [("reply", struct.unpack_from("<i", msg, 14)[0])]
    if t not in (0, 1):
        return [("other", t)]
    r = Reader(msg)
    r.i = 14
    count = 1
    if t == 1:
        count = struct.unpack_from("<i", msg, 14)[0]
        r.i = 18
    out = []
    for _ in range(count):
        op, arg = r.request(with_id=(t == 0))
        out.append(("ping", seq_of(arg)) if op == b"ping" else ("other", op))
    return out


# ---------------------------------------------------------------------------------------------
# The two sides

class SlowClient(H.RawConn):
    """A RawConn whose SO_RCVBUF is set before connect (so the advertised window stays small)."""

    def __init__(self, port, timeout=3.0):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, CLIENT_RCVBUF)
        self.sock.settimeout(timeout)
        self.sock.connect((H.HOST, port))
        first = self.read()
        if first != H.VALIDATE:
            self.close()
            raise H.Failure("expected validate connection on connect, got %r" % (first,))


def slow_client(router):
    conn = SlowClient(router.client_port)
    S.raw_create_session(conn)
    conn.send(H.request(2, "router", "Glacier2", "getCategoryForClient", mode=1))
    msg = conn.read()
    H.check(isinstance(msg, bytes) and H.reply_status(msg) == (2, 0), "getCategoryForClient failed: %r" % (msg,))
    # Reply body: encapsulation (size, encoding) holding the string.
    r = Reader(msg)
    r.i = 19 + 6
    category = r.string().decode()
    H.check(category, "getCategoryForClient returned an empty category")
    return conn, category


def backend_conn(router):
    """A plain TCP connection to the server endpoint; the router validates it first."""
    return H.RawConn(router.server_port)


def flood(sock, maker, seconds, max_mib, pid, stats):
    """Sends pings (whole messages only) as fast as sock accepts, for `seconds` or until max_mib
    were sent; samples the router's RSS every 100 ms. The last message is always sent completely."""
    sock.setblocking(False)
    seq, sent_bytes, pending = 0, 0, b""
    end = time.monotonic() + seconds
    next_sample = 0.0
    stats["rss_peak"] = rss_mib(pid)
    stats["backend_closed"] = None
    while True:
        now = time.monotonic()
        if now >= next_sample:
            stats["rss_peak"] = max(stats["rss_peak"], rss_mib(pid))
            next_sample = now + 0.1
        if not pending:
            if now >= end or sent_bytes >= max_mib * 1048576:
                break
            pending = b"".join(maker.make(seq + k) for k in range(CHUNK))
            seq += CHUNK
        _, writable, _ = select.select([], [sock], [], 0.1)
        if not writable:
            continue
        try:
            n = sock.send(pending)
        except BlockingIOError:
            continue
        except (BrokenPipeError, ConnectionResetError) as e:
            stats["backend_closed"] = type(e).__name__
            seq -= (len(pending) + maker.size - 1) // maker.size
            break
        sent_bytes += n
        pending = pending[n:]
    stats["sent"] = seq
    stats["last_seq"] = seq - 1
    stats["sent_mib"] = sent_bytes / 1048576.0
    stats["rss_peak"] = max(stats["rss_peak"], rss_mib(pid))
    sock.setblocking(True)


def drain(conn, want_seq, quiet, bound):
    """Reads until want_seq was seen and nothing came for `quiet` s, or the connection ended, or
    `bound` s passed. Returns (pings received, last seq, end: None/'closed'/'reset', replies)."""
    received, last, ended, replies = 0, None, None, []
    end = time.monotonic() + bound
    while time.monotonic() < end:
        seen_all = want_seq is not None and last == want_seq
        msg = conn.read(timeout=quiet if seen_all else min(1.0, max(0.05, end - time.monotonic())))
        if msg == "timeout":
            if seen_all or want_seq is None:
                break
            continue
        if not isinstance(msg, bytes):
            ended = msg
            break
        for kind, value in messages(msg):
            if kind == "ping":
                received += 1
                last = value
            elif kind == "reply":
                replies.append(value)
    return received, last, ended, replies


def router_props(env):
    return {"Glacier2.CryptPasswords": env.passwords,
            "Glacier2.SessionTimeout": str(S.SESSION_TIMEOUT),
            "Glacier2.Server.Buffered": "1"}


def run_case(env, a, name, context):
    """One flood against a fresh router configuration; returns the figures."""
    router = env.router("slowcb-" + name, router_props(env))
    pid = router.proc.popen.pid
    t0 = time.monotonic()
    client, category = slow_client(router)
    backend = backend_conn(router)
    time.sleep(0.3)
    f = {"case": name, "rss_before": rss_mib(pid)}
    maker = PingMaker(category, context)
    f["ping_size"] = maker.size
    flood(backend.sock, maker, a.seconds, a.max_offered_mib, pid, f)
    time.sleep(0.5)  # the router reads the rest of the flood while the client still does not read
    f["rss_after"] = rss_mib(pid)
    # The kernel's high-water mark catches a peak between two samples (a queue that grows to its
    # limit and is freed within a few ms); the router is fresh, so the mark is this flood's.
    f["rss_peak"] = max(f["rss_peak"], f["rss_after"], rss_mib(pid, "VmHWM"))
    # The client starts reading.
    received, last, ended, _ = drain(client, f["last_seq"] if context else None, 1.0, 10.0)
    f.update(received=received, last_received=last, client_end=ended)
    f["client_answers"] = None
    if ended is None:
        # Still open: a twoway on the same connection must be answered.
        try:
            client.send(H.request(3, "router", "Glacier2", "getCategoryForClient", mode=1))
            more, last2, ended2, replies = drain(client, None, 2.0, 3.0)
            f["received"] += more
            if last2 is not None:
                f["last_received"] = last2
            f["client_answers"] = 3 in replies
            f["client_end"] = ended2
        except OSError as e:
            f["client_answers"] = False
            f["client_end"] = type(e).__name__
    client.close()
    backend.close()
    f["serves_after"] = serves(router)
    f["elapsed"] = time.monotonic() - t0
    f["router"] = router
    return f


def serves(router):
    try:
        conn = H.RawConn(router.client_port)
        try:
            S.raw_create_session(conn)
            return True
        finally:
            conn.close()
    except (H.Failure, OSError) as e:
        return "no: %s" % e


def describe(router_kind, f):
    return ("router=%s case=%s: sent %d pings (%.1f MiB, last seq %d)%s; router RSS %.1f -> peak %.1f, after %.1f MiB "
            "(growth peak +%.1f); client received %d pings, last seq %s, connection %s%s; "
            "new session afterwards: %s; %.1f s"
            % (router_kind, f["case"], f["sent"], f["sent_mib"], f["last_seq"],
               "" if not f["backend_closed"] else " (back end connection %s)" % f["backend_closed"],
               f["rss_before"], f["rss_peak"], f["rss_after"], f["rss_peak"] - f["rss_before"],
               f["received"], f["last_received"], f["client_end"] or "open",
               "" if f["client_answers"] is None else ", twoway answered: %s" % f["client_answers"],
               f["serves_after"], f["elapsed"]))


def kernel_buffer_bound():
    """What the two loopback socket buffers can hold between the router and the slow client:
    the router's send buffer at most tcp_wmem's maximum, the client's receive buffer small."""
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem") as f:
            wmem_max = int(f.read().split()[2])
    except (OSError, ValueError, IndexError):
        wmem_max = 4 << 20
    return wmem_max + 4 * CLIENT_RCVBUF


def check_override(a, f):
    growth = f["rss_peak"] - f["rss_before"]
    H.check(growth < a.max_rss_growth_mib, "override: router RSS grew by %.1f MiB" % growth)
    # What the client can get: the socket buffers' content, plus at most one queued ping and the
    # one being written (1 MiB of slack for both).
    bound = (kernel_buffer_bound() + (1 << 20)) // f["ping_size"]
    H.check(f["received"] <= bound, "override: the client received %d pings, more than the socket buffers "
            "and one queued ping can hold (%d)" % (f["received"], bound))
    H.check(f["client_end"] is None, "override: the slow client's connection ended (%s)" % f["client_end"])
    H.check(f["client_answers"] is True, "override: no reply to a twoway on the client connection after the flood")
    H.check(f["received"] > 0, "override: the client received no ping")
    H.check(f["received"] * 4 < f["sent"], "override: the client received %d of %d pings: not bounded"
            % (f["received"], f["sent"]))
    H.check(f["last_received"] == f["last_seq"], "override: the last ping received has seq %s, the last sent %d"
            % (f["last_received"], f["last_seq"]))
    H.check(f["serves_after"] is True, "override: no new session afterwards (%s)" % f["serves_after"])


def check_plain(a, f):
    growth = f["rss_peak"] - f["rss_before"]
    H.check(growth < a.max_plain_rss_growth_mib, "plain: router RSS grew by %.1f MiB" % growth)
    H.check(f["client_end"] in ("closed", "reset"),
            "plain: the slow client's connection did not end (%s)" % (f["client_end"] or "open"))
    H.check(f["received"] < f["sent"], "plain: the client received all %d pings" % f["sent"])
    H.check(f["serves_after"] is True, "plain: no new session afterwards (%s)" % f["serves_after"])


class Watchdog(Exception):
    pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--router", choices=["moraine", "glacier2"], default="moraine")
    ap.add_argument("--moraine-bin", default=os.path.join(HERE, "..", "..", "build", "bin", "moraine-router"))
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--max-rss-growth-mib", type=float, default=30.0,
                    help="override case: bound of the router's RSS growth (peak over the flood)")
    ap.add_argument("--max-plain-rss-growth-mib", type=float, default=48.0,
                    help="plain case: the same bound; Moraine queues up to limits.connection_queue_max "
                         "(16 MiB) of callbacks, plus their bookkeeping, before it closes the client")
    ap.add_argument("--max-offered-mib", type=float, default=2048.0,
                    help="stop a flood early after this much (protects the machine from an unbounded router)")
    ap.add_argument("--watchdog", type=int, default=60)
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()

    def on_alarm(signum, frame):
        raise Watchdog("watchdog: still running after %d s" % a.watchdog)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(a.watchdog)

    env = H.Env(a.router, os.path.abspath(a.moraine_bin))
    ok = False
    t0 = time.monotonic()
    try:
        fo = run_case(env, a, "override", {"_ovrd": "tick"})
        print(describe(a.router, fo), flush=True)
        fp = run_case(env, a, "plain", None)
        print(describe(a.router, fp), flush=True)
        print("total %.1f s" % (time.monotonic() - t0))
        if a.report_only:
            ok = True
            return 0
        check_override(a, fo)
        check_plain(a, fp)
        print("PASS slow_callback_reader")
        ok = True
        return 0
    except (H.Failure, Watchdog, OSError) as e:
        print("FAIL slow_callback_reader: %s" % e)
        return 1
    finally:
        signal.alarm(0)
        env.close(ok)


if __name__ == "__main__":
    sys.exit(main())
