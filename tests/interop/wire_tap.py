"""A TCP relay that records the Ice messages passing through it (the buffered-mode scenarios).

    with WireTap(target_port) as tap:        # listens on 127.0.0.1:tap.port
        ... point a proxy at tap.port ...
        tap.wait_for(lambda t: t.requests(t.UP, "note"), 5.0)
        tap.messages(tap.UP)                 # [Msg, ...] sent by the connecting side

Each accepted connection is relayed to 127.0.0.1:target_port, bytes copied unchanged both ways.
The relay parses the Ice message headers of each direction (ice-wire.md: 14 bytes, magic
"IceP", protocol 1.0, encoding 1.0, message type at offset 8, compression status at 9, int32
total size at 10, little-endian) and records one Msg per message: UP is what the connecting
side sent (towards the target), DOWN what the target sent back.

For an uncompressed request (type 0) Msg.request_id is the int32 after the header and
Msg.ops its [Op(identity, operation, context, params)]; for an uncompressed batch request
(type 1) Msg.count is the int32 after the header (the number of requests) and Msg.ops the
requests' Ops as far as they parse. A reply (type 2) has its request id. A compressed message (status 2) has only
its type, compression status and size. Bytes that are not an Ice message stop the parsing of
that direction (the relaying goes on); Msg.type is then "garbage".

Bounded: at most MAX_CONNECTIONS connections, sockets with timeouts, and the relay stops by
itself after `lifetime` seconds (default 60) if the scenario never stops it; leaving the `with`
block stops it (closes every socket and joins the threads).
"""
import collections
import contextlib
import socket
import struct
import threading
import time

HOST = "127.0.0.1"
HEADER_SIZE = 14
MAGIC = b"IceP"
MAX_CONNECTIONS = 16
MAX_MESSAGES = 100000  # per direction; past that, messages are counted in dropped only

REQUEST, BATCH, REPLY, VALIDATE, CLOSE = 0, 1, 2, 3, 4


# One request of a request or batch message: identity as "category/name" (or "name"), the
# operation, the request context (dict), and the encapsulated parameters (bytes, without the
# encapsulation's 6-byte header).
Op = collections.namedtuple("Op", "identity operation context params")


def first_string(params):
    """The leading string parameter of an Op's params (e.g. note's msg), or None."""
    try:
        return _Reader(params, 0).string()
    except (ValueError, IndexError):
        return None


class Msg(collections.namedtuple("Msg", "time conn type compress size count request_id ops")):
    """One Ice message seen by the tap. time: time.monotonic() when its last byte arrived;
    conn: index of the relayed connection (0 for the first accepted); count: requests in a
    batch; request_id: of a request or reply; ops: [Op] of a request or batch, None when not
    parsed (compressed, or not a request)."""

    def __repr__(self):
        parts = ["type=%s" % self.type, "z=%d" % self.compress, "size=%d" % self.size]
        if self.count is not None:
            parts.append("count=%d" % self.count)
        if self.request_id is not None:
            parts.append("rid=%d" % self.request_id)
        if self.ops:
            parts.append("op=%s" % self.ops[0].operation)
        return "Msg(%s)" % " ".join(parts)


class _Reader:
    """Decodes the Ice 1.0-encoded fields of a request body."""

    def __init__(self, data, pos):
        self.data, self.pos = data, pos

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("truncated")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def size(self):
        n = self.take(1)[0]
        return struct.unpack("<i", self.take(4))[0] if n == 255 else n

    def int32(self):
        return struct.unpack("<i", self.take(4))[0]

    def string(self):
        return self.take(self.size()).decode("utf-8", "replace")

    def request(self):
        """identity, facet, operation, mode, context, params encapsulation."""
        name = self.string()
        category = self.string()
        for _ in range(self.size()):  # facet: a sequence of at most one string
            self.string()
        op = self.string()
        self.take(1)  # mode
        ctx = {}
        for _ in range(self.size()):
            k = self.string()
            ctx[k] = self.string()
        encaps = self.int32()  # includes its own 6-byte header
        self.take(2)  # encoding version
        params = self.take(encaps - 6)
        return Op(("%s/%s" % (category, name) if category else name), op, ctx, params)


def parse_message(data):
    """(type, compress, size, count, request_id, ops) of one whole message (bytes)."""
    mtype, compress, size = data[8], data[9], len(data)
    count = request_id = ops = None
    if compress == 2:
        return mtype, compress, size, None, None, None
    try:
        r = _Reader(data, HEADER_SIZE)
        if mtype == REQUEST:
            request_id = r.int32()
            ops = [r.request()]
        elif mtype == BATCH:
            count = r.int32()
            ops = []
            for _ in range(count):
                ops.append(r.request())
        elif mtype == REPLY:
            request_id = r.int32()
    except ValueError:
        pass  # keep what was read
    return mtype, compress, size, count, request_id, ops


