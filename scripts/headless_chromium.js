// Debian's headless Chromium (/usr/bin/chromium, never a downloaded browser) for the project's
// Node drivers, tests/browser/run_page.js and demo/web/screenshot.js: started with a fresh
// temporary --user-data-dir and --remote-debugging-port=0, its DevTools URL read from its stderr
// for the caller's playwright-core (connectOverCDP; each caller requires it from its own
// node_modules, this module uses Node builtins only), and always stopped, temporary directory
// removed. Chromium is spawned detached, so it leads its own process group: the browser, its
// zygotes, renderers and utilities. While any of them lives the group exists and its id
// (Chromium's PID) cannot be reused, so SIGKILL to the group reaches all of what we started and
// nothing else; killing the PID alone would leave its helpers behind.
"use strict";

const { spawn } = require("child_process");
const fs = require("fs");
const os = require("os");
const path = require("path");

const FLAGS = [
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

// Known noise on Chromium's stderr: no D-Bus here, the Debian wrapper's /dev/shm test, the
// DevTools line.
const NOISE = /dbus|^\/usr\/bin\/chromium: \d+: \[:|DevTools listening/i;

const sleep = ms => new Promise(r => setTimeout(r, ms));
// p, or undefined after ms; a late rejection of p is ignored.
const bounded = (p, ms) => {
    p.catch(() => {});
    return Promise.race([p, sleep(ms)]);
};

class HeadlessChromium {
    // prefix: of the temporary directory (made now, in os.tmpdir()). log: the caller's stderr
    // line writer. At finish(code), the last tailLines lines of Chromium's stderr (noise left
    // out) are logged if tailWhen(code).
    constructor({ prefix, log, tailLines, tailWhen }) {
        this.tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
        this.log = log;
        this.tailLines = tailLines;
        this.tailWhen = tailWhen;
        this.child = null;       // the Chromium process (leader of its own process group)
        this.exited = false;
        this.finished = false;
        this.stderrTail = [];    // Chromium's own output, for a failure report
    }

    // Spawns Chromium (FLAGS, the profile in tmp, extraFlags, about:blank) with env (default:
    // ours); resolves to its DevTools WebSocket URL, rejects if it exits before that.
    start(executable, extraFlags = [], env = undefined) {
        return new Promise((resolve, reject) => {
            const args = FLAGS.concat(["--user-data-dir=" + path.join(this.tmp, "profile")], extraFlags,
                                      ["about:blank"]);
            const child = spawn(executable, args, { env, detached: true, stdio: ["ignore", "ignore", "pipe"] });
            this.child = child;
            child.on("exit", (code, signal) => {
                this.exited = true;
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
                    this.stderrTail.push(line);
                    if (this.stderrTail.length > 50) {
                        this.stderrTail.shift();
                    }
                    const m = /DevTools listening on (ws:\/\/\S+)/.exec(line);
                    if (m) {
                        resolve(m[1]);
                    }
                }
            });
        });
    }

    groupAlive() {
        if (this.child === null) {
            return false;
        }
        try {
            process.kill(-this.child.pid, 0);
            return true;
        } catch (e) {
            return false;
        }
    }

    kill() {  // (killed helpers may show as zombies until init reaps them)
        if (this.child === null) {
            return;
        }
        if (this.groupAlive()) {
            try { process.kill(-this.child.pid, "SIGKILL"); } catch (e) { /* gone meanwhile */ }
        }
        if (!this.exited) {
            try { this.child.kill("SIGKILL"); } catch (e) { /* already gone */ }
        }
    }

    // Stops the browser that playwright-core's `browser` drives: browser.close() only
    // disconnects from a browser reached over CDP, so Chromium itself is asked to close (CDP
    // Browser.close), then we disconnect, wait up to 3 s for it to exit and SIGKILL its group
    // (its helpers linger for up to a second). log: where errors go (default: nowhere).
    async close(browser, { log, trace } = {}) {
        try {
            const session = await bounded(browser.newBrowserCDPSession(), 2000);
            if (session) {
                await bounded(session.send("Browser.close").catch(() => {}), 2000);
            }
        } catch (e) {
            if (log) { log("Browser.close: " + e.message); }
        }
        try {
            await bounded(browser.close(), 2000);
        } catch (e) {
            if (log) { log("browser.close: " + e.message); }
        }
        if (trace) { trace("closed, waiting for exit"); }
        const start = Date.now();
        while (!this.exited && Date.now() - start < 3000) {
            await sleep(25);
        }
        if (trace) { trace(this.exited ? "Chromium exited" : "Chromium still there after 3 s"); }
        this.kill();
    }

    // Once only: output (if any) as one JSON line on stdout, Chromium's stderr tail if wanted,
    // Chromium killed, the temporary directory removed, exit with code (after 100 ms for stdout
    // to drain, even if something still holds the event loop).
    finish(code, output) {
        if (this.finished) {
            return;
        }
        this.finished = true;
        if (output !== undefined) {
            process.stdout.write(JSON.stringify(output) + "\n");
        }
        const tail = this.stderrTail.filter(l => l.trim() && !NOISE.test(l));
        if (this.tailWhen(code) && tail.length) {
            this.log("chromium output (tail):\n  " + tail.slice(-this.tailLines).join("\n  "));
        }
        this.kill();
        fs.rmSync(this.tmp, { recursive: true, force: true });
        process.exitCode = code;
        setTimeout(() => process.exit(code), 100).unref();
    }

    // The hard bound, whatever hangs (CDP, the page, close): after `seconds`, or on one of
    // `signals`, finish(2) with {ok: false, error: "<name>: overall timeout" or "<name>: SIG..."}.
    // onTimeout: called first on the timeout.
    guard(name, seconds, signals, onTimeout) {
        setTimeout(() => {
            if (onTimeout) { onTimeout(); }
            this.finish(2, { ok: false, error: name + ": overall timeout" });
        }, seconds * 1000).unref();
        for (const sig of signals) {
            process.on(sig, () => this.finish(2, { ok: false, error: name + ": " + sig }));
        }
    }

    // main's outcome: resolved {code, output}, or finish(2) with the first line of the error.
    report(name, promise) {
        promise.then(({ code, output }) => this.finish(code, output),
                     e => this.finish(2, { ok: false, error: name + ": " +
                                                         String(e && e.message || e).split("\n")[0] }));
    }
}

module.exports = { FLAGS, NOISE, HeadlessChromium };
