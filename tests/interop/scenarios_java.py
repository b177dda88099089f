"""Ice for Java interop scenario: the Java client in java/Client.java (Ice for Java 3.7.8, from
Debian's libzeroc-ice3.7-java) through the router under test, registered after the TLS ones.

The client is compiled at test time (slice2java Demo.ice, then javac against the Debian jars)
into a directory next to the C++ client's build directory, named by a hash of its inputs, so
later runs reuse it until Demo.ice, Client.java or the installed tools change. Like
`cpp_client`, it is skipped with --no-cpp (the ASan run), which builds no client programs.
"""
import hashlib
import os
import shutil
import subprocess
import time
import uuid

import harness as H
from harness import Failure, check
from scenarios import main_router, scenario, short

# Debian package paths (libzeroc-ice3.7-java): Maven Central has com.zeroc:ice but not glacier2.
JARS = ["/usr/share/java/ice-3.7.8.jar", "/usr/share/java/glacier2-3.7.8.jar"]
JAVA_DIR = os.path.join(H.HERE, "java")
SOURCES = [os.path.join(H.HERE, "Demo.ice"), os.path.join(JAVA_DIR, "Client.java")]
# Which Debian package provides each tool, for the failure message.
TOOLS = {"slice2java": "zeroc-ice-compilers", "javac": "openjdk-17-jdk-headless", "java": "openjdk-17-jdk-headless"}
BUILD_TIMEOUT = 120
RUN_TIMEOUT = 30
EXPECTED_LINES = ["session ok", "hello java", "boom kaboom", "callback ring", "oneway callback knock",
                  "session destroyed"]


def _tools():
    """{name: path} of the Java build tools, or a Failure naming what to install (tests/run's
    setup installs them, so a missing one is a broken setup, not a reason to skip)."""
    missing = ["%s (%s)" % (p, "libzeroc-ice3.7-java") for p in JARS if not os.path.isfile(p)]
    tools = {}
    for name, package in TOOLS.items():
        tools[name] = shutil.which(name)
        if tools[name] is None:
            missing.append("%s (%s)" % (name, package))
    if missing:
        raise Failure("Ice for Java client needs: %s; scripts/setup installs them" % ", ".join(missing))
    return tools


def _input_hash(tools):
    """Hash of what the compiled classes depend on: the sources' contents, and which tools and
    jars are installed (path, size, mtime: a package upgrade changes them)."""
    h = hashlib.sha256()
    for path in SOURCES:
        with open(path, "rb") as f:
            h.update(path.encode() + b"\0" + f.read() + b"\0")
    for path in sorted(tools.values()) + JARS:
        real = os.path.realpath(path)
        st = os.stat(real)
        h.update(("%s %d %d\0" % (real, st.st_size, st.st_mtime_ns)).encode())
    return h.hexdigest()[:16]


def _run_step(cmd, log, what):
    log.write("$ %s\n" % " ".join(cmd))
    log.flush()
    try:
        rc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            timeout=BUILD_TIMEOUT).returncode
    except subprocess.TimeoutExpired:
        rc = "timeout after %d s" % BUILD_TIMEOUT
    if rc != 0:
        log.flush()
        with open(log.name, errors="replace") as f:
            tail = "".join(f.readlines()[-10:])
        raise Failure("building the Java client failed (%s: %s):\n%s" % (what, rc, tail))


def build_java_client(env):
    """Compiles the Java client once per set of inputs; returns its classpath.

    The classes live in <cpp build dir>/../interop-java/<input hash>/classes. A build goes to a
    fresh temporary directory that is renamed into place only when complete, so a run that was
    interrupted, or two runs building at once (e.g. both routers in parallel), never leave or
    use a half-built directory."""
    cached = getattr(env, "_java_classpath", None)
    if cached:
        return cached
    tools = _tools()
    root = os.path.join(os.path.dirname(env.cpp_build_dir), "interop-java")
    key = _input_hash(tools)
    final = os.path.join(root, key)
    if not os.path.isdir(os.path.join(final, "classes")):
        os.makedirs(root, exist_ok=True)
        tmp = os.path.join(root, "tmp-%d-%s" % (os.getpid(), uuid.uuid4().hex[:8]))
        try:
            # slice2java creates the package directory, but not its parent.
            os.makedirs(os.path.join(tmp, "generated"))
            with open(os.path.join(env.dir, "java-build.log"), "w") as log:
                _run_step([tools["slice2java"], "--output-dir", os.path.join(tmp, "generated"), SOURCES[0]],
                          log, "slice2java Demo.ice")
                generated = sorted(os.path.join(d, f) for d, _, files in os.walk(os.path.join(tmp, "generated"))
                                   for f in files if f.endswith(".java"))
                _run_step([tools["javac"], "-encoding", "UTF-8", "-nowarn", "-d", os.path.join(tmp, "classes"),
                           "-cp", ":".join(JARS)] + generated + [SOURCES[1]], log, "javac")
            try:
                os.rename(tmp, final)
            except OSError:
                # Another run renamed its identical build into place first: use that one.
                if not os.path.isdir(os.path.join(final, "classes")):
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        # Builds for older inputs are never used again. A tmp-* directory may be another run's
        # build in progress, so it stays (the finally above removes ours).
        for name in os.listdir(root):
            if name != key and not name.startswith("tmp-"):
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)
    env._java_classpath = ":".join([os.path.join(final, "classes")] + JARS)
    return env._java_classpath


# ---------------------------------------------------------------------------------------------
# The Ice for Java client

@scenario
def java_client(env):
    if env.cpp_build_dir is None:
        raise H.Skip("--no-cpp")
    classpath = build_java_client(env)
    router = main_router(env)
    # TieredStopAtLevel=1: the client runs for a second or so, so the JIT's later tiers
    # would only cost start-up time.
    cmd = [shutil.which("java"), "-XX:TieredStopAtLevel=1", "-cp", classpath, "Client",
           router.proxy, env.hello_proxy(), "alice", "secret"]
    start = time.monotonic()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise Failure("Java client did not finish within %d s" % RUN_TIMEOUT)
    took = time.monotonic() - start
    # stderr first: on a failure it holds the exception, which short() would otherwise cut.
    check(out.returncode == 0, "Java client exit %d: %s | stdout: %s"
          % (out.returncode, short(out.stderr), short(out.stdout)))
    lines = out.stdout.splitlines()
    check(lines == EXPECTED_LINES, "Java client printed %r, expected %r" % (lines, EXPECTED_LINES))
    return "client ran %.1f s" % took