class WireTap:
    UP = "up"      # from the side that connected to the tap, towards the target
    DOWN = "down"  # from the target back to the side that connected

    def __init__(self, target_port, lifetime=60.0, name="tap"):
        self.target_port, self.name = target_port, name
        self._cond = threading.Condition()
        self._msgs = {self.UP: [], self.DOWN: []}
        self.dropped = 0
        self._stopping = False
        self._socks = []
        self._threads = []
        self.connections = 0
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((HOST, 0))
        self.listener.listen(MAX_CONNECTIONS)
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self._deadline = time.monotonic() + lifetime
        self._spawn(self._accept_loop)

    # -- life cycle ---------------------------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _spawn(self, fn, *args):
        t = threading.Thread(target=fn, args=args, name="%s-%s" % (self.name, fn.__name__), daemon=True)
        self._threads.append(t)
        t.start()

    def stop(self):
        """Closes the listener and every relayed socket, and joins the relay threads (bounded)."""
        with self._cond:
            self._stopping = True
            socks, self._socks = self._socks + [self.listener], []
            self._cond.notify_all()
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()
        for t in list(self._threads):
            if t is not threading.current_thread():
                t.join(2.0)

    def _expired(self):
        return self._stopping or time.monotonic() > self._deadline

    # -- relaying ------------------------------------------------------------------------

    def _accept_loop(self):
        while not self._expired():
            try:
                client, _ = self.listener.accept()
            except socket.timeout:
                continue
            except OSError:
                break
            try:
                upstream = socket.create_connection((HOST, self.target_port), timeout=3.0)
            except OSError:
                client.close()  # the connecting side sees the target's refusal as a close
                continue
            with self._cond:
                if self._stopping or self.connections >= MAX_CONNECTIONS:
                    client.close()
                    upstream.close()
                    continue
                conn = self.connections
                self.connections += 1
                self._socks += [client, upstream]
            for s in (client, upstream):
                s.settimeout(0.2)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._spawn(self._pump, client, upstream, self.UP, conn)
            self._spawn(self._pump, upstream, client, self.DOWN, conn)
        if not self._stopping:  # lifetime reached: stop by ourselves
            self._spawn(self.stop)

    def _pump(self, src, dst, direction, conn):
        buf = b""
        parsing = True
        while not self._expired():
            try:
                data = src.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                break
            if not data:
                break
            # Recorded before it is passed on: once the peer can answer, the message is in the
            # record, so a test that counts after its call returned never misses it.
            if parsing:
                buf += data
                buf, parsing = self._parse(buf, direction, conn)
            try:
                dst.sendall(data)
            except OSError:
                break
        # One side closed: close the other one too, as a plain TCP path would.
        for s in (dst, src):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def _parse(self, buf, direction, conn):
        while len(buf) >= HEADER_SIZE:
            if buf[:4] != MAGIC:
                self._record(Msg(time.monotonic(), conn, "garbage", 0, len(buf), None, None, None), direction)
                return b"", False
            size = struct.unpack("<i", buf[10:14])[0]
            if size < HEADER_SIZE:
                self._record(Msg(time.monotonic(), conn, "garbage", 0, size, None, None, None), direction)
                return b"", False
            if len(buf) < size:
                break
            fields = parse_message(buf[:size])
            self._record(Msg(time.monotonic(), conn, *fields), direction)
            buf = buf[size:]
        return buf, True

    def _record(self, msg, direction):
        with self._cond:
            if len(self._msgs[direction]) < MAX_MESSAGES:
                self._msgs[direction].append(msg)
            else:
                self.dropped += 1
            self._cond.notify_all()

    # -- what the scenarios read -----------------------------------------------------------

    def messages(self, direction, types=None):
        """The messages seen so far in direction (UP or DOWN), oldest first; types: only
        these message types (e.g. (REQUEST, BATCH))."""
        with self._cond:
            msgs = list(self._msgs[direction])
        return [m for m in msgs if types is None or m.type in types]

    def requests(self, direction, op=None):
        """Requests and batch requests in direction, optionally only those whose (first)
        operation is op. Compressed requests have no operation: they match op=None only."""
        return [m for m in self.messages(direction, (REQUEST, BATCH))
                if op is None or (m.ops and m.ops[0].operation == op)]

    def wait_for(self, pred, timeout):
        """Waits until pred(self) is truthy (re-evaluated on every new message) or timeout
        seconds passed; returns the last value of pred(self)."""
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                v = pred(self)
                left = end - time.monotonic()
                if v or left <= 0:
                    return v
                self._cond.wait(left)

    def summary(self, direction, op=None):
        """A short text for failure reasons: e.g. "batch[100], req#0, req#3(z2)"."""
        out = []
        for m in self.requests(direction, op):
            if m.type == BATCH:
                out.append("batch[%s]" % m.count)
            else:
                out.append("req#%s" % ("?" if m.request_id is None else m.request_id))
            if m.compress:
                out[-1] += "(z%d)" % m.compress
        return ", ".join(out) or "nothing"
