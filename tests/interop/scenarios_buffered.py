"""Buffered-mode interop scenarios (Glacier2.Client/Server.Buffered, SleepTime, AlwaysBatch, and
the `_fwd` and `_ovrd` request context entries), registered after the topic-service ones and
before the TLS ones.

The router's leg to the back end, or to the client, goes through a wire_tap.WireTap: a TCP relay
that records each Ice message (type, compression status, request id, batch request count, and
the requests' operations and parameters), so the scenarios can tell one batch message of 100
requests from 100 oneway messages. Every expectation was checked against glacier2router 3.7.8;
see README.md, "Buffered mode scenarios".

Timing: the buffered configurations set SleepTime (SLEEP_MS) in both directions: after each
flush round the queue holds for SLEEP_MS, and what arrives meanwhile leaves together in the next
round. The scenarios never rely on a guess of where that hold stands. They first make a twoway
"primer" request: its reply means that a flush round has just happened, so a hold has just
begun, and the burst that follows (a few milliseconds of Python) lands inside it. Where a
scenario needs a request to have left before the next burst (the `_ovrd` ones), it waits until
the tap or the receiving servant has seen that request: that, too, is the start of a hold.
The back end is always polled directly (proxy.ice_router(None)), since a twoway through a
buffered router waits for the next flush round.

In glacier2router the hold belongs to one thread per direction, shared by all sessions; Moraine
holds per session. The scenarios give both the same result, since they run one at a time.
"""
import contextlib
import re
import time
import uuid

import Ice

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402
from harness import Demo, Failure, check
from scenarios import CallbackI, expect_raises, scenario, short
from wire_tap import BATCH, REPLY, REQUEST, WireTap, first_string

SESSION_TIMEOUT = 30
SLEEP_MS = 400              # Glacier2.Client/Server.SleepTime of the buffered configurations
SLEEP = SLEEP_MS / 1000.0
BURST = 100
WAIT = 5.0                  # bound of every wait for a delivery


# ---------------------------------------------------------------------------------------------
# Router configurations

def _base(env):
    return {"Glacier2.CryptPasswords": env.passwords, "Glacier2.SessionTimeout": str(SESSION_TIMEOUT)}


def buffered_router(env):
    """Buffered both ways (the default, written out), SleepTime 400 ms both ways; overrides traced
    (Glacier2.Client/Server.Trace.Override, checked by the _ovrd scenarios)."""
    props = _base(env)
    props.update({"Glacier2.Client.Buffered": "1", "Glacier2.Server.Buffered": "1",
                  "Glacier2.Client.SleepTime": str(SLEEP_MS), "Glacier2.Server.SleepTime": str(SLEEP_MS),
                  "Glacier2.Client.Trace.Override": "1", "Glacier2.Server.Trace.Override": "1"})
    return env.router("buffered", props)


def always_batch_router(env):
    """As `buffered`, plus AlwaysBatch=1 both ways: every oneway becomes a batch oneway."""
    props = _base(env)
    props.update({"Glacier2.Client.Buffered": "1", "Glacier2.Server.Buffered": "1",
                  "Glacier2.Client.SleepTime": str(SLEEP_MS), "Glacier2.Server.SleepTime": str(SLEEP_MS),
                  "Glacier2.Client.AlwaysBatch": "1", "Glacier2.Server.AlwaysBatch": "1"})
    return env.router("buffered-always", props)


def unbuffered_router(env):
    """Buffered=0 both ways: each request is forwarded as it comes."""
    props = _base(env)
    props.update({"Glacier2.Client.Buffered": "0", "Glacier2.Server.Buffered": "0"})
    return env.router("unbuffered", props)


# ---------------------------------------------------------------------------------------------
# Helpers

def override_traces(env, router, client):
    """How many overrides of `note` (client: Glacier2.Client.Trace.Override) or of callback
    `ping` (Glacier2.Server.Trace.Override) the router has logged so far. glacier2router 3.7.8
    writes `routing override` / `reverse routing override` entries with `operation = ...`
    (observed); moraine-router `[Glacier2.Client.Trace.Override] ... operation '...'` lines."""
    router.proc.log.flush()
    with open(router.proc.log_path, errors="replace") as f:
        text = f.read()
    op = "note" if client else "ping"
    if env.is_glacier2:
        entry = r"Glacier2: %srouting override\n[^\n]*\n   operation = %s\n" % ("" if client else "reverse ", op)
    else:
        entry = r"\[Glacier2\.%s\.Trace\.Override\][^\n]*operation '%s'" % ("Client" if client else "Server", op)
    return len(re.findall(entry, text))


def tag(prefix):
    """A unique note/ping prefix: scenarios share one back end."""
    return "%s-%s-" % (prefix, uuid.uuid4().hex[:8])


