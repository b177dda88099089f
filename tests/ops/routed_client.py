"""What the operations tests share (tests/ops/takeover.py, tests/ops/reuse_port.py): a router
process's log as text, and one real Ice 3.7 client with a Glacier2 session and a routed hello
proxy, found afterwards in the log of the router that traced its session.
Import after tests/interop/harness.py (it puts Glacier2 and Demo on the path)."""

import Glacier2  # noqa: F401  (after harness: see harness._import_glacier2)
import harness as H

Demo = H.Demo


def log_text(proc):
    """Everything `proc` (a harness process with a log file) has logged so far."""
    if not proc.log.closed:
        proc.log.flush()
    with open(proc.log_path, errors="replace") as f:
        return f.read()


class RoutedClient:
    """One Ice client with its own communicator: a session and a routed hello proxy."""

    def __init__(self, env, proxy, hello):
        self.ic = env.communicator(extra={"Ice.Default.Router": proxy})
        self.router = Glacier2.RouterPrx.checkedCast(self.ic.getDefaultRouter())
        self.hello = Demo.HelloPrx.uncheckedCast(self.ic.stringToProxy(hello))
        self.category = None

    def open(self):
        """A session as alice, its category, and one routed call."""
        self.router.createSession("alice", H.CRYPT_USERS["alice"])
        self.category = self.router.getCategoryForClient()
        self.hello.sayHello("x")

    def traced_by(self, routers):
        """The names of the routers ({name: process or None}) whose log traced this session."""
        needle = "category '%s'" % self.category
        return [name for name, proc in routers.items() if proc is not None and needle in log_text(proc)]

    def close(self):
        self.ic.destroy()
