#!/usr/bin/env python3
"""scripts/check-layers must fail on a planted violation of each rule of the layer table.

Copies the tracked sources to a temporary folder, plants one forbidden include or link at a
time, and expects check-layers to exit 1 naming the planted file; the clean copy must pass.
Run from the repository root: python3 tests/layers/planted.py
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
# (file to plant into, line to add first, the rule it breaks)
PLANTS = [
    ("protocol/src/header.cpp", "#include <boost/asio/io_context.hpp>", "protocol: no asio"),
    ("protocol/src/header.cpp", "#include <moraine/session/session.hpp>", "protocol: no other layer"),
    ("transport/src/tls_engine.cpp", "#include <boost/asio/ip/tcp.hpp>", "transport: no asio"),
    ("transport/src/tls_engine.cpp", "#include <moraine/net/shard.hpp>", "transport: not the runtime"),
    ("session/src/admission.cpp", "#include <boost/asio/ip/tcp.hpp>", "session: no asio"),
    ("session/src/admission.cpp", "#include <moraine/net/shard.hpp>", "session: not the runtime"),
    ("client/src/router_address.cpp", "#include <moraine/net/shard.hpp>", "client: no runtime internals"),
    ("client/src/router_address.cpp", "#include <moraine/router/session_router.hpp>", "client: no router"),
    ("net/src/shard.cpp", "#include <moraine/router/session_router.hpp>", "net: no Glacier2"),
    ("net/src/shard.cpp", "#include <moraine/icestorm_bridge/topic_service.hpp>", "net: no topics"),
    ("net/src/shard.cpp", '#include "../../session/include/moraine/session/session.hpp"',
     "net: quoted relative include of sessions"),
    ("router/src/session_router.cpp", "#include <moraine/icestorm_bridge/topic_service.hpp>",
     "router: not sideways to topics"),
    ("icestorm-bridge/src/topic_service.cpp", "#include <moraine/router/session_router.hpp>",
     "icestorm-bridge: not sideways to the router"),
    ("router/CMakeLists.txt", "target_link_libraries(moraine_router PUBLIC moraine::icestorm_bridge)",
     "router: no link to topics"),
    ("net/CMakeLists.txt", "target_link_libraries(moraine_net PUBLIC moraine::session)",
     "net: no link to sessions"),
]


def check(tree):
    return subprocess.run([sys.executable, str(tree / "scripts/check-layers"), "--root", str(tree)],
                          capture_output=True, text=True)


def main():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        tree = pathlib.Path(tmp)
        for f in files:
            if (ROOT / f).is_file() and (f.endswith(("pp", ".txt")) or f.startswith("scripts/")):
                (tree / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / f, tree / f)
        clean = check(tree)
        if clean.returncode != 0:
            print("FAIL: the clean tree does not pass:\n" + clean.stderr)
            return 1
        for path, line, rule in PLANTS:
            target = tree / path
            original = target.read_text()
            target.write_text(line + "\n" + original)
            result = check(tree)
            target.write_text(original)
            caught = result.returncode == 1 and path in result.stderr
            failures += not caught
            print(f"{'caught' if caught else 'MISSED'}: {rule:45} ({path})")
    print("planted violations: all caught" if not failures else f"planted violations: {failures} missed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
