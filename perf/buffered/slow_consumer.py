#!/usr/bin/python3
"""slow_consumer.py: the slow side of perf/buffered_compare.py. It speaks the Ice 1.0 protocol itself
(docs/ice-wire.md) so that it can count what crosses the router -> consumer wire: Ice messages,
batch messages and the Bench::Updates::update calls inside them (perf/rpc/Updates.ice).

  backend:  slow_consumer.py backend --sessions K --updates B --keys N [--port 0]
            a server (the back end the router forwards the clients' updates to): accepts the
            router's connections, sends the validate connection message, answers twoway requests
            (the senders' setup ice_ping) with an empty OK. ONE service clock for all connections:
            a single dispatch thread, as an Ice server with Ice.ThreadPool.Server.Size=1.
  clients:  slow_consumer.py clients --router "tcp -h 127.0.0.1 -p 4063" --sessions K --updates B
            --keys N --categories-out FILE
            K Glacier2 clients: one connection each, createSession(perf, perf) and
            getCategoryForClient, the categories written to FILE (one a line, the order of the
            key prefixes s0.. that update-burst uses); then they receive the callbacks. One
            service clock PER connection: K independent slow clients.

Slowness: a message costs --msg-cost-us plus --update-cost-us per update in it, of service time
on its clock; a connection is not read while its clock is ahead of real time, like an Ice peer
that reads the next message only after dispatching the previous one (so the router sees TCP
back-pressure). Each message is read exactly (14-byte header, then the rest): nothing is read
ahead. The kernel's receive buffer is --rcvbuf bytes (0: the kernel's default). Sleeps are
whole milliseconds (epoll); time overslept is credited to the next messages, so the rate over
many messages is the modelled one. If Python itself is slower than the model, it is what it is:
`own_cpu_s` in the result tells.

An update is the last of its key when seq >= B - N (update-burst sends seq 0..B-1, key k<seq % N>),
so the consumer is `done` when it has had the last update of each of the K x N keys.

Output (stdout, flushed): `listening PORT` (backend), `ready K` (clients), `done T` (T: monotonic ns
at which it had the last key's last update) and `result {json}` when done and again on each SIGUSR1
(so the caller can collect the counts after a timeout). Runs until SIGTERM/SIGINT.
"""
import argparse
import json
import resource
import selectors
import signal
import socket
import struct
import sys
import time

HEADER = struct.Struct("<4sBBBBBBi")  # magic, proto 1.0, encoding 1.0, type, compression, size
INT = struct.Struct("<i")
MAGIC = b"IceP"
REQUEST, BATCH, REPLY, VALIDATE, CLOSE = 0, 1, 2, 3, 4
TYPE_NAMES = {REQUEST: "request", BATCH: "batch", REPLY: "reply", VALIDATE: "validate", CLOSE: "close"}
IDEMPOTENT = 2
HEADER_SIZE = 14


# ---------------------------------------------------------------------------------------------
# Encoding: just what the consumer reads and writes


def message(mtype, body=b""):
    return HEADER.pack(MAGIC, 1, 0, 1, 0, mtype, 0, HEADER_SIZE + len(body)) + body


def enc_size(n):
    return bytes([n]) if n < 255 else b"\xff" + INT.pack(n)


def enc_string(s):
    b = s.encode()
    return enc_size(len(b)) + b


def encaps(params=b""):
    return INT.pack(6 + len(params)) + b"\x01\x01" + params  # encoding 1.1


def request(rid, name, category, op, mode, params=b""):
    body = (INT.pack(rid) + enc_string(name) + enc_string(category) + b"\x00" + enc_string(op) + bytes([mode])
            + b"\x00" + encaps(params))
    return message(REQUEST, body)


def read_size(b, p):
    n = b[p]
    if n != 255:
        return n, p + 1
    return INT.unpack_from(b, p + 1)[0], p + 5


def skip_string(b, p):
    n, p = read_size(b, p)
    return p + n


