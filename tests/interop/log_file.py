"""A process's log file as the tests read it: everything after a mark, and waits for a line."""

import re

import harness as H


class LogFile:
    """The file at `path`, read from a mark on (mark() sets it to the current end)."""

    def __init__(self, path):
        self.path, self.at = path, 0

    def text(self):
        with open(self.path, errors="replace") as f:
            return f.read()

    def mark(self):
        self.at = len(self.text())

    def since(self):
        """What was written after the mark."""
        return self.text()[self.at:]

    def wait_for(self, pattern, timeout=3.0):
        """The first match of regex `pattern` after the mark, waiting up to `timeout` s; or None."""
        return H.wait_until(lambda: re.search(pattern, self.since()), timeout)

    def require(self, pattern, what, timeout=3.0):
        """wait_for(), or harness.Failure naming `what` with the log's last lines."""
        m = self.wait_for(pattern, timeout)
        H.check(m, "%s: no log line matching %r within %.0f s; log since: %s"
                % (what, pattern, timeout, tail(self.since())))
        return m


def tail(text, lines=8):
    """The last `lines` lines of `text` on one line, for a failure message."""
    text = text.strip()
    return " | ".join(text.splitlines()[-lines:]) if text else "(nothing)"