def names(prefix, n, start=0):
    return ["%s%d" % (prefix, i) for i in range(start, start + n)]


@contextlib.contextmanager
def session_at(env, port, user="alice", password="secret"):
    """A fresh client communicator whose Ice.Default.Router is Glacier2/router at port (the
    router's client port, or a tap in front of it), with a session; yields (ic, RouterPrx)."""
    with env.communicator(H.Router("via-port", None, port, None, {})) as ic:
        prx = Glacier2.RouterPrx.uncheckedCast(ic.getDefaultRouter())
        try:
            prx.createSession(user, password)
        except Ice.Exception as e:
            raise Failure("createSession(%s) failed: %s: %s" % (user, type(e).__name__, short(e)))
        yield ic, prx


def hello_at(ic, port, name="hello"):
    """The back end's object `name` at port (a tap's), called through the router."""
    return Demo.HelloPrx.uncheckedCast(ic.stringToProxy("%s:%s" % (name, H.endpoint(port))))


def direct(env, ic, name="hello"):
    """The back end's object `name`, called directly, not through the router."""
    return Demo.HelloPrx.uncheckedCast(ic.stringToProxy(env.hello_proxy(name))).ice_router(None)


def primer(hello):
    """A routed twoway call. Each routed identity is bound to the first endpoint the session
    added it with, and its reply means a flush round just took place (a hold has begun)."""
    got = hello.sayHello("primer")
    check(got == "hello primer", "primer sayHello returned %r" % got)


@contextlib.contextmanager
def primed_client(env, router, name="hello"):
    """A session through `router` whose calls to the back end's `name` pass a wire tap, after
    the primer (a hold has just begun); yields (tap, ic, proxy of `name`)."""
    with WireTap(env.backend()) as tap, session_at(env, router.client_port) as (ic, _):
        target = hello_at(ic, tap.port, name)
        primer(target)
        yield tap, ic, target


def wait_notes(backend, prefix, n):
    """Waits until the back end has n notes starting with prefix; returns them (arrival order)."""
    H.wait_until(lambda: len(backend.notesFrom(prefix)) >= n, WAIT, 0.02)
    return backend.notesFrom(prefix)


def note_requests(tap, direction=WireTap.UP):
    """The request and batch messages of note() in direction."""
    return tap.requests(direction, "note")


def texts(msg):
    """The leading string parameter of each request in msg (a request or batch)."""
    return [first_string(op.params) for op in (msg.ops or [])]


def held_batch(first, batch, prefix, what, items):
    """Checks that batch holds the BURST items named prefix0.. in order and left at least half a
    SleepTime after the primer message first; returns the scenario's summary."""
    check(batch.count == BURST and texts(batch) == names(prefix, BURST),
          "batch of %s %s, expected the %d %s in order" % (batch.count, what, BURST, items))
    gap = batch.time - first.time
    check(gap >= SLEEP / 2, "the batch left %.0f ms after the primer: no hold of SleepTime=%d ms"
          % (gap * 1000, SLEEP_MS))
    return "1 batch of %d, %.0f ms after the primer" % (batch.count, gap * 1000)


def wire(tap, direction=WireTap.UP, op="note"):
    """What the tap saw, for failure reasons."""
    return tap.summary(direction, op)


class CallbackRecorder(CallbackI):
    """CallbackI (pings in arrival order), read by prefix."""

    def with_prefix(self, prefix):
        with self._cond:
            return [m for m in self.got if m.startswith(prefix)]

    def wait_count(self, prefix, n, timeout=WAIT):
        with self._cond:
            self._cond.wait_for(lambda: len([m for m in self.got if m.startswith(prefix)]) >= n, timeout)
        return self.with_prefix(prefix)


class CallbackSide:
    """What callback_setup yields: the tap on the client's connection, the session's router
    adapter with a CallbackRecorder `cb`, and the back end reached directly."""

    def __init__(self, tap, ic, prx, backend):
        self.tap, self.backend = tap, backend
        self.category = prx.getCategoryForClient()
        self.adapter = ic.createObjectAdapterWithRouter("Cb-" + uuid.uuid4().hex[:8], prx)
        self.adapter.activate()
        self.cb, self.servant = self.add("cb")

    def add(self, name):
        """Another servant in the session's category: (its proxy, its CallbackRecorder)."""
        servant = CallbackRecorder()
        prx = Demo.CallbackPrx.uncheckedCast(self.adapter.add(servant, Ice.Identity(name, self.category)))
        return prx, servant


@contextlib.contextmanager
def callback_setup(env, router):
    """A session whose client connection goes through a tap (so the tap's DOWN direction is the
    router -> client leg, where callbacks travel); yields a CallbackSide."""
    with WireTap(router.client_port, name="tap-client") as tap, session_at(env, tap.port) as (ic, prx):
        yield CallbackSide(tap, ic, prx, direct(env, ic))