def read_request(b, p):
    """(operation, params start, params end, end) of the request fields at p (after the request id)."""
    p = skip_string(b, skip_string(b, p))  # identity: name, category
    nfacet, p = read_size(b, p)
    for _ in range(nfacet):
        p = skip_string(b, p)
    n, p = read_size(b, p)
    op = bytes(b[p:p + n])
    p += n + 1  # and the mode byte
    nctx, p = read_size(b, p)
    for _ in range(2 * nctx):
        p = skip_string(b, p)
    size = INT.unpack_from(b, p)[0]
    return op, p + 6, p + size, p + size


def read_update(b, p):
    """(key, seq) of update(string key, int seq, Bytes payload)'s parameters at p."""
    n, p = read_size(b, p)
    return bytes(b[p:p + n]), INT.unpack_from(b, p + n)[0]


# ---------------------------------------------------------------------------------------------
# Service clocks and connections


class Clock:
    """A serial server's time: `busy_until` runs ahead of real time by the cost of what it has
    processed. `idle` (it was waiting for data) means the next message starts now, not at
    busy_until: idle time is not credit."""

    def __init__(self, loop):
        self.loop, self.busy_until, self.idle, self.conns, self.sleeping = loop, 0.0, True, [], False

    def charge(self, cost, now):
        start = max(self.busy_until, now) if self.idle else self.busy_until
        self.busy_until, self.idle = start + cost, False

    def busy(self, now):
        return self.busy_until > now

    def sleep(self):
        if not self.sleeping:
            self.sleeping = True
            for c in self.conns:
                self.loop.sel.unregister(c.sock)
            self.loop.sleepers.append(self)

    def wake(self):
        self.sleeping = False
        for c in self.conns:
            self.loop.sel.register(c.sock, selectors.EVENT_READ, c.on_readable)


class Conn:
    """One connection: reads one message at a time, while its clock allows."""

    def __init__(self, loop, sock, clock):
        self.loop, self.sock, self.clock = loop, sock, clock
        self.buf, self.need = bytearray(), HEADER_SIZE
        sock.setblocking(False)
        clock.conns.append(self)
        if not clock.sleeping:  # else it is registered when the clock wakes, with the others
            loop.sel.register(sock, selectors.EVENT_READ, self.on_readable)

    def on_readable(self):
        while True:
            now = time.monotonic()
            if self.clock.busy(now):
                self.clock.sleep()
                return
            try:
                chunk = self.sock.recv(self.need - len(self.buf))
            except BlockingIOError:
                self.clock.idle = True
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.close()
                return
            self.buf += chunk
            if len(self.buf) < self.need:
                continue
            if self.need == HEADER_SIZE:
                magic, _, _, _, _, _, _, size = HEADER.unpack_from(self.buf)
                if magic != MAGIC or size < HEADER_SIZE:
                    sys.exit("slow_consumer: not an Ice message: %r" % bytes(self.buf))
                self.need = size
                if size > HEADER_SIZE:
                    continue
            msg, self.buf, self.need = self.buf, bytearray(), HEADER_SIZE
            if not self.loop.on_message(self, msg, now):
                return

    def close(self):
        if not self.clock.sleeping:
            self.loop.sel.unregister(self.sock)
        self.clock.conns.remove(self)
        self.sock.close()


