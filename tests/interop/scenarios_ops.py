"""Operations scenarios: moraine-router's Prometheus endpoint seen by real Ice 3.7 clients.
Registered after every other scenario file (run.py imports this one last).

glacier2router has no such endpoint, so these scenarios are moraine-only: with
`--router glacier2` (or when mutants.sh runs glacier2router in moraine's slot,
INTEROP_ROUTER_IS_GLACIER2=1) they print SKIP. The router configuration `metrics` is `main`'s
(crypt passwords, SessionTimeout 30) plus `Moraine.Metrics.Listen=127.0.0.1:0`; the port the
router picked is read from its log line `metrics at http://127.0.0.1:PORT/metrics`. It is a
router process of its own, so every counter it shows comes from these scenarios alone.
"""
import contextlib
import http.client
import json
import os
import re

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402
from harness import Failure, check
from prometheus_client.parser import text_string_to_metric_families
from scenarios import SESSION_TIMEOUT, expect_raises, hello_prx, router_prx, scenario, session, short, unique

SESSIONS = 5  # N: clients holding a session at once
CALLS = 4     # twoway sayHello per session: K = SESSIONS * CALLS

# Every family the router serves (name as in the exposition; counters end in _total there).
# Per shard unless in PROCESS_FAMILIES, which carry no shard label.
SHARD_FAMILIES = {
    "moraine_sessions": "gauge", "moraine_client_connections": "gauge",
    "moraine_sessions_created_total": "counter", "moraine_sessions_destroyed_total": "counter",
    "moraine_auth_failures_total": "counter", "moraine_sessions_refused_total": "counter",
    "moraine_requests_forwarded_total": "counter", "moraine_replies_forwarded_total": "counter",
    "moraine_callbacks_forwarded_total": "counter", "moraine_requests_overridden_total": "counter",
    "moraine_callbacks_overridden_total": "counter", "moraine_connections_accepted_total": "counter",
    "moraine_connections": "gauge", "moraine_connections_closed_total": "counter",
    "moraine_protocol_errors_total": "counter", "moraine_slow_consumers_closed_total": "counter",
    "moraine_queue_bytes": "gauge", "moraine_forward_latency_seconds": "histogram",
    "moraine_datagram_requests_lost_total": "counter", "moraine_datagram_callbacks_total": "counter",
}
PROCESS_FAMILIES = {
    "process_cpu_seconds_total": "counter", "process_resident_memory_bytes": "gauge",
    "process_virtual_memory_bytes": "gauge", "process_open_fds": "gauge", "process_max_fds": "gauge",
    "process_start_time_seconds": "gauge", "moraine_bugs_total": "counter",
}
METRICS_LINE = re.compile(r"metrics at http://127\.0\.0\.1:(\d+)/metrics")


def metrics_router(env):
    """The `metrics` configuration; returns (Router, metrics port). moraine-router only."""
    if env.is_glacier2:
        raise H.Skip("moraine-router only: glacier2router has no Prometheus endpoint")
    router = env.router("metrics", {"Glacier2.CryptPasswords": env.passwords,
                                    "Glacier2.SessionTimeout": str(SESSION_TIMEOUT),
                                    "Moraine.Metrics.Listen": "127.0.0.1:0"})
    return router, metrics_port(router)


def metrics_port(router):
    """The port of a moraine-router started with `Moraine.Metrics.Listen=127.0.0.1:0`, from the
    `metrics at http://127.0.0.1:PORT/metrics` line of its log."""
    def port_from_log():
        try:
            with open(router.proc.log_path, errors="replace") as f:
                m = METRICS_LINE.search(f.read())
        except OSError:
            return None
        return int(m.group(1)) if m else None
    port = H.wait_until(port_from_log, 5.0)
    check(port, "no `metrics at http://127.0.0.1:PORT/metrics` line in the router's log within 5 s%s"
          % router.proc.log_tail())
    return port


def http_request(port, method="GET", path="/metrics"):
    """(status, content type, body text) of one HTTP/1.1 request to the metrics endpoint."""
    conn = http.client.HTTPConnection(H.HOST, port, timeout=3.0)
    try:
        conn.request(method, path)
        r = conn.getresponse()
        return r.status, r.getheader("Content-Type", ""), r.read().decode(errors="replace")
    finally:
        conn.close()


