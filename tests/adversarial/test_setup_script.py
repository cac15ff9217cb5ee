"""Issue #31, item 8: a task's setup.sh is task-author code (an imported task's, an upstream
repo's) and once ran with the harness's environment: its secrets reached the workspace the
agent reads, and a daemon it started outlived the run. Now it runs with PATH, locale and a HOME
of its own only, in its own session, and nothing it started survives the workspace build
(ci_eval/run/workspace/build.py, run_script). The arena's canaries check both after the run:
no secret in any file under the arena (kept workspace included), no process of the run left.

Not yet: a network namespace and a read-only view for setup.sh (docs/isolation.md says so)."""

from __future__ import annotations

import site
import socket
from pathlib import Path

from .conftest import needs_sandbox

SETUP = """#!/bin/bash
env > leaked-env.txt
cat /proc/$PPID/environ 2>/dev/null | tr '\\0' '\\n' > leaked-parent.txt
echo "$HOME" > home.txt
setsid bash -c 'exec -a sleeper-MARKER sleep 120' < /dev/null > /dev/null 2>&1 &
( setsid nohup sleep 120.MARKER < /dev/null > /dev/null 2>&1 & )
echo pwned >> CANARY 2>/dev/null
echo pwned > /tmp/PWNED-MARKER 2>/dev/null
echo pwned > PWNED_SITE 2>/dev/null
(exec 3<>/dev/tcp/127.0.0.1/PORT && echo connected > net.txt) 2>/dev/null || echo refused > net.txt
echo bye > greet.txt
"""


@needs_sandbox
def test_setup_sh_gets_no_secret_and_leaves_nothing_running(arena):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    site_file = Path(site.getsitepackages()[0]) / f"PWNED-{arena.marker}.pth"
    script = (SETUP.replace("MARKER", arena.marker).replace("PORT", str(listener.getsockname()[1]))
              .replace("CANARY", str(arena.base / "canary.txt"))
              .replace("PWNED_SITE", str(site_file)))
    arena.task(files={"setup.sh": script, "greet.txt": "bye\n"})
    result = arena.run("run", "-k", "1", "--keep", "--agent-cmd", "echo hello > greet.txt",
                       keep=True)
    assert result.returncode == 0, result.detail()
    record = result.record()
    assert record["status"] == "pass", record
    # the canaries (run by arena.run) found no secret in the kept workspace's leaked-*.txt and
    # no survivor; the workspace did get what setup.sh wrote
    kept = list(arena.tmp.glob("ci-eval-run-*/*/workspace/leaked-env.txt"))
    assert kept, "setup.sh did not run"
    env = kept[0].read_text()
    assert "PATH=" in env and "GITHUB_TOKEN" not in env and "ANTHROPIC_API_KEY" not in env
    home = (kept[0].parent / "home.txt").read_text().strip()
    assert home and not home.startswith(str(arena.base / "repo"))
    # no network, and no write outside its workspace (the canaries checked the rest)
    assert (kept[0].parent / "net.txt").read_text().strip() == "refused"
    try:
        listener.accept()
        raise AssertionError("setup.sh reached a loopback port of the host")
    except TimeoutError:
        pass
    finally:
        listener.close()
    assert not site_file.exists()