class Consumer:
    def __init__(self, a):
        self.a = a
        self.sel = selectors.DefaultSelector()
        self.sleepers = []
        self.msg_cost, self.update_cost = a.msg_cost_us / 1e6, a.update_cost_us / 1e6
        self.final_from = a.updates - a.keys  # seq >= this: the key's last update
        self.expected_finals = a.sessions * min(a.keys, a.updates)
        self.last_seq = {}
        self.finals = set()
        self.stats = dict(messages={}, update_messages=0, batch_messages=0, updates=0, updates_in_batches=0,
                          twoway_requests=0, other_requests=0, bytes=0, max_message=0, reordered=0, repeated=0,
                          connections=0, first_update_ns=None, last_update_ns=None, done_ns=None, busy_s=0.0)
        rfd, self.wake_w = socket.socketpair()
        rfd.setblocking(False)
        self.wake_r = rfd
        self.sel.register(rfd, selectors.EVENT_READ, self.on_signal)
        self.want_result = False

    # -- messages ------------------------------------------------------------------------------

    def on_message(self, conn, msg, now):
        """Handles one whole message; False if the connection is gone."""
        st = self.stats
        mtype, size = msg[8], len(msg)
        name = TYPE_NAMES.get(mtype, "other")
        st["messages"][name] = st["messages"].get(name, 0) + 1
        st["bytes"] += size
        st["max_message"] = max(st["max_message"], size)
        if msg[9] == 2:  # bzip2: only sent on request (_fwd=z), which the benchmark never does
            st["messages"]["compressed"] = st["messages"].get("compressed", 0) + 1
            return True
        updates = 0
        if mtype == REQUEST:
            rid = INT.unpack_from(msg, HEADER_SIZE)[0]
            updates = self.on_request(msg, HEADER_SIZE + 4, conn, rid)
        elif mtype == BATCH:
            st["batch_messages"] += 1
            p = HEADER_SIZE + 4
            for _ in range(INT.unpack_from(msg, HEADER_SIZE)[0]):
                n, p = self.on_batched(msg, p)
                updates += n
            st["updates_in_batches"] += updates
        elif mtype == CLOSE:
            conn.close()
            return False
        if updates:
            st["update_messages"] += 1
        cost = self.msg_cost + updates * self.update_cost
        st["busy_s"] += cost
        conn.clock.charge(cost, now)
        return True

    def on_request(self, msg, p, conn, rid):
        op, a, b, _ = read_request(msg, p)
        if op == b"update":
            self.on_update(msg, a)
            n = 1
        else:
            self.stats["other_requests"] += 1
            n = 0
        if rid != 0:  # twoway (the senders' setup ice_ping): an empty OK, or true for ice_isA
            self.stats["twoway_requests"] += 1
            result = b"\x01" if op == b"ice_isA" else b""
            conn.sock.sendall(message(REPLY, INT.pack(rid) + b"\x00" + encaps(result)))
        return n

    def on_batched(self, msg, p):
        op, a, _, end = read_request(msg, p)
        if op == b"update":
            self.on_update(msg, a)
            return 1, end
        self.stats["other_requests"] += 1
        return 0, end

    def on_update(self, msg, p):
        key, seq = read_update(msg, p)
        st = self.stats
        t = time.monotonic_ns()
        st["updates"] += 1
        if st["first_update_ns"] is None:
            st["first_update_ns"] = t
        st["last_update_ns"] = t
        last = self.last_seq.get(key)
        if last is not None:
            if seq < last:
                st["reordered"] += 1
            elif seq == last:
                st["repeated"] += 1
        self.last_seq[key] = seq if last is None else max(seq, last)
        if seq >= self.final_from and key not in self.finals:
            self.finals.add(key)
            if len(self.finals) == self.expected_finals:
                st["done_ns"] = t
                say("done %d" % t)
                self.print_result()

    # -- results, signals ----------------------------------------------------------------------

    def result(self):
        ru = resource.getrusage(resource.RUSAGE_SELF)
        return dict(self.stats, mode=self.a.mode, sessions=self.a.sessions, updates_per_session=self.a.updates,
                    keys=self.a.keys, keys_seen=len(self.last_seq), finals=len(self.finals),
                    expected_finals=self.expected_finals, done=self.stats["done_ns"] is not None,
                    msg_cost_us=self.a.msg_cost_us, update_cost_us=self.a.update_cost_us, rcvbuf=self.a.rcvbuf,
                    own_cpu_s=ru.ru_utime + ru.ru_stime)

    def print_result(self):
        say("result " + json.dumps(self.result()))

    def on_signal(self):
        try:
            while self.wake_r.recv(64):
                pass
        except BlockingIOError:
            pass
        if self.want_result:
            self.want_result = False
            self.print_result()

    # -- the loop ------------------------------------------------------------------------------

    def run(self):
        while True:
            now = time.monotonic()
            timeout = None
            for c in list(self.sleepers):
                if c.busy_until <= now:
                    self.sleepers.remove(c)
                    c.wake()
                else:
                    timeout = c.busy_until - now if timeout is None else min(timeout, c.busy_until - now)
            for key, _ in self.sel.select(timeout):
                key.data()


def say(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def set_rcvbuf(sock, n):
    if n > 0:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, n)


