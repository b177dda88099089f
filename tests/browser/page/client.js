// The Glacier2 client flow of the browser and Node tests, one source for both:
//   - in the page (index.html), it runs at once with the parameters of the page's query and
//     leaves its result in window.result (and in the page), which run_page.js reads;
//   - in Node, node_client.js require()s it and calls run().
//
// run(Ice, Glacier2, Demo, params) -> result (never throws). params: router (the
// Ice.Default.Router proxy, e.g. "Glacier2/router:ws -h 127.0.0.1 -p 4063"), hello (the back
// end's Demo::Hello proxy), user, password, tag (makes the call texts unique).
//
// The flow: createSession(user, password); getSessionTimeout; sayHello("<tag>"); fail("boom-<tag>")
// must raise Demo::Boom; an object adapter with the router and a Callback servant
// "<category>/cb" (category from getCategoryForClient); callMeBack (twoway: the back end calls
// the browser back before it replies) and callMeBackOneway; both callbacks must arrive within
// 5 s; destroySession. Every remote call is bounded (Ice.Default.InvocationTimeout).
//
// result: { ok, steps: [..], iceVersion, session, sessionTimeout, hello, boom, category,
//           callbacks: [..], destroyed, error, ms }
"use strict";

(function (root) {
    const CALLBACK_WAIT_MS = 5000;
    const DESTROY_WAIT_MS = 3000;

    function describe(e) {
        if (e === null || e === undefined) {
            return String(e);
        }
        const id = typeof e.ice_id === "function" ? e.ice_id() : (e.name || typeof e);
        let text = id;
        if (e.reason !== undefined) {
            text += " reason=" + JSON.stringify(e.reason);
        }
        if (e.message) {
            text += ": " + e.message;
        }
        if (e.stack && !e.ice_id) {  // where, for a JavaScript error (the stack's first frame)
            const frame = String(e.stack).split("\n").find(l => /^\s+at /.test(l));
            if (frame) {
                text += " (" + frame.trim() + ")";
            }
        }
        return text;
    }

    function within(promise, ms, what) {
        let timer;
        return Promise.race([
            promise,
            new Promise((_, reject) => {
                timer = setTimeout(() => reject(new Error(what + ": no result within " + ms + " ms")), ms);
            })
        ]).finally(() => clearTimeout(timer));
    }

    async function run(Ice, Glacier2, Demo, params) {
        const started = Date.now();
        const result = { ok: false, steps: [], callbacks: [], destroyed: false };
        const step = name => result.steps.push(name);
        let communicator = null;
        try {
            result.iceVersion = Ice.stringVersion();
            const initData = new Ice.InitializationData();
            initData.properties = Ice.createProperties();
            const props = {
                "Ice.Default.Router": params.router,
                "Ice.Default.InvocationTimeout": "5000",
                "Ice.Override.ConnectTimeout": "3000",
                "Ice.Override.CloseTimeout": "3000",
                "Ice.RetryIntervals": "-1",
                "Ice.Warn.Connections": "0"
            };
            for (const k of Object.keys(props)) {
                initData.properties.setProperty(k, props[k]);
            }
            communicator = Ice.initialize(initData);
            step("initialize");

            const router = Glacier2.RouterPrx.uncheckedCast(communicator.getDefaultRouter());
            const session = await router.createSession(params.user, params.password);
            result.session = session === null ? null : communicator.proxyToString(session);
            step("createSession");
            const timeout = await router.getSessionTimeout();
            result.sessionTimeout = typeof timeout === "number" ? timeout : timeout.toNumber();
            step("getSessionTimeout");

            const hello = Demo.HelloPrx.uncheckedCast(communicator.stringToProxy(params.hello));
            result.hello = await hello.sayHello(params.tag);
            step("sayHello");

            try {
                await hello.fail("boom-" + params.tag);
                result.boom = "no exception";
            } catch (e) {
                result.boom = e instanceof Demo.Boom ? e.why : "unexpected " + describe(e);
            }
            step("fail");

            result.category = await router.getCategoryForClient();
            step("getCategoryForClient");
            const adapter = await communicator.createObjectAdapterWithRouter("", router);
            step("createObjectAdapterWithRouter");
            let notify = () => {};
            class CallbackI extends Demo.Callback {
                ping(msg, current) {
                    result.callbacks.push(msg);
                    notify();
                }
            }
            const cb = Demo.CallbackPrx.uncheckedCast(
                adapter.add(new CallbackI(), new Ice.Identity("cb", result.category)));
            await adapter.activate();
            step("activate");

            const twoway = "twoway-" + params.tag;
            const oneway = "oneway-" + params.tag;
            await hello.callMeBack(cb, twoway);
            step("callMeBack");
            await hello.callMeBackOneway(cb, oneway);
            step("callMeBackOneway");
            const arrived = () => result.callbacks.includes(twoway) && result.callbacks.includes(oneway);
            if (!arrived()) {
                await within(new Promise(resolve => {
                    notify = () => { if (arrived()) { resolve(); } };
                }), CALLBACK_WAIT_MS, "callbacks " + JSON.stringify([twoway, oneway]));
            }
            step("callbacks");

            await router.destroySession();
            result.destroyed = true;
            step("destroySession");
            result.ok = true;
        } catch (e) {
            result.error = describe(e);
        } finally {
            if (communicator !== null) {
                try {
                    await within(communicator.destroy(), DESTROY_WAIT_MS, "communicator.destroy");
                } catch (e) {
                    result.destroyError = describe(e);
                }
            }
            result.ms = Date.now() - started;
        }
        return result;
    }

    if (typeof module !== "undefined" && module.exports) {
        module.exports = { run, describe };
    } else {
        // In the page: parameters from the query; the result for run_page.js and for people.
        const q = new URLSearchParams(root.location.search);
        const params = {};
        for (const k of ["router", "hello", "user", "password", "tag"]) {
            params[k] = q.get(k) || "";
        }
        const show = r => {
            const status = root.document.getElementById("status");
            status.textContent = r.ok ? "ok" : "failed";
            status.className = r.ok ? "ok" : "failed";
            root.document.getElementById("output").textContent = JSON.stringify(r, null, 2);
            root.result = r;
        };
        if (typeof root.Ice === "undefined" || typeof root.Glacier2 === "undefined" ||
            typeof root.Demo === "undefined") {
            show({ ok: false, steps: [], error: "scripts not loaded: Ice " + typeof root.Ice + ", Glacier2 " +
                   typeof root.Glacier2 + ", Demo " + typeof root.Demo });
        } else {
            run(root.Ice, root.Glacier2, root.Demo, params).then(show);
        }
    }
})(typeof window !== "undefined" ? window : globalThis);
