"""A client program the tests drive by its output: its stdout read line by line by a thread,
each line kept with its arrival time, and waits for a line that matches a pattern."""

import queue
import re
import subprocess
import threading
import time

import harness as H


class LineClient:
    """`cmd` started with stdout (and stderr) piped; every line read is also written to
    `log_path`. `seen` holds (arrival time, line) of every line consumed so far, in order."""

    def __init__(self, cmd, log_path, name="the client"):
        self.name = name
        self.lines = queue.Queue()
        self.seen = []
        self.log = open(log_path, "w")
        self.popen = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      text=True, preexec_fn=H._die_with_parent)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.popen.stdout:
            self.lines.put((time.monotonic(), line.rstrip("\n")))
        self.lines.put((time.monotonic(), None))

    def wait_timed(self, pattern, timeout, what):
        """(arrival time, match) of the first line from now on that matches regex `pattern`.
        Raises harness.Failure on a line starting "FAIL", on the program's exit, or after
        `timeout` s; `what` names the step in the message."""
        end = time.monotonic() + timeout
        while True:
            try:
                t, line = self.lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                raise H.Failure("no '%s' within %.0f s (%s)" % (pattern, timeout, what))
            if line is None:
                raise H.Failure("%s exited (%s) while waiting for '%s' (%s)"
                                % (self.name, self.popen.wait(5), pattern, what))
            self.seen.append((t, line))
            self.log.write(line + "\n")
            self.log.flush()
            if line.startswith("FAIL"):
                raise H.Failure("client: " + line)
            m = re.search(pattern, line)
            if m:
                return t, m

    def wait_for(self, pattern, timeout, what):
        """The match of wait_timed(), without its time."""
        return self.wait_timed(pattern, timeout, what)[1]

    def last_lines(self, n):
        """The last `n` lines consumed, oldest first."""
        return [line for _, line in self.seen[-n:]]

    def stop(self):
        """Kill by PID if still running; close the log."""
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.wait(5)
        self.log.close()