# ---------------------------------------------------------------------------------------------
# The two roles


def serve_backend(c, a):
    clock = Clock(c)  # one dispatch thread for every connection
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    set_rcvbuf(lsock, a.rcvbuf)  # accepted sockets inherit it (it must be set before the handshake)
    lsock.bind((a.host, a.port))
    lsock.listen(64)
    lsock.setblocking(False)

    def on_accept():
        try:
            s, _ = lsock.accept()
        except BlockingIOError:
            return
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(message(VALIDATE))
        c.stats["connections"] += 1
        Conn(c, s, clock)

    c.sel.register(lsock, selectors.EVENT_READ, on_accept)
    say("listening %d" % lsock.getsockname()[1])


def recv_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise RuntimeError("router closed the connection")
        data += chunk
    return data


def call(s, instance_name, rid, op, mode, params):
    """A blocking twoway call on the router object; the reply's encapsulation data."""
    s.sendall(request(rid, "router", instance_name, op, mode, params))
    while True:
        head = recv_exact(s, HEADER_SIZE)
        body = recv_exact(s, HEADER.unpack(head)[7] - HEADER_SIZE)
        if head[8] == REPLY:
            break  # (a validate connection message is a heartbeat: skipped)
    status = body[4]
    if status != 0:
        raise RuntimeError("%s failed: reply status %d" % (op, status))
    return body[5 + 6:]


def open_clients(c, a):
    host, port = parse_endpoint(a.router)
    cats = []
    for _ in range(a.sessions):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        set_rcvbuf(s, a.rcvbuf)  # before connect: the window is negotiated in the handshake
        s.settimeout(30)
        s.connect((host, port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if recv_exact(s, HEADER_SIZE)[8] != VALIDATE:
            raise RuntimeError("router did not validate the connection")
        call(s, a.instance_name, 1, "createSession", 0, enc_string(a.user) + enc_string(a.password))
        data = call(s, a.instance_name, 2, "getCategoryForClient", IDEMPOTENT, b"")
        n, p = read_size(data, 0)
        cats.append(data[p:p + n].decode())
        c.stats["connections"] += 1
        Conn(c, s, Clock(c))  # its own clock: an independent slow client
    with open(a.categories_out, "w") as f:
        f.write("".join(cat + "\n" for cat in cats))
    say("ready %d" % len(cats))


def parse_endpoint(ep):
    """host, port of "tcp -h HOST -p PORT"."""
    w = ep.split()
    return w[w.index("-h") + 1], int(w[w.index("-p") + 1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", choices=("backend", "clients"))
    ap.add_argument("--sessions", type=int, required=True, help="senders (backend) or clients to open (clients)")
    ap.add_argument("--updates", type=int, required=True, help="updates per session in the burst")
    ap.add_argument("--keys", type=int, required=True, help="distinct keys per session")
    ap.add_argument("--msg-cost-us", type=float, default=20.0)
    ap.add_argument("--update-cost-us", type=float, default=10.0)
    ap.add_argument("--rcvbuf", type=int, default=0, help="SO_RCVBUF of the consumer's sockets (0: default)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="backend: port to listen on (0: a free one)")
    ap.add_argument("--router", help="clients: the router's client endpoint, tcp -h HOST -p PORT")
    ap.add_argument("--instance-name", default="Glacier2")
    ap.add_argument("--user", default="perf")
    ap.add_argument("--password", default="perf")
    ap.add_argument("--categories-out", help="clients: file to write the categories to")
    a = ap.parse_args()
    if a.mode == "clients" and not (a.router and a.categories_out):
        ap.error("clients needs --router and --categories-out")

    c = Consumer(a)

    def on_usr1(signum, frame):
        c.want_result = True

    def on_term(signum, frame):
        raise SystemExit(0)

    c.wake_w.setblocking(False)
    signal.set_wakeup_fd(c.wake_w.fileno(), warn_on_full_buffer=False)
    signal.signal(signal.SIGUSR1, on_usr1)
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    if a.mode == "backend":
        serve_backend(c, a)
    else:
        open_clients(c, a)
    c.run()


if __name__ == "__main__":
    main()
