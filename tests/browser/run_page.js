#!/usr/bin/env node
// Opens one test page in Debian's headless Chromium and prints what the page reports.
//
//   node run_page.js URL [--timeout SECONDS] [--screenshot PATH] [--ca CA.pem]
//                        [--spki BASE64] [--chromium PATH]
//
// Chromium (/usr/bin/chromium, never a downloaded browser) is started here, by us, with a fresh
// temporary --user-data-dir and --remote-debugging-port=0, and playwright-core drives it over
// CDP (connectOverCDP): that way its PID is ours to stop. The page must set window.result; it
// is printed as one JSON line on stdout, with a "browser" member added: the Chromium version,
// the WebSocket handshakes as Chromium saw them (request and response headers, from CDP's
// Network domain), console messages and page errors.
//
// Chromium always runs with a temporary HOME (removed afterwards).
// --ca: the PEM CA certificate Chromium must trust (for wss): it goes into a new NSS database
//   in that HOME ($HOME/.pki/nssdb, made with certutil).
// --spki: alternatively, --ignore-certificate-errors-spki-list=BASE64 (base64 of the SHA-256 of
//   the server certificate's SubjectPublicKeyInfo): pins that one certificate.
//
// Exit status: 0 if window.result.ok, 1 if the page reported a failure, 2 if there was no
// result within --timeout seconds (default 20) or the browser could not be driven. The whole
// run is bounded by --timeout + 15 s. The browser is always stopped: CDP Browser.close, then
// SIGKILL to its process group (it leads one) for whatever is left of it, also on SIGTERM or
// when the bound runs out; the temporary directory is removed. RUN_PAGE_TRACE=1: timings.
"use strict";

const { spawn, execFileSync } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-address=127.0.0.1",
    "--remote-debugging-port=0",
];

function usage(msg) {
    console.error("run_page.js: " + msg);
    console.error("usage: node run_page.js URL [--timeout S] [--screenshot PATH] [--ca CA.pem] [--spki BASE64]" +
                  " [--chromium PATH]");
    process.exit(2);
}

function parseArgs(argv) {
    const opts = { timeout: 20, chromium: "/usr/bin/chromium" };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (!a.startsWith("--")) {
            if (opts.url) {
                usage("more than one URL");
            }
            opts.url = a;
            continue;
        }
        if (i + 1 >= argv.length) {
            usage(a + " needs a value");
        }
        const v = argv[++i];
        switch (a) {
            case "--timeout": opts.timeout = Number(v); break;
            case "--screenshot": opts.screenshot = v; break;
            case "--ca": opts.ca = v; break;
            case "--spki": opts.spki = v; break;
            case "--chromium": opts.chromium = v; break;
            default: usage("unknown option " + a);
        }
    }
    if (!opts.url) {
        usage("no URL");
    }
    if (!(opts.timeout > 0)) {
        usage("bad --timeout");
    }
    return opts;
}

const opts = parseArgs(process.argv.slice(2));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "moraine-chromium-"));
let child = null;          // the Chromium process (leader of its own process group)
let childExited = false;
let finished = false;
const stderrTail = [];     // Chromium's own output, for a failure report

const t0 = Date.now();
function log(msg) {
    process.stderr.write("run_page: " + msg + "\n");
}
function trace(msg) {  // RUN_PAGE_TRACE=1: where the time goes
    if (process.env.RUN_PAGE_TRACE) {
        log(((Date.now() - t0) / 1000).toFixed(3) + " s " + msg);
    }
}

// Chromium leads its own process group (spawned detached): the browser, its zygotes, renderers
// and utilities. While any of them lives, the group exists and its id (Chromium's PID) cannot
// be reused, so signalling the group reaches only what we started.
function groupAlive() {
    if (child === null) {
        return false;
    }
    try {
        process.kill(-child.pid, 0);
        return true;
    } catch (e) {
        return false;
    }
}

function killChromium() {
    if (child === null) {
        return;
    }
    if (groupAlive()) {
        try { process.kill(-child.pid, "SIGKILL"); } catch (e) { /* gone meanwhile */ }
    }
    if (!childExited) {
        try { child.kill("SIGKILL"); } catch (e) { /* already gone */ }
    }
}

