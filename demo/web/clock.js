// The clock demo in a web page: this page is one more subscriber session of moraine-router.
//
// With Ice for JavaScript 3.7 (the npm `ice` package's browser build) it opens a Glacier2
// session over WebSocket, hosts a Demo::Clock servant "<category>/clock" on an object adapter
// with the router (category from getCategoryForClient), retrieves the IceStorm topic `time`
// through the router and subscribes the servant to it (oneway), as each session of
// clock-subscriber does (demo/clock/clock_subscriber.cpp). It then shows, updated every second:
// the last tick's time, ticks received, events/s, lost ticks (gaps in the ticks' sequence
// numbers), latency p50/p99 and the session state.
//
// Beside them, the panel "Beside this page": the C++ clock-subscriber sessions running at the same
// time in the same router (sessions up, their ticks/s, lost, p50/p99 of their last second) and
// the router's CPU share and RSS, from GET /demo-status, polled each second (demo/web/serve.py
// answers it when demo/clock/run_demo.py --web serves the page). Without it (404, or the page
// served otherwise) the panel is hidden.
//
// Query parameters (all optional):
//   router    the router's endpoint, e.g. "ws -h 127.0.0.1 -p 4065", or a whole router proxy
//             ("Glacier2/router:ws -h 127.0.0.1 -p 4065"); default ws on this page's host, port 4065
//   user, password   default demo / demo (conf/passwords)
//   tm        the TopicManager proxy, reached through the router;
//             default "IceStorm/TopicManager:tcp -h 127.0.0.1 -p 10000"
//   topic     default "time"
//
// Latency: a tick is "HH:MM:SS #<seq> @<ns>" where <ns> is the publisher's CLOCK_MONOTONIC at
// send time (demo/clock/tick.hpp). A page cannot read CLOCK_MONOTONIC, so the server that served
// it (GET /clock, demo/web/serve.py, same machine) gives the difference between the wall clock
// and CLOCK_MONOTONIC; latency = the browser's wall clock at receipt - the send time on the wall
// clock.
//
// window.clockDemo holds the figures, for demo/web/screenshot.js and for people (console).
"use strict";

