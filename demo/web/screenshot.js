#!/usr/bin/env node
// Opens the web clock demo page in Debian's headless Chromium, takes a PNG screenshot of it (the
// whole page) and prints the page's figures (window.clockDemo) as one JSON line on stdout.
//
//   node screenshot.js URL --out PATH [--min-ticks 3] [--timeout 30] [--wait-stdin]
//                          [--chromium /usr/bin/chromium]
//
// Without --wait-stdin the screenshot is taken as soon as the page has received --min-ticks
// ticks. With --wait-stdin (demo/clock/run_demo.py) it first prints {"event":"subscribed"} once
// the page's session is subscribed, then waits for a line (or end of input) on stdin, then for
// --min-ticks ticks, then shoots: so the caller picks the moment.
//
// Chromium (/usr/bin/chromium; nothing downloads a browser) is started here with a fresh
// temporary --user-data-dir and --remote-debugging-port=0, leading its own process group, and
// playwright-core drives it over CDP. It is always stopped: CDP Browser.close, then SIGKILL to
// its process group (its PID, which is ours) if anything of it is left; the temporary directory
// is removed (scripts/headless_chromium.js). --timeout bounds each wait (page subscribed; ticks
// after the go); a watchdog bounds the whole run.
//
// Exit status: 0 with a screenshot and at least --min-ticks ticks, 1 if the page got fewer
// (a screenshot is still taken, to show why) or reported an error, 2 if the browser could not
// be driven.
"use strict";

const fs = require("fs");
const path = require("path");
const readline = require("readline");
const { HeadlessChromium } = require(path.join(__dirname, "..", "..", "scripts", "headless_chromium.js"));

function usage(msg) {
    console.error("screenshot.js: " + msg);
    console.error("usage: node screenshot.js URL --out PATH [--min-ticks N] [--timeout S] [--wait-stdin] [--chromium PATH]");
    process.exit(2);
}

function parseArgs(argv) {
    const o = { minTicks: 3, timeout: 30, waitStdin: false, chromium: "/usr/bin/chromium" };
    for (let i = 0; i < argv.length; i++) {
        const a = argv[i];
        if (!a.startsWith("--")) {
            if (o.url) {
                usage("more than one URL");
            }
            o.url = a;
        } else if (a === "--wait-stdin") {
            o.waitStdin = true;
        } else {
            if (i + 1 >= argv.length) {
                usage(a + " needs a value");
            }
            const v = argv[++i];
            switch (a) {
                case "--out": o.out = v; break;
                case "--min-ticks": o.minTicks = Number(v); break;
                case "--timeout": o.timeout = Number(v); break;
                case "--chromium": o.chromium = v; break;
                default: usage("unknown option " + a);
            }
        }
    }
    if (!o.url || !o.out) {
        usage("URL and --out are required");
    }
    if (!(o.timeout > 0) || !(o.minTicks >= 0)) {
        usage("bad --timeout or --min-ticks");
    }
    return o;
}

const opts = parseArgs(process.argv.slice(2));
const log = msg => process.stderr.write("screenshot.js: " + msg + "\n");
const browserProcess = new HeadlessChromium({ prefix: "moraine-web-demo-", log, tailLines: 10,
                                              tailWhen: code => code === 2 });
// Whatever hangs, the browser is killed: page subscribed + the caller's wait + ticks + margin.
browserProcess.guard("screenshot.js", 2 * opts.timeout + (opts.waitStdin ? 3600 : 0) + 20,
                     ["SIGINT", "SIGTERM", "SIGHUP"]);

function stdinLine() {
    return new Promise(resolve => {
        const rl = readline.createInterface({ input: process.stdin });
        rl.once("line", () => { rl.close(); resolve(); });
        rl.once("close", resolve);
    });
}

const figures = () => {
    const d = window.clockDemo;
    return d ? { state: d.state, detail: d.detail, error: d.error, ticks: d.ticks, lost: d.lost,
                 malformed: d.malformed, eventsPerSecond: d.eventsPerSecond, p50: d.p50, p99: d.p99,
                 max: d.max, lastTime: d.lastTime, lastSeq: d.lastSeq, subscriber: d.subscriber,
                 sessions: d.sessions, iceVersion: d.iceVersion, clockSync: d.clockSync,
                 beside: d.beside } : null;
};

async function main() {
    const { chromium } = require("playwright-core");
    const devtools = await browserProcess.start(opts.chromium, ["--hide-scrollbars"]);
    if (opts.waitStdin) {  // for the caller's last resort, should this process be killed
        process.stdout.write(JSON.stringify({ event: "chromium", pid: browserProcess.child.pid }) + "\n");
    }
    const browser = await chromium.connectOverCDP(devtools, { timeout: 10000 });
    let result = { ok: false };
    try {
        const context = browser.contexts()[0] || await browser.newContext();
        const page = await context.newPage();
        const errors = [];
        page.on("pageerror", e => errors.push(String(e)));
        page.on("console", m => { if (m.type() === "error") { errors.push(m.text()); } });
        await page.setViewportSize({ width: 1100, height: 720 });
        await page.goto(opts.url, { timeout: opts.timeout * 1000, waitUntil: "load" });
        const waitFor = async (fn, arg) => {
            try {
                await page.waitForFunction(fn, arg, { timeout: opts.timeout * 1000, polling: 100 });
                return true;
            } catch (e) {
                return false;
            }
        };
        if (opts.waitStdin) {
            const subscribed = await waitFor(() => window.clockDemo && window.clockDemo.state === "subscribed");
            process.stdout.write(JSON.stringify({ event: subscribed ? "subscribed" : "not subscribed",
                                                  page: await page.evaluate(figures) }) + "\n");
            await stdinLine();
        }
        const enough = await waitFor(n => window.clockDemo && window.clockDemo.ticks >= n, opts.minTicks);
        await page.waitForTimeout(1100);  // one more rendering of the figures (each second)
        fs.mkdirSync(path.dirname(path.resolve(opts.out)), { recursive: true });
        await page.screenshot({ path: opts.out, timeout: 10000, fullPage: true });
        const f = await page.evaluate(figures);
        result = Object.assign({ ok: enough && f !== null && f.state === "subscribed", screenshot: opts.out },
                               f || {}, { pageErrors: errors, chromium: browser.version() });
        // Leave the router cleanly: the page destroys its session and closes its connection.
        const closed = await Promise.race([
            page.evaluate(() => window.clockDemo && window.clockDemo.close ? window.clockDemo.close().then(() => true) : false),
            new Promise(r => setTimeout(() => r(false), 3000))]).catch(() => false);
        result.sessionDestroyed = closed;
    } finally {
        await browserProcess.close(browser);
    }
    return result;
}

browserProcess.report("screenshot.js", main().then(r => ({ code: r.ok ? 0 : 1, output: r })));
