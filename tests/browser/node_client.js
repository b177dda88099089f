#!/usr/bin/env node
// Ice for JavaScript (npm `ice`) in Node through a Glacier2 router over tcp: the same flow as
// the browser page (page/client.js).
//
//   node node_client.js --router 'Glacier2/router:tcp -h 127.0.0.1 -p PORT' \
//        --hello 'hello:tcp -h 127.0.0.1 -p PORT' [--user alice] [--password secret]
//        [--tag TAG] [--timeout SECONDS]
//
// Prints the result as one JSON line on stdout. Exit status 0 if the flow succeeded, 1 if it
// failed, 2 on a usage error or when it did not finish within --timeout (default 20 s).
// Needs `bash setup` first (node_modules, generated/Demo.js).
"use strict";

const path = require("path");

function parseArgs(argv) {
    const opts = { user: "alice", password: "secret", tag: "node", timeout: "20" };
    for (let i = 0; i < argv.length; i += 2) {
        const key = argv[i];
        if (!key.startsWith("--") || i + 1 >= argv.length) {
            throw new Error("bad argument " + JSON.stringify(key));
        }
        opts[key.slice(2)] = argv[i + 1];
    }
    for (const k of ["router", "hello"]) {
        if (!opts[k]) {
            throw new Error("--" + k + " is required");
        }
    }
    return opts;
}

let opts;
try {
    opts = parseArgs(process.argv.slice(2));
} catch (e) {
    console.error("node_client.js: " + e.message);
    process.exit(2);
}

const watchdog = setTimeout(() => {
    console.log(JSON.stringify({ ok: false, error: "node_client.js: no result within " + opts.timeout + " s" }));
    process.exit(2);
}, Number(opts.timeout) * 1000);

const { Ice, Glacier2 } = require("ice");
const { Demo } = require(path.join(__dirname, "generated", "Demo.js"));
const { run } = require(path.join(__dirname, "page", "client.js"));

run(Ice, Glacier2, Demo, opts).then(result => {
    result.node = process.version;
    clearTimeout(watchdog);
    process.stdout.write(JSON.stringify(result) + "\n", () => process.exit(result.ok ? 0 : 1));
});