def callback_primer(backend, cb, servant):
    """A twoway callback sent by the back end: when burst() returns, the client has answered,
    so a flush round of the router -> client queue just took place (a hold has begun)."""
    prefix = tag("primer")
    backend.burst(cb, prefix, 1, {}, 0, False)
    check(servant.with_prefix(prefix) == [prefix + "0"], "twoway primer callback not received")


def ping_requests(tap):
    return tap.requests(WireTap.DOWN, "ping")


def callback_wire(tap):
    return tap.summary(WireTap.DOWN, "ping")


# ---------------------------------------------------------------------------------------------
# Client -> back end

@scenario
def buffered_client_batch(env):
    """_fwd=O oneways: one batch message per flush round, after the hold."""
    router = buffered_router(env)
    prefix = tag("batch")
    with primed_client(env, router) as (tap, ic, hello):
        ow = hello.ice_oneway()
        for text in names(prefix, BURST):
            ow.note(text, {"_fwd": "O"})
        got = wait_notes(direct(env, ic), prefix, BURST)
        check(got == names(prefix, BURST), "back end got %d notes%s" % (len(got), "" if len(got) != BURST
                                                                    else " out of order"))
        time.sleep(0.1)  # anything else would come in the same round
        reqs = tap.requests(WireTap.UP)
        check([m.type for m in reqs] == [REQUEST, BATCH],
              "router -> back end: %s, expected the primer then one batch" % tap.summary(WireTap.UP))
        first, batch = reqs
        check(first.request_id and first.request_id > 0, "primer forwarded with request id %s" % first.request_id)
        check(all(op.identity == "hello" and op.operation == "note" for op in batch.ops),
              "batch holds other requests: %s" % sorted({(op.identity, op.operation) for op in batch.ops}))
        return held_batch(first, batch, prefix, "requests", "notes")