class Scrape:
    """One GET /metrics, parsed with prometheus_client's parser. types: {exposed name: type};
    samples: [(sample name, labels, value)]."""

    def __init__(self, port):
        status, ctype, text = http_request(port)
        check(status == 200, "GET /metrics: HTTP %d" % status)
        check(ctype.startswith("text/plain") and "version=0.0.4" in ctype,
              "GET /metrics: Content-Type %r, expected text/plain; version=0.0.4" % ctype)
        self.text = text
        self.types, self.samples = {}, []
        try:
            for fam in text_string_to_metric_families(text):
                # The parser drops a counter's _total from the family name; put it back.
                name = fam.name + "_total" if fam.type == "counter" else fam.name
                self.types[name] = fam.type
                self.samples += [(s.name, s.labels, s.value) for s in fam.samples]
        except ValueError as e:
            raise Failure("GET /metrics: not Prometheus text format 0.0.4: %s" % short(e))

    def total(self, name, **labels):
        """The sum of every sample called name (over shards) whose labels include `labels`."""
        return sum(v for n, lab, v in self.samples
                   if n == name and all(lab.get(k) == want for k, want in labels.items()))

    def labels_of(self, name):
        return [lab for n, lab, _ in self.samples if n == name]


@scenario
def metrics_scrape(env):
    router, port = metrics_router(env)
    before = Scrape(port)
    # The families, with their types and labels (shard on the router's, none on the process's).
    missing = [n for n in list(SHARD_FAMILIES) + list(PROCESS_FAMILIES) if n not in before.types]
    check(not missing, "families missing from /metrics: %s" % " ".join(missing))
    wrong = ["%s is a %s, expected %s" % (n, before.types[n], t)
             for n, t in list(SHARD_FAMILIES.items()) + list(PROCESS_FAMILIES.items()) if before.types[n] != t]
    check(not wrong, "; ".join(wrong))
    # Every series the Grafana dashboard queries is one the router exports.
    with open(os.path.join(H.REPO, "conf", "grafana-dashboard.json")) as f:
        exprs = [t["expr"] for p in json.load(f)["panels"] for t in p["targets"]]
    queried = set(re.findall(r"\b((?:moraine|process)_[a-z_]+)", " ".join(exprs)))
    # The topic service's families too: this router runs none, so they are known by name only
    # (the clock demo's metrics line reads them from a router that does).
    topic_families = {"moraine_events_delivered_total", "moraine_events_dropped_total", "moraine_subscribers",
                      "moraine_topics"}
    exported = {n for n, _, _ in before.samples} | topic_families
    unknown = sorted(q for q in queried if q not in exported)
    check(not unknown, "conf/grafana-dashboard.json queries series /metrics does not have: %s" % " ".join(unknown))
    for name in SHARD_FAMILIES:
        sample = name + "_count" if SHARD_FAMILIES[name] == "histogram" else name
        check(before.labels_of(sample) and all("shard" in lab for lab in before.labels_of(sample)),
              "%s: samples without a shard label: %s" % (sample, before.labels_of(sample)))
    for name in PROCESS_FAMILIES:
        check(all("shard" not in lab for lab in before.labels_of(name)), "%s has a shard label" % name)
    check(before.total("process_open_fds") > 0, "process_open_fds = %s" % before.total("process_open_fds"))
    check(before.total("moraine_bugs_total") == 0, "moraine_bugs_total = %s" % before.total("moraine_bugs_total"))

    # Other paths and methods.
    status = http_request(port, path="/nothing")[0]
    check(status == 404, "GET /nothing: HTTP %d, expected 404" % status)
    status = http_request(port, method="POST")[0]
    check(status == 405, "POST /metrics: HTTP %d, expected 405" % status)

    # N sessions, K twoway calls through them.
    k = SESSIONS * CALLS
    with contextlib.ExitStack() as stack:
        users = [("alice", "secret"), ("bob", "builder")]
        clients = [stack.enter_context(session(env, router, *users[i % 2])) for i in range(SESSIONS)]
        tag = unique("m")
        for i, (ic, _) in enumerate(clients):
            hello = hello_prx(env, ic)
            for j in range(CALLS):
                got = hello.sayHello("%s-%d-%d" % (tag, i, j))
                check(got == "hello %s-%d-%d" % (tag, i, j), "sayHello returned %r" % got)
        held = Scrape(port)
        figures = {n: held.total(n) for n in (
            "moraine_sessions", "moraine_client_connections", "moraine_sessions_created_total",
            "moraine_requests_forwarded_total", "moraine_replies_forwarded_total",
            "moraine_forward_latency_seconds_count", "moraine_connections", "process_open_fds")}
        check(figures["moraine_sessions"] == SESSIONS,
              "moraine_sessions = %s with %d sessions open" % (figures["moraine_sessions"], SESSIONS))
        check(figures["moraine_client_connections"] >= SESSIONS,
              "moraine_client_connections = %s < %d" % (figures["moraine_client_connections"], SESSIONS))
        check(figures["moraine_sessions_created_total"] >= SESSIONS,
              "moraine_sessions_created_total = %s < %d" % (figures["moraine_sessions_created_total"], SESSIONS))
        for name in ("moraine_requests_forwarded_total", "moraine_replies_forwarded_total",
                     "moraine_forward_latency_seconds_count"):
            check(figures[name] >= k, "%s = %s after %d routed twoway calls" % (name, figures[name], k))
        # A back-end connection counts as a connection, not as a client connection.
        check(figures["moraine_connections"] > figures["moraine_client_connections"],
              "moraine_connections = %s, not above moraine_client_connections = %s (the back-end connection)"
              % (figures["moraine_connections"], figures["moraine_client_connections"]))
        check(held.total("moraine_forward_latency_seconds_bucket", le="+Inf") == figures[
            "moraine_forward_latency_seconds_count"], "histogram: +Inf bucket != _count")
        check(figures["process_open_fds"] > 0, "process_open_fds = %s" % figures["process_open_fds"])

        # A wrong password is one more authentication failure.
        with env.communicator(router) as ic:
            expect_raises(Glacier2.PermissionDeniedException, lambda: router_prx(ic).createSession("alice", "wrong"),
                          "createSession with a wrong password")
        failures = Scrape(port).total("moraine_auth_failures_total") - held.total("moraine_auth_failures_total")
        check(failures == 1, "moraine_auth_failures_total grew by %s after one wrong password" % failures)

        # One client destroys its session: one session less, one destroyed more.
        clients[0][1].destroySession()
        after = H.wait_until(lambda: (lambda s: s if s.total("moraine_sessions") == SESSIONS - 1 else None)(
            Scrape(port)), 3.0)
        check(after, "moraine_sessions = %s 3 s after one of %d sessions was destroyed"
              % (Scrape(port).total("moraine_sessions"), SESSIONS))
        destroyed = after.total("moraine_sessions_destroyed_total") - held.total("moraine_sessions_destroyed_total")
        check(destroyed >= 1, "moraine_sessions_destroyed_total grew by %s after destroySession" % destroyed)

        # Another one just goes away (communicator destroyed: its connection closes).
        clients[1][0].destroy()
        lost = H.wait_until(lambda: (lambda s: s if s.total("moraine_sessions") == SESSIONS - 2 else None)(
            Scrape(port)), 3.0)
        check(lost, "moraine_sessions = %s 3 s after a client with a session closed its connection"
              % Scrape(port).total("moraine_sessions"))
    return ("sessions %d, created %d, forwarded %d/%d replies, latency count %d, connections %d "
            "(client %d), open fds %d, auth failures +1, after destroy: sessions %d, after a connection close: %d"
            % (figures["moraine_sessions"], figures["moraine_sessions_created_total"],
               figures["moraine_requests_forwarded_total"], figures["moraine_replies_forwarded_total"],
               figures["moraine_forward_latency_seconds_count"], figures["moraine_connections"],
               figures["moraine_client_connections"], figures["process_open_fds"],
               after.total("moraine_sessions"), lost.total("moraine_sessions")))