function cleanup() {
    killChromium();
    fs.rmSync(tmp, { recursive: true, force: true });
}

function finish(code, output) {
    if (finished) {
        return;
    }
    finished = true;
    if (output !== undefined) {
        process.stdout.write(JSON.stringify(output) + "\n");
    }
    // Known noise: no D-Bus here, the Debian wrapper's /dev/shm test, our own DevTools line.
    const noise = /dbus|^\/usr\/bin\/chromium: \d+: \[:|DevTools listening/i;
    const tail = stderrTail.filter(l => l.trim() && !noise.test(l));
    if (code !== 0 && tail.length) {
        log("chromium output (tail):\n  " + tail.slice(-15).join("\n  "));
    }
    cleanup();
    process.exitCode = code;
    // Give stdout a moment to drain, then leave even if something still holds the event loop.
    setTimeout(() => process.exit(code), 100).unref();
}

// The hard bound: whatever hangs (CDP, the page, close), the browser is killed.
const watchdog = setTimeout(() => {
    log("no result within the overall bound: killing Chromium (pid " + (child && child.pid) + ")");
    finish(2, { ok: false, error: "run_page.js: overall timeout" });
}, (opts.timeout + 15) * 1000);
watchdog.unref();

for (const sig of ["SIGINT", "SIGTERM"]) {
    process.on(sig, () => finish(2, { ok: false, error: "run_page.js: " + sig }));
}

function makeHome(caPem) {
    // Chromium runs with a temporary HOME: what it writes there (e.g. crashpad's
    // ~/.config/chromium/Crash Reports) goes away with it. With caPem, the CA to trust goes into
    // a new NSS database there: Chromium on Linux reads $HOME/.pki/nssdb (sql: format).
    const home = path.join(tmp, "home");
    fs.mkdirSync(home);
    if (!caPem) {
        return home;
    }
    const db = path.join(home, ".pki", "nssdb");
    fs.mkdirSync(db, { recursive: true });
    const certutil = (args) => execFileSync("certutil", ["-d", "sql:" + db].concat(args),
                                            { timeout: 10000, stdio: ["ignore", "pipe", "pipe"] });
    certutil(["-N", "--empty-password"]);
    certutil(["-A", "-t", "C,,", "-n", "moraine-test-ca", "-i", path.resolve(caPem)]);
    return home;
}

function startChromium(env, extraFlags) {
    return new Promise((resolve, reject) => {
        const args = CHROMIUM_FLAGS.concat(["--user-data-dir=" + path.join(tmp, "profile")], extraFlags,
                                           ["about:blank"]);
        child = spawn(opts.chromium, args, { env, detached: true, stdio: ["ignore", "ignore", "pipe"] });
        child.on("exit", (code, signal) => {
            childExited = true;
            reject(new Error("Chromium exited (" + (signal || code) + ") before DevTools listened"));
        });
        child.on("error", reject);
        let buf = "";
        child.stderr.setEncoding("utf8");
        child.stderr.on("data", chunk => {
            buf += chunk;
            let nl;
            while ((nl = buf.indexOf("\n")) >= 0) {
                const line = buf.slice(0, nl);
                buf = buf.slice(nl + 1);
                stderrTail.push(line);
                if (stderrTail.length > 50) {
                    stderrTail.shift();
                }
                const m = /DevTools listening on (ws:\/\/\S+)/.exec(line);
                if (m) {
                    resolve(m[1]);
                }
            }
        });
    });
}

async function main() {
    const env = Object.assign({}, process.env);
    const extra = [];
    env.HOME = makeHome(opts.ca);
    if (opts.spki) {
        extra.push("--ignore-certificate-errors-spki-list=" + opts.spki);
    }
    const { chromium } = require("playwright-core");
    trace("starting Chromium");
    const wsEndpoint = await startChromium(env, extra);
    trace("DevTools listening");
    const browser = await chromium.connectOverCDP(wsEndpoint, { timeout: 10000 });
    const info = { version: browser.version(), pid: child.pid, websockets: [], console: [], errors: [] };
    let output;
    let noResult = false;
    try {
        const context = browser.contexts()[0] || await browser.newContext();
        const page = await context.newPage();
        page.on("console", m => info.console.push(m.type() + ": " + m.text()));
        page.on("pageerror", e => info.errors.push(String(e)));
        page.on("requestfailed", r => info.errors.push("request failed: " + r.url() + " " +
                                                       (r.failure() ? r.failure().errorText : "")));
        // The WebSocket handshakes, headers included, as Chromium's network stack saw them.
        const cdp = await context.newCDPSession(page);
        const sockets = new Map();
        cdp.on("Network.webSocketCreated", e => {
            const s = { url: e.url };
            sockets.set(e.requestId, s);
            info.websockets.push(s);
        });
        cdp.on("Network.webSocketWillSendHandshakeRequest", e => {
            const s = sockets.get(e.requestId);
            if (s) { s.requestHeaders = e.request.headers; }
        });
        cdp.on("Network.webSocketHandshakeResponseReceived", e => {
            const s = sockets.get(e.requestId);
            if (s) { s.status = e.response.status; s.responseHeaders = e.response.headers; }
        });
        cdp.on("Network.webSocketFrameError", e => {
            const s = sockets.get(e.requestId);
            if (s) { s.frameError = e.errorMessage; }
        });
        cdp.on("Network.webSocketClosed", e => {
            const s = sockets.get(e.requestId);
            if (s) { s.closed = true; }
        });
        await cdp.send("Network.enable");

        const deadline = Date.now() + opts.timeout * 1000;
        trace("page open");
        await page.goto(opts.url, { timeout: opts.timeout * 1000, waitUntil: "load" });
        try {
            // (window.result must be the page's own object: an element with id "result" would
            // be window.result too, by named access.)
            await page.waitForFunction(() => window.result && typeof window.result.ok === "boolean", null,
                                       { timeout: Math.max(1000, deadline - Date.now()), polling: 50 });
            output = await page.evaluate(() => window.result);
            trace("result read");
        } catch (e) {
            noResult = true;
            output = { ok: false, error: "run_page.js: no window.result within " + opts.timeout + " s (" +
                       String(e.message).split("\n")[0] + ")" };
        }
        if (opts.screenshot) {
            try {
                await page.screenshot({ path: opts.screenshot, fullPage: true, timeout: 5000 });
            } catch (e) {
                log("screenshot: " + String(e.message).split("\n")[0]);
            }
        }
    } finally {
        output = Object.assign(output || { ok: false, error: "run_page.js: page not driven" }, { browser: info });
        // browser.close() only disconnects from a browser reached over CDP: ask Chromium itself
        // to close (CDP Browser.close), then disconnect.
        const bounded = (p, ms) => Promise.race([p, new Promise(r => setTimeout(r, ms))]);
        try {
            const session = await bounded(browser.newBrowserCDPSession(), 2000);
            if (session) {
                await bounded(session.send("Browser.close").catch(() => {}), 2000);
            }
        } catch (e) {
            log("Browser.close: " + e.message);
        }
        try {
            await bounded(browser.close(), 2000);
        } catch (e) {
            log("browser.close: " + e.message);
        }
        // Chromium normally exits on Browser.close; wait for it briefly, then kill its group.
        trace("closed, waiting for exit");
        // Its helper processes then linger for up to a second: they are ours, SIGKILL them.
        const sleep = ms => new Promise(r => setTimeout(r, ms));
        let start = Date.now();
        while (!childExited && Date.now() - start < 3000) {
            await sleep(25);
        }
        trace(childExited ? "Chromium exited" : "Chromium still there after 3 s");
        killChromium();  // (killed helpers may show as zombies until init reaps them)
    }
    return { output, code: output.ok ? 0 : noResult ? 2 : 1 };
}

main().then(({ output, code }) => {
    finish(code, output);
}, e => {
    finish(2, { ok: false, error: "run_page.js: " + (e && e.message ? e.message.split("\n")[0] : String(e)) });
});