@scenario
def buffered_large_batch(env):
    """40 batch oneways of 64 KiB (2.5 MiB) in one hold: no batch message grows past what a
    default peer accepts (1 MiB, Ice.MessageSizeMax; Ice flushes a batch at Ice.BatchAutoFlushSize,
    1 MiB), and all arrive in order. glacier2router (Ice's auto-flush) and moraine-router (a
    queue reaching its high watermark leaves at once, a batch is cut at 1 MiB) split differently;
    both must split."""
    router = buffered_router(env)
    prefix = tag("large")
    n, pad = 40, "x" * (64 * 1024)
    with primed_client(env, router) as (tap, ic, hello):
        ow = hello.ice_oneway()
        for i in range(n):
            ow.note("%s%d-%s" % (prefix, i, pad), {"_fwd": "O"})
        want = ["%s%d-%s" % (prefix, i, pad) for i in range(n)]
        backend = direct(env, ic)  # notesFrom would answer more than 1 MiB: ask note by note
        H.wait_until(lambda: backend.countOf(want[-1]) == 1, WAIT, 0.02)
        missing = [i for i, text in enumerate(want) if backend.countOf(text) != 1]
        check(not missing, "the back end did not get notes %s" % missing)
        time.sleep(0.1)
        batches = [m for m in tap.requests(WireTap.UP) if m.type == BATCH]
        check(sum(m.count for m in batches) == n and len(batches) >= 3,
              "router -> back end: %s, expected the %d notes in 3 or more batch messages" % (wire(tap), n))
        check([t for m in batches for t in texts(m)] == want, "the batches do not hold the notes in order")
        biggest = max(m.size for m in batches)
        check(biggest <= 1024 * 1024, "a batch message of %d bytes: more than a default peer accepts" % biggest)
        return "%d batch messages, the largest %d KiB" % (len(batches), biggest // 1024)


@scenario
def buffered_client_override(env):
    """_ovrd: a queued oneway is replaced by a newer one with the same _ovrd value and proxy;
    each replacement is logged (Glacier2.Client.Trace.Override)."""
    router = buffered_router(env)
    prefix = tag("ovrd")
    traced = override_traces(env, router, True)
    with primed_client(env, router, "slowhello") as (tap, ic, hello):  # its note() takes 20 ms
        ow = hello.ice_oneway()
        ow.note(prefix + "0", {"_ovrd": "k"})
        # It leaves in the next round, which starts a new hold.
        check(tap.wait_for(lambda t: note_requests(t), WAIT), "the first _ovrd note was not forwarded")
        for text in names(prefix, BURST - 1, start=1):
            ow.note(text, {"_ovrd": "k"})
        backend = direct(env, ic, "slowhello")
        last = prefix + str(BURST - 1)
        H.wait_until(lambda: last in backend.notesFrom(prefix), WAIT, 0.02)
        time.sleep(0.1)
        got = backend.notesFrom(prefix)
        check(got == [prefix + "0", last], "back end got %d notes: %s, expected the first and the last"
              % (len(got), [g[len(prefix):] for g in got][:10]))
        reqs = note_requests(tap)
        check([(m.type, m.request_id) for m in reqs] == [(REQUEST, 0), (REQUEST, 0)],
              "router -> back end notes: %s, expected 2 oneway requests" % wire(tap))
        traced = override_traces(env, router, True) - traced
        check(traced == BURST - 2, "Glacier2.Client.Trace.Override: %d overrides logged, expected %d"
              % (traced, BURST - 2))
        return "back end got the first and the last of %d; %d overrides traced" % (BURST, traced)


@scenario
def buffered_no_override(env):
    """No override between different _ovrd values, empty ones, twoways, other identities or
    other modes; the one override that does apply replaces the old request in place."""
    router = buffered_router(env)
    p = tag("keep")
    with WireTap(env.backend()) as tap, session_at(env, router.client_port) as (ic, _):
        hello = hello_at(ic, tap.port)
        slow = hello_at(ic, tap.port, "slowhello")
        primer(slow)   # binds slowhello to the tap
        primer(hello)  # and a hold begins: everything below leaves in one round
        ow = hello.ice_oneway()
        for i in range(5):
            ow.note("%sd%d" % (p, i), {"_ovrd": "k%d" % i})   # different values
        for i in range(3):
            ow.note("%se%d" % (p, i), {"_ovrd": ""})           # empty value: never overrides
        ow.note(p + "a", {"_ovrd": "s"})                        # replaced by `c` below
        twoways = [hello.noteAsync(p + "tw0", {"_ovrd": "s"}),   # twoways neither override nor
                   hello.noteAsync(p + "tw1", {"_ovrd": "s"})]   # are overridden
        ow.note(p + "c", {"_ovrd": "s"})
        slow.ice_oneway().note(p + "slow", {"_ovrd": "s"})     # another identity
        ow.note(p + "batch", {"_ovrd": "s", "_fwd": "O"})      # another mode (batch oneway)
        for f in twoways:
            f.result(WAIT)
        expected = ["d0", "d1", "d2", "d3", "d4", "e0", "e1", "e2", "c", "tw0", "tw1", "batch"]
        backend = direct(env, ic)
        H.wait_until(lambda: len(backend.notesFrom(p)) >= len(expected), WAIT, 0.02)
        slow_got = wait_notes(direct(env, ic, "slowhello"), p, 1)
        time.sleep(0.1)
        # Oneways sent as separate messages may be dispatched in any order by the back end's
        # thread pool: compare sets here, and the order on the wire below.
        got = sorted(g[len(p):] for g in backend.notesFrom(p))
        check(got == sorted(expected), "back end (hello) got %s, expected %s" % (got, sorted(expected)))
        check(slow_got == [p + "slow"], "back end (slowhello) got %s" % [g[len(p):] for g in slow_got])
        singles = [(texts(m)[0][len(p):], m.request_id != 0) for m in note_requests(tap) if m.type == REQUEST]
        want = [(t, False) for t in ("d0", "d1", "d2", "d3", "d4", "e0", "e1", "e2", "c")]
        want += [("tw0", True), ("tw1", True), ("slow", False)]
        check(singles == want, "router -> back end order %s, expected %s (c in a's place)" % (singles, want))
        batches = [texts(m) for m in note_requests(tap) if m.type == BATCH]
        check(batches == [[p + "batch"]], "batch messages %s, expected one with the _fwd=O note" % batches)


@scenario
def buffered_forward_options(env):
    """_fwd=o on a twoway, _fwd=t on a oneway, _fwd=z on oneways (large and small)."""
    router = buffered_router(env)
    p = tag("fwd")
    # The primer also binds `hello` to an endpoint without compression.
    with primed_client(env, router) as (tap, ic, hello):
        start = time.monotonic()
        hello.note(p + "o", {"_fwd": "o"})  # twoway made oneway: answered when queued
        took = time.monotonic() - start
        check(took < SLEEP / 2, "twoway with _fwd=o took %.0f ms: not answered at once" % (took * 1000))
        ow = hello.ice_oneway()
        ow.note(p + "t", {"_fwd": "t"})
        ow.note(p + "z-" + "x" * 200, {"_fwd": "z"})
        ow.note(p + "zsmall", {"_fwd": "z"})
        ow.note(p + "plain-" + "y" * 200)
        got = wait_notes(direct(env, ic), p, 5)
        check(sorted(got) == sorted([p + "o", p + "t", p + "z-" + "x" * 200, p + "zsmall", p + "plain-" + "y" * 200]),
              "back end got %s" % [g[len(p):len(p) + 8] for g in got])
        time.sleep(0.1)
        notes = note_requests(tap)
        by_text = {texts(m)[0][len(p):len(p) + 6]: m for m in notes if m.ops}
        compressed = [m for m in tap.requests(WireTap.UP) if m.compress == 2]
        check(len(notes) == 4 and len(compressed) == 1 and compressed[0].type == REQUEST,
              "router -> back end: %s, expected 4 notes + 1 compressed request" % tap.summary(WireTap.UP))
        o, t, zs, plain = (by_text.get(k) for k in ("o", "t", "zsmall", "plain-"))
        check(o and o.type == REQUEST and o.request_id == 0, "_fwd=o note forwarded as %s, expected oneway" % (o,))
        check(t and t.type == REQUEST and t.request_id > 0, "_fwd=t note forwarded as %s, expected twoway" % (t,))
        replies = [m.request_id for m in tap.messages(WireTap.DOWN, (REPLY,))]
        check(t.request_id in replies, "the back end's reply to the _fwd=t note was not seen")
        # Small requests are not compressed; glacier2router marks them 1 ("may reply
        # compressed") when the proxy has compression on, 0 otherwise.
        check(zs and zs.compress == 1, "small _fwd=z note sent with compression status %s, expected 1"
              % (zs and zs.compress))
        check(plain and plain.compress == 0, "large note without _fwd=z sent with compression status %s"
              % (plain and plain.compress))
        return "o: oneway; t: twoway (request id %d); z: compressed (%d bytes)" % (t.request_id, compressed[0].size)


@scenario
def buffered_datagram_secure(env):
    """_fwd=d (datagram) and _fwd=s (secure) with a back end that has only a tcp endpoint.
    glacier2router: a twoway with _fwd=d becomes a oneway, so it is answered at once with an
    empty success reply, and the datagram send then fails unseen; with _fwd=s the twoway fails
    with UnknownLocalException (NoEndpointException). Oneways just vanish. Nothing reaches the
    back end either way."""
    router = buffered_router(env)
    p = tag("ds")
    with primed_client(env, router) as (tap, ic, hello):
        start = time.monotonic()
        hello.note(p + "d-twoway", {"_fwd": "d"})
        took = time.monotonic() - start
        check(took < SLEEP / 2, "twoway with _fwd=d took %.0f ms: not answered at once" % (took * 1000))
        # The reply carries no result: a string return value cannot be read from it.
        expect_raises(Ice.UnmarshalOutOfBoundsException, lambda: hello.sayHello("d", {"_fwd": "d"}),
                      "twoway sayHello with _fwd=d")
        ow = hello.ice_oneway()
        ow.note(p + "d-oneway", {"_fwd": "d"})
        ow.note(p + "s-oneway", {"_fwd": "s"})
        secure = hello.noteAsync(p + "s-twoway", {"_fwd": "s"})
        ow.note(p + "end")  # queued last: once it arrived, the others were handled
        e = expect_raises(Ice.UnknownLocalException, lambda: secure.result(WAIT), "twoway note with _fwd=s")
        check("endpoint" in e.unknown.lower(), "UnknownLocalException text %r does not name the missing endpoint"
              % e.unknown)
        wait_notes(direct(env, ic), p, 1)
        time.sleep(0.1)
        got = direct(env, ic).notesFrom(p)
        check(got == [p + "end"], "back end got %s, expected only the final plain note" % [g[len(p):] for g in got])
        notes = [texts(m) for m in note_requests(tap)]
        check(notes == [[p + "end"]], "router -> back end notes: %s" % notes)
        check([m.ops[0].operation for m in tap.requests(WireTap.UP)] == ["sayHello", "note"],
              "router -> back end: %s" % tap.summary(WireTap.UP))
        return "d: answered at once, nothing sent; s twoway: UnknownLocalException"


# ---------------------------------------------------------------------------------------------
# Back end -> client (callbacks)

@scenario
def buffered_callback_batch(env):
    """Oneway callbacks with _fwd=O: one batch message on the router -> client leg."""
    router = buffered_router(env)
    prefix = tag("cbatch")
    with callback_setup(env, router) as side:
        tap, cb, servant, backend = side.tap, side.cb, side.servant, side.backend
        callback_primer(backend, cb, servant)
        backend.burst(cb, prefix, BURST, {"_fwd": "O"}, 0, True)
        got = servant.wait_count(prefix, BURST)
        check(got == names(prefix, BURST), "client got %d callbacks%s" % (len(got), "" if len(got) != BURST
                                                                         else " out of order"))
        time.sleep(0.1)
        reqs = ping_requests(tap)
        check([m.type for m in reqs] == [REQUEST, BATCH],
              "router -> client: %s, expected the primer then one batch" % callback_wire(tap))
        first, batch = reqs
        check(first.request_id > 0, "twoway primer callback forwarded with request id %s" % first.request_id)
        return held_batch(first, batch, prefix, "callbacks", "pings")


@scenario
def buffered_callback_override(env):
    """_ovrd on oneway callbacks: the first one, then 99 more in one hold: the client gets the
    first and the last; each replacement is logged (Glacier2.Server.Trace.Override)."""
    router = buffered_router(env)
    first, rest = tag("covrd-a"), tag("covrd-b")
    traced = override_traces(env, router, False)
    with callback_setup(env, router) as side:
        tap, cb, servant, backend = side.tap, side.cb, side.servant, side.backend
        callback_primer(backend, cb, servant)
        backend.burst(cb, first, 1, {"_ovrd": "k"}, 0, True)
        check(servant.wait_count(first, 1) == [first + "0"], "first _ovrd callback not received")
        # It left in a flush round, which started a new hold.
        backend.burst(cb, rest, BURST - 1, {"_ovrd": "k"}, 0, True)
        last = "%s%d" % (rest, BURST - 2)
        check(servant.wait_for(last), "the last _ovrd callback was not received")
        time.sleep(0.1)
        got = servant.with_prefix(first) + servant.with_prefix(rest)
        check(got == [first + "0", last], "client got %d callbacks: %s" % (len(got), got[:5]))
        reqs = ping_requests(tap)
        check([(m.type, m.request_id == 0) for m in reqs] == [(REQUEST, False), (REQUEST, True), (REQUEST, True)],
              "router -> client: %s, expected the primer and 2 oneways" % callback_wire(tap))
        traced = override_traces(env, router, False) - traced
        check(traced == BURST - 2, "Glacier2.Server.Trace.Override: %d overrides logged, expected %d"
              % (traced, BURST - 2))
        return "client got the first and the last of %d; %d overrides traced" % (BURST, traced)


@scenario
def buffered_callback_forward_options(env):
    """_fwd on callbacks (back end -> client): o on a twoway, t on a oneway, z, d and s (the
    client's connection is tcp)."""
    router = buffered_router(env)
    p = tag("cfwd")
    with callback_setup(env, router) as side:
        tap, cb, servant, backend = side.tap, side.cb, side.servant, side.backend
        callback_primer(backend, cb, servant)
        start = time.monotonic()
        backend.burst(cb, p + "o", 1, {"_fwd": "o"}, 0, False)  # twoway ping, forwarded oneway
        took = time.monotonic() - start
        check(took < SLEEP / 2, "twoway callback with _fwd=o took %.0f ms: not answered at once" % (took * 1000))
        backend.burst(cb, p + "t", 1, {"_fwd": "t"}, 0, True)   # oneway ping, forwarded twoway
        backend.burst(cb, p + "z" + "x" * 200, 1, {"_fwd": "z"}, 0, True)
        backend.burst(cb, p + "d", 1, {"_fwd": "d"}, 0, False)  # answered at once, never delivered
        e = expect_raises(Ice.UnknownLocalException, lambda: backend.burst(cb, p + "s", 1, {"_fwd": "s"}, 0, False),
                          "twoway callback with _fwd=s over a tcp client connection")
        backend.burst(cb, p + "end", 1, {}, 0, True)
        got = servant.wait_count(p, 4)
        check(sorted(got) == sorted([p + "o0", p + "t0", p + "z" + "x" * 200 + "0", p + "end0"]),
              "client got %s" % [g[len(p):len(p) + 8] for g in got])
        time.sleep(0.1)
        pings = {texts(m)[0][len(p):len(p) + 1]: m for m in ping_requests(tap) if m.ops and
                 texts(m)[0].startswith(p)}
        check(pings.get("o") is not None and pings["o"].request_id == 0,
              "_fwd=o callback: %s" % callback_wire(tap))
        check(pings.get("t") is not None and (pings["t"].request_id or 0) > 0,
              "_fwd=t callback: %s" % callback_wire(tap))
        compressed = [m for m in tap.requests(WireTap.DOWN) if m.compress == 2]
        check(len(compressed) == 1, "_fwd=z callback: %d compressed messages to the client" % len(compressed))
        return "o: oneway; t: twoway; z: compressed; d: dropped; s: %s" % type(e).__name__


@scenario
def buffered_batch_grouping(env):
    """Which batch oneways share a batch message, and where it goes in the round.
    glacier2router 3.7.8, client -> back end: one batch message per target proxy (here two
    identities on one back-end connection give two batch messages, in an order of its own).
    Back end -> client: one batch message per client connection, in arrival order, whatever
    the identity. Both ways, the batch messages leave at the end of the flush round, after a
    plain oneway queued behind the batched requests. moraine-router groups the same way but
    keeps the sender's order: pending batches for a peer leave before the next plain request
    to it. Grouping and order are checked separately, and every mismatch is reported."""
    router = buffered_router(env)
    problems = []
    p = tag("group")
    with WireTap(env.backend()) as tap, session_at(env, router.client_port) as (ic, _):
        hello, slow = hello_at(ic, tap.port), hello_at(ic, tap.port, "slowhello")
        primer(slow)
        primer(hello)
        for i in range(6):
            (hello if i % 2 == 0 else slow).ice_oneway().note("%s%d" % (p, i), {"_fwd": "O"})
        hello.ice_oneway().note(p + "plain")
        H.wait_until(lambda: len(direct(env, ic).notesFrom(p)) >= 4, WAIT, 0.02)
        H.wait_until(lambda: len(direct(env, ic, "slowhello").notesFrom(p)) >= 3, WAIT, 0.02)
        time.sleep(0.1)
        msgs = [(m.type, tuple((op.identity, first_string(op.params)[len(p):]) for op in m.ops))
                for m in note_requests(tap)]
        batches = sorted(ops for t, ops in msgs if t == BATCH)
        want = [tuple(("hello", str(i)) for i in (0, 2, 4)), tuple(("slowhello", str(i)) for i in (1, 3, 5))]
        if batches != want or len(msgs) != 3:
            problems.append("router -> back end: %s, expected one batch per identity %s and the plain oneway"
                            % (msgs, want))
        elif env.is_glacier2 and msgs[0] != (REQUEST, (("hello", "plain"),)):
            problems.append("router -> back end: the plain oneway left after the batches (%s); glacier2router "
                            "sends the batches at the end of the round" % [ops[0][1] for _, ops in msgs])
        elif not env.is_glacier2 and msgs[2] != (REQUEST, (("hello", "plain"),)):
            # Moraine keeps the sender's order (README, "Differences from Glacier2"): the batches
            # pending for a back end leave before the next plain request to it.
            problems.append("router -> back end: the plain oneway overtook the batches queued before it (%s)"
                            % [ops[0][1] for _, ops in msgs])
    first = tag("cgroup")
    with callback_setup(env, router) as side:
        cb2, servant2 = side.add("cb2")
        callback_primer(side.backend, side.cb, side.servant)
        side.backend.burst(side.cb, first + "a", 2, {"_fwd": "O"}, 0, True)
        side.backend.burst(cb2, first + "b", 2, {"_fwd": "O"}, 0, True)
        side.backend.burst(side.cb, first + "plain", 1, {}, 0, True)
        side.backend.burst(side.cb, first + "c", 1, {"_fwd": "O"}, 0, True)
        got2, got = servant2.wait_count(first, 2), side.servant.wait_count(first, 4)
        check(got2 == [first + "b0", first + "b1"] and sorted(got) == [first + t for t in ("a0", "a1", "c0", "plain0")],
              "callbacks received: cb %s, cb2 %s" % (got, got2))
        time.sleep(0.1)
        msgs = [(m.type, [(op.identity.split("/")[-1], first_string(op.params)[len(first):]) for op in m.ops])
                for m in ping_requests(side.tap)[1:]]
        if env.is_glacier2:
            want = [(BATCH, [("cb", "a0"), ("cb", "a1"), ("cb2", "b0"), ("cb2", "b1"), ("cb", "c0")])]
            if [m for m in msgs if m[0] == BATCH] != want or len(msgs) != 2:
                problems.append("router -> client: %s, expected the plain oneway and %s" % (msgs, want))
            elif msgs[0] != (REQUEST, [("cb", "plain0")]):
                problems.append("router -> client: the plain oneway left after the batch; glacier2router sends "
                                "the batch at the end of the round")
        else:
            # Moraine: one batch for the connection too, but in order: the batch so far, the
            # plain callback, then a batch for what came after it.
            want = [(BATCH, [("cb", "a0"), ("cb", "a1"), ("cb2", "b0"), ("cb2", "b1")]),
                    (REQUEST, [("cb", "plain0")]),
                    (BATCH, [("cb", "c0")])]
            if msgs != want:
                problems.append("router -> client: %s, expected %s" % (msgs, want))
    check(not problems, "; ".join(problems))


# ---------------------------------------------------------------------------------------------
# AlwaysBatch

@scenario
def buffered_always_batch(env):
    """AlwaysBatch: plain oneways (and _fwd=o) become batch oneways; twoways stay twoways."""
    router = always_batch_router(env)
    prefix = tag("always")
    with primed_client(env, router) as (tap, ic, hello):
        ow = hello.ice_oneway()
        for i, text in enumerate(names(prefix, BURST)):
            ow.note(text, {"_fwd": "o"} if i % 2 else {})
        got = wait_notes(direct(env, ic), prefix, BURST)
        check(got == names(prefix, BURST), "back end got %d notes%s" % (len(got), "" if len(got) != BURST
                                                                    else " out of order"))
        time.sleep(0.1)
        reqs = tap.requests(WireTap.UP)
        check([m.type for m in reqs] == [REQUEST, BATCH] and reqs[0].request_id > 0,
              "router -> back end: %s, expected the twoway primer then one batch" % tap.summary(WireTap.UP))
        check(reqs[1].count == BURST and texts(reqs[1]) == names(prefix, BURST),
              "batch of %s, expected the %d notes in order" % (reqs[1].count, BURST))


@scenario
def buffered_always_callbacks(env):
    """AlwaysBatch on the server side: plain oneway callbacks leave as one batch message; an
    _ovrd callback replaces a queued one there too."""
    router = always_batch_router(env)
    prefix, first, rest = tag("calways"), tag("calways-a"), tag("calways-b")
    with callback_setup(env, router) as side:
        tap, cb, servant, backend = side.tap, side.cb, side.servant, side.backend
        callback_primer(backend, cb, servant)
        backend.burst(cb, prefix, BURST, {}, 0, True)
        got = servant.wait_count(prefix, BURST)
        check(got == names(prefix, BURST), "client got %d callbacks%s" % (len(got), "" if len(got) != BURST
                                                                         else " out of order"))
        # Right after a round: the next callback is queued, and leaves in the next round.
        backend.burst(cb, first, 1, {"_ovrd": "k"}, 0, True)
        check(servant.wait_count(first, 1) == [first + "0"], "first _ovrd callback not received")
        backend.burst(cb, rest, 9, {"_ovrd": "k"}, 0, True)
        check(servant.wait_for(rest + "8"), "the last _ovrd callback was not received")
        time.sleep(0.1)
        check(servant.with_prefix(rest) == [rest + "8"], "client got %s, expected only the last _ovrd callback"
              % servant.with_prefix(rest))
        reqs = ping_requests(tap)
        shape = [(m.type, m.count) for m in reqs]
        check(shape == [(REQUEST, None), (BATCH, BURST), (BATCH, 1), (BATCH, 1)],
              "router -> client: %s, expected primer, batch[%d], batch[1], batch[1]" % (callback_wire(tap), BURST))


# ---------------------------------------------------------------------------------------------
# Buffered=0

@scenario
def buffered_off_client(env):
    """Buffered=0: _fwd=O oneways go out as plain oneways, one message each, and _ovrd has no
    effect."""
    router = unbuffered_router(env)
    batch_prefix, ovrd_prefix = tag("off-batch"), tag("off-ovrd")
    with primed_client(env, router) as (tap, ic, hello):
        ow = hello.ice_oneway()
        for text in names(batch_prefix, BURST):
            ow.note(text, {"_fwd": "O"})
        for text in names(ovrd_prefix, BURST):
            ow.note(text, {"_ovrd": "k"})
        backend = direct(env, ic)
        for prefix in (batch_prefix, ovrd_prefix):
            got = wait_notes(backend, prefix, BURST)
            # Separate oneway messages: the back end's thread pool may dispatch them in any order.
            check(sorted(got) == sorted(names(prefix, BURST)), "back end got %d of the %d %s notes"
                  % (len(got), BURST, prefix))
        time.sleep(0.1)
        notes = note_requests(tap)
        check(len(notes) == 2 * BURST and all(m.type == REQUEST and m.request_id == 0 for m in notes),
              "router -> back end: %d note messages (%s), expected %d oneway requests"
              % (len(notes), wire(tap)[:120], 2 * BURST))


@scenario
def buffered_off_callbacks(env):
    """Buffered=0: _fwd=O and _ovrd oneway callbacks go out one message each, all delivered."""
    router = unbuffered_router(env)
    prefix = tag("off-cb")
    with callback_setup(env, router) as side:
        tap, cb, servant, backend = side.tap, side.cb, side.servant, side.backend
        callback_primer(backend, cb, servant)
        backend.burst(cb, prefix, BURST, {"_fwd": "O", "_ovrd": "k"}, 0, True)
        got = servant.wait_count(prefix, BURST)
        check(sorted(got) == sorted(names(prefix, BURST)), "client got %d of %d callbacks" % (len(got), BURST))
        time.sleep(0.1)
        reqs = ping_requests(tap)
        check(len(reqs) == 1 + BURST and all(m.type == REQUEST and m.request_id == 0 for m in reqs[1:]),
              "router -> client: %d ping messages (%s), expected the primer + %d oneway requests"
              % (len(reqs), callback_wire(tap)[:120], BURST))