(function () {
    const q = new URLSearchParams(window.location.search);
    const RETRY_MS = 5000;
    const RATE_WINDOW_MS = 10000;

    function routerProxy() {
        const r = q.get("router") || ("ws -h " + (window.location.hostname || "127.0.0.1") + " -p 4065");
        return r.includes(":") ? r : "Glacier2/router:" + r;
    }

    const params = {
        router: routerProxy(),
        user: q.get("user") || "demo",
        password: q.get("password") || "demo",
        topicManager: q.get("tm") || "IceStorm/TopicManager:tcp -h 127.0.0.1 -p 10000",
        topic: q.get("topic") || "time",
    };

    // What the page shows and the screenshot driver reads.
    const demo = window.clockDemo = {
        state: "starting",      // starting, connecting, session, subscribed, closed
        detail: "",
        error: null,
        ticks: 0,
        lost: 0,
        malformed: 0,
        eventsPerSecond: null,
        p50: null, p99: null, max: null,   // ms, over every tick received
        lastTime: null, lastSeq: null,
        category: null,
        subscriber: null,
        sessions: 0,            // sessions opened by this page (more than 1 after a reconnection)
        iceVersion: typeof Ice !== "undefined" ? Ice.stringVersion() : null,
        clockSync: null,        // { monoToWallMs } from GET /clock, or null if unavailable
        beside: null,           // the last GET /demo-status (the C++ sessions, the router), or null
    };

    const latencies = [];       // ms, one per tick
    const arrivals = [];        // performance.now() of the ticks of the last RATE_WINDOW_MS
    let lastSeq = 0;            // of the current session: a gap after it counts as lost
    let sessionStarted = null;

    // -- the tick's send time on this browser's clock -------------------------------------------

    // wall-clock ms = CLOCK_MONOTONIC ms + monoToWallMs, from GET /clock: the server reads both
    // clocks at the same instant, so no round trip enters it (a fetch takes milliseconds in a
    // busy browser). The browser's performance.timeOrigin + performance.now() is the system's
    // wall clock, with 0.1 ms resolution.
    let monoToWallMs = null;

    async function syncClock() {
        try {
            const r = await fetch("clock", { cache: "no-store" });
            const body = await r.json();
            monoToWallMs = Number(BigInt(body.realtime_ns) - BigInt(body.monotonic_ns)) / 1e6;
            demo.clockSync = { monoToWallMs };
        } catch (e) {
            if (monoToWallMs === null) {
                demo.clockSync = null;   // served without /clock: no latency figures
            }
        }
    }

    const wallNow = () => performance.timeOrigin + performance.now();

    // -- ticks ---------------------------------------------------------------------------------

    function percentile(sorted, p) {
        if (sorted.length === 0) {
            return null;
        }
        const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p / 100 * sorted.length) - 1));
        return sorted[i];
    }

    function onTick(time) {
        const now = performance.now();
        const received = wallNow();
        const m = /^(\S+) #(\d+) @(\d+)$/.exec(time);
        if (!m) {
            demo.malformed++;
            demo.lastTime = time;
            render();
            return;
        }
        const seq = Number(m[2]);
        if (monoToWallMs !== null) {
            const sentMs = Number(BigInt(m[3]) / 1000n) / 1000 + monoToWallMs;
            latencies.push(Math.max(0, received - sentMs));
        }
        if (lastSeq !== 0 && seq > lastSeq + 1) {
            demo.lost += seq - lastSeq - 1;
        }
        lastSeq = Math.max(lastSeq, seq);
        demo.ticks++;
        demo.lastTime = m[1];
        demo.lastSeq = seq;
        arrivals.push(now);
        render();
    }

    function updateFigures() {
        const now = performance.now();
        while (arrivals.length > 0 && arrivals[0] < now - RATE_WINDOW_MS) {
            arrivals.shift();
        }
        // From the first to the last tick of the window while ticks keep coming; 0 after none
        // for 2 s; unknown ("–") with a single tick.
        const n = arrivals.length;
        demo.eventsPerSecond = n >= 2 && now - arrivals[n - 1] <= 2000
            ? (n - 1) * 1000 / (arrivals[n - 1] - arrivals[0])
            : n === 0 || now - arrivals[n - 1] > 2000 ? n * 1000 / RATE_WINDOW_MS : null;
        const sorted = latencies.slice().sort((a, b) => a - b);
        demo.p50 = percentile(sorted, 50);
        demo.p99 = percentile(sorted, 99);
        demo.max = sorted.length ? sorted[sorted.length - 1] : null;
    }

    // -- the session ---------------------------------------------------------------------------

    function describe(e) {
        if (e === null || e === undefined) {
            return String(e);
        }
        const id = typeof e.ice_id === "function" ? e.ice_id() : (e.name || typeof e);
        let text = id.replace(/^::/, "");
        if (e.reason) {
            text += ": " + e.reason;
        } else if (e.message && !e.ice_id) {
            text += ": " + e.message;
        }
        return text;
    }

    function setState(state, detail) {
        demo.state = state;
        demo.detail = detail || "";
        render();
    }

    // IceStorm::TopicManager::retrieve, or create if the topic does not exist yet (the publisher
    // normally created it): as clock-subscriber does.
    async function findTopic(manager, name) {
        for (let attempt = 0; attempt < 3; attempt++) {
            try {
                return await manager.retrieve(name);
            } catch (e) {
                if (!(e instanceof IceStorm.NoSuchTopic)) {
                    throw e;
                }
            }
            try {
                return await manager.create(name);
            } catch (e) {
                if (!(e instanceof IceStorm.TopicExists)) {
                    throw e;
                }
            }
        }
        throw new Error("cannot retrieve or create topic " + name);
    }

    let communicator = null;
    let routerPrx = null;
    let stopped = false;        // by close(): no more reconnections

    async function connect() {
        const initData = new Ice.InitializationData();
        initData.properties = Ice.createProperties();
        initData.properties.setProperty("Ice.Default.Router", params.router);
        initData.properties.setProperty("Ice.Default.InvocationTimeout", "10000");
        initData.properties.setProperty("Ice.RetryIntervals", "-1");
        initData.properties.setProperty("Ice.Warn.Connections", "0");
        communicator = Ice.initialize(initData);
        const router = routerPrx = Glacier2.RouterPrx.uncheckedCast(communicator.getDefaultRouter());

        setState("connecting", params.router);
        await router.createSession(params.user, params.password);
        demo.sessions++;
        sessionStarted = Date.now();
        lastSeq = 0;
        setState("session", "session open");

        // Keep the connection, hence the session, alive as Glacier2.SessionHelper does: heartbeats
        // at the router's ACM timeout; and learn at once when it closes.
        const connection = await router.ice_getConnection();
        const acmTimeout = await router.getACMTimeout();
        if (acmTimeout > 0) {
            connection.setACM(acmTimeout, undefined, Ice.ACMHeartbeat.HeartbeatAlways);
        }
        const mine = communicator;
        connection.setCloseCallback(() => {
            if (communicator === mine) {
                lost("connection to the router closed");
            }
        });

        demo.category = await router.getCategoryForClient();
        const adapter = await communicator.createObjectAdapterWithRouter("", router);
        class ClockI extends Demo.Clock {
            tick(time, current) {
                onTick(time);
            }
        }
        const clock = adapter.add(new ClockI(), new Ice.Identity("clock", demo.category));
        await adapter.activate();
        demo.subscriber = communicator.identityToString(clock.ice_getIdentity());

        const manager = IceStorm.TopicManagerPrx.uncheckedCast(communicator.stringToProxy(params.topicManager));
        const topic = await findTopic(manager, params.topic);
        await topic.subscribeAndGetPublisher(new Map(), clock.ice_oneway());
        setState("subscribed", "topic " + params.topic);
    }

    let retryTimer = null;

    function lost(why) {
        if (stopped) {
            return;
        }
        const old = communicator;
        communicator = null;
        if (old !== null) {
            old.destroy().catch(() => {});
        }
        demo.error = why;
        setState("closed", why + "; reconnecting in " + RETRY_MS / 1000 + " s");
        if (retryTimer === null) {
            retryTimer = setTimeout(() => {
                retryTimer = null;
                start();
            }, RETRY_MS);
        }
    }

    function start() {
        demo.error = null;
        connect().catch(e => lost(describe(e)));
    }

    // Ends the session cleanly (destroySession, then the communicator closes its connection):
    // demo/web/screenshot.js calls it before closing the browser.
    demo.close = async function () {
        stopped = true;
        if (retryTimer !== null) {
            clearTimeout(retryTimer);
            retryTimer = null;
        }
        const c = communicator;
        communicator = null;
        if (c !== null) {
            try {
                await routerPrx.destroySession();
            } catch (e) {
                // already gone
            }
            await c.destroy();
        }
        setState("closed", "session destroyed");
    };

    // -- the C++ sessions beside the page -------------------------------------------------------

    let besidePending = false;

    async function pollBeside() {
        if (besidePending) {
            return;
        }
        besidePending = true;
        try {
            const r = await fetch("demo-status", { cache: "no-store" });
            demo.beside = r.ok ? await r.json() : null;
        } catch (e) {
            demo.beside = null;     // no such endpoint, or the demo has stopped serving
        } finally {
            besidePending = false;
        }
        renderBeside();
    }

    // -- rendering -----------------------------------------------------------------------------

    const el = id => document.getElementById(id);
    const ms = v => v === null ? "–" : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0);

    const count = v => v === null || v === undefined ? "–" : v.toLocaleString("en-US");

    function renderBeside() {
        const b = demo.beside;
        el("beside").hidden = b === null;
        if (b === null) {
            return;
        }
        const r = b.router || {};
        const phase = b.phase === "up" && b.age_s !== null && b.age_s > 3 ? "stale"
            : b.phase === "up" ? "up" : b.phase;
        el("b-phase").textContent = { up: "live", opening: "opening sessions", starting: "starting",
                                      finished: "finished", stale: "no news for " + Math.round(b.age_s) + " s" }[phase] || phase;
        el("b-phase").className = "tag " + phase;
        el("b-sessions").textContent = count(b.sessions);
        el("b-up").textContent = count(b.sessions_up);
        el("b-up-note").textContent = "of " + count(b.sessions) + " · " + count(b.failed) + " failed · " +
            count(b.dropped) + " dropped";
        el("b-rate").textContent = count(b.ticks_per_s);
        el("b-lost").textContent = count(b.lost);
        el("b-lost").parentElement.classList.toggle("bad", b.lost > 0);
        el("b-p50").textContent = b.p50_ms === null ? "–" : ms(b.p50_ms);
        el("b-p99").textContent = b.p99_ms === null ? "–" : ms(b.p99_ms);
        el("b-cpu").textContent = r.cpu_percent === null || r.cpu_percent === undefined ? "–" : r.cpu_percent.toFixed(1);
        el("b-cpu-note").textContent = r.cpu_us_per_event === null || r.cpu_us_per_event === undefined
            ? "over the last " + (r.cpu_window_s ? r.cpu_window_s.toFixed(0) + " s" : "seconds")
            : r.cpu_us_per_event.toFixed(1) + " µs CPU per delivered event, last " + r.cpu_window_s.toFixed(0) + " s";
        el("b-rss").textContent = r.rss_mib === undefined ? "–" : r.rss_mib.toFixed(0);
        el("b-rss-note").textContent = r.rss_mib === undefined ? "" : r.rss_per_session_bytes
            ? (r.rss_per_session_bytes / 1024).toFixed(1) + " KiB per session above idle (" + r.rss_idle_mib.toFixed(0) + " MiB)"
            : "idle " + r.rss_idle_mib.toFixed(0) + " MiB";
    }

    function render() {
        el("last-time").textContent = demo.lastTime || "–";
        el("last-seq").textContent = demo.lastSeq !== null ? "tick #" + demo.lastSeq : "waiting for the first tick";
        el("ticks").textContent = demo.ticks.toLocaleString("en-US");
        el("rate").textContent = demo.eventsPerSecond === null ? "–" : demo.eventsPerSecond.toFixed(2);
        el("lost").textContent = demo.lost.toLocaleString("en-US");
        el("lost").parentElement.classList.toggle("bad", demo.lost > 0);
        el("p50").textContent = ms(demo.p50);
        el("p99").textContent = ms(demo.p99);
        el("state").textContent = demo.state;
        el("state").className = "state " + demo.state;
        el("state-detail").textContent = demo.detail;
        el("category").textContent = demo.subscriber || "–";
        el("router").textContent = params.router;
        el("ice").textContent = demo.iceVersion || "–";
        el("uptime").textContent = sessionStarted && demo.state === "subscribed"
            ? Math.round((Date.now() - sessionStarted) / 1000) + " s" : "–";
        el("sync").textContent = demo.clockSync
            ? "receive − send time (the publisher's CLOCK_MONOTONIC, on the wall clock via GET /clock)"
            : "no /clock: latency unavailable";
        if (demo.malformed > 0) {
            el("state-detail").textContent += " (" + demo.malformed + " malformed ticks)";
        }
    }

    // -- start ---------------------------------------------------------------------------------

    if (typeof Ice === "undefined" || typeof Glacier2 === "undefined" || typeof IceStorm === "undefined" ||
        typeof Demo === "undefined") {
        demo.state = "closed";
        demo.error = "scripts not loaded (run demo/web/setup)";
        document.addEventListener("DOMContentLoaded", () => setState("closed", demo.error));
        return;
    }
    window.addEventListener("pagehide", () => {
        if (communicator !== null) {
            communicator.destroy().catch(() => {});
        }
    });
    const boot = () => {
        render();
        syncClock().then(start);
        pollBeside();
        setInterval(() => {
            updateFigures();
            render();
            pollBeside();
        }, 1000);
        setInterval(syncClock, 30000);  // follows the wall clock if NTP steps it
    };
    if (document.readyState === "loading") {
        document.addEventListener("DOMContentLoaded", boot);
    } else {
        boot();
    }
})();
