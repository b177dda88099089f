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
// when the bound runs out; the temporary directory is removed (scripts/headless_chromium.js).
// RUN_PAGE_TRACE=1: timings.
"use strict";

const { execFileSync } = require("child_process");
const fs = require("fs");
const path = require("path");
const { HeadlessChromium } = require(path.join(__dirname, "..", "..", "scripts", "headless_chromium.js"));

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

const t0 = Date.now();
function log(msg) {
    process.stderr.write("run_page: " + msg + "\n");
}
function trace(msg) {  // RUN_PAGE_TRACE=1: where the time goes
    if (process.env.RUN_PAGE_TRACE) {
        log(((Date.now() - t0) / 1000).toFixed(3) + " s " + msg);
    }
}

const browserProcess = new HeadlessChromium({ prefix: "moraine-chromium-", log, tailLines: 15,
                                              tailWhen: code => code !== 0 });
browserProcess.guard("run_page.js", opts.timeout + 15, ["SIGINT", "SIGTERM"], () => {
    const child = browserProcess.child;
    log("no result within the overall bound: killing Chromium (pid " + (child && child.pid) + ")");
});

function makeHome(caPem) {
    // Chromium runs with a temporary HOME: what it writes there (e.g. crashpad's
    // ~/.config/chromium/Crash Reports) goes away with it. With caPem, the CA to trust goes into
    // a new NSS database there: Chromium on Linux reads $HOME/.pki/nssdb (sql: format).
    const home = path.join(browserProcess.tmp, "home");
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

async function main() {
    const env = Object.assign({}, process.env);
    const extra = [];
    env.HOME = makeHome(opts.ca);
    if (opts.spki) {
        extra.push("--ignore-certificate-errors-spki-list=" + opts.spki);
    }
    const { chromium } = require("playwright-core");
    trace("starting Chromium");
    const wsEndpoint = await browserProcess.start(opts.chromium, extra, env);
    trace("DevTools listening");
    const browser = await chromium.connectOverCDP(wsEndpoint, { timeout: 10000 });
    const info = { version: browser.version(), pid: browserProcess.child.pid, websockets: [], console: [],
                   errors: [] };
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
        await browserProcess.close(browser, { log, trace });
    }
    return { output, code: output.ok ? 0 : noResult ? 2 : 1 };
}

browserProcess.report("run_page.js", main());
