"""Drop-in details: moraine-router started exactly as glacier2router is, by unit files and scripts
written for glacier2router. Each scenario runs against both routers with the same arguments."""

import harness as H  # before Glacier2: see harness._import_glacier2
import Glacier2  # noqa: E402,F401
from harness import check
from scenarios import hello_prx, router_prx, scenario, short

COMMAND_LINE_TIMEOUT = 17  # s: differs from the file's 30, so the option is seen to win


@scenario
def glacier2_command_line(env):
    """`ROUTER --Ice.Config=FILE --Glacier2.Client.Endpoints=... --Glacier2.SessionTimeout=17`:
    the options override the file, as glacier2router's communicator does. The file names a client
    port nobody listens on and SessionTimeout 30; the router must listen where the option says,
    report the option's session timeout, and forward a call to the back end."""
    env.backend()
    router = env.router("command-line", {"Glacier2.CryptPasswords": env.passwords,
                                         "Glacier2.SessionTimeout": "30"},
                        command_line={"Glacier2.SessionTimeout": str(COMMAND_LINE_TIMEOUT)})
    with env.communicator(router) as ic:
        prx = router_prx(ic)
        try:
            prx.createSession("alice", "secret")
        except Exception as e:  # noqa: BLE001 - any failure is the finding
            raise H.Failure("createSession on the command line's client endpoint: %s: %s" % (type(e).__name__, short(e)))
        timeout = prx.getSessionTimeout()
        check(timeout == COMMAND_LINE_TIMEOUT, "getSessionTimeout() = %s: the file's value won over "
              "--Glacier2.SessionTimeout=%d" % (timeout, COMMAND_LINE_TIMEOUT))
        answer = hello_prx(env, ic).sayHello("cli")
        check("cli" in answer, "sayHello through the router answered %r" % answer)
    return "client endpoint and SessionTimeout %d taken from the command line over the file" % COMMAND_LINE_TIMEOUT
