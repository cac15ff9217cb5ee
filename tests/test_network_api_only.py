"""`network: api-only` (issue #25, item 3): on a task pinned to an upstream commit, an agent that
tries to fetch the upstream (a loopback git server over HTTP) gets nothing, while its model API
(a loopback fake) answers through the proxy; its twin with `network: host` clones the future."""

from __future__ import annotations

import functools
import http.server
import json
import subprocess
import sys
import threading

import pytest
from harness_helpers import read_lines

from ci_eval.run.sandbox import isolation
from tests.test_upstream_tasks import upstream

SANDBOXED = isolation.detect().agent_sandboxed

AGENT = r"""
import os, socket, subprocess, sys, urllib.request
api, git_url, git_port = sys.argv[1], sys.argv[2], int(sys.argv[3])
def attempt(name, action):
    try:
        said = action()
    except Exception as exc:
        said = f"failed: {type(exc).__name__}"
    open(name, "w").write(said)
attempt("api.txt", lambda: urllib.request.urlopen(api, timeout=10).read().decode())
done = subprocess.run(["git", "clone", "-q", git_url, "future"], capture_output=True, timeout=30)
open("clone.txt", "w").write("cloned" if done.returncode == 0 else "failed")
def direct():
    socket.create_connection(("127.0.0.1", git_port), timeout=5).close()
    return "connected"
attempt("direct.txt", direct)
"""
CHECKS = ("from pathlib import Path\n"
          "said = {n: Path(n).read_text() for n in ('api.txt', 'clone.txt', 'direct.txt')}\n"
          "print(said)\n"
          "raise SystemExit(0 if said == {'api.txt': 'hi from the model', 'clone.txt': 'failed',"
          " 'direct.txt': 'failed: ConnectionRefusedError'} else 1)\n")


class Model(http.server.BaseHTTPRequestHandler):
    """The model API on loopback: every GET answers 'hi from the model'."""

    def do_GET(self):
        body = b"hi from the model"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.skipif(not SANDBOXED, reason="no agent sandbox on this machine (namespaces)")
def test_an_api_only_agent_reaches_its_api_and_not_the_upstream(cli, repo_root, make_task,
                                                                 tmp_path):
    url, base, _ = upstream(tmp_path)
    bare = url.removeprefix("file://")
    subprocess.run(["git", "update-server-info"], cwd=bare, check=True)
    model = _serve(Model)
    git = _serve(functools.partial(_Quiet, directory=str(tmp_path)))
    try:
        model_port, git_port = model.server_address[1], git.server_address[1]
        git_url = f"http://127.0.0.1:{git_port}/upstream.git"
        # the upstream answers on the host: without the sandbox's namespace a clone works
        assert subprocess.run(["git", "clone", "-q", git_url, str(tmp_path / "host-clone")],
                              check=False).returncode == 0
        make_task(repo_root, "task-001-pinned", prompt="Fix add().\n", checks=CHECKS,
                  metadata={"repo": {"url": url, "commit": base}}, repo_state=None)
        (tmp_path / "agent.py").write_text(AGENT)
        command = [sys.executable, str(tmp_path / "agent.py"),
                   f"http://127.0.0.1:{model_port}/v1/models", git_url, str(git_port)]
        (repo_root / "ci-eval.yaml").write_text(json.dumps({"agents": {
            "pinned-default": {"command": command, "allow_hosts": [f"127.0.0.1:{model_port}"]},
            "host-twin": {"command": command, "network": "host"}}}))
        env = {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}
        statuses = {}
        for agent in ("pinned-default", "host-twin"):
            out = tmp_path / f"out-{agent}"
            ran = cli("run", "-k", "1", "--agent", agent, "--out", out, cwd=repo_root, env=env,
                      timeout=180)
            assert ran.returncode in (0, 1), ran.stdout + ran.stderr
            [record] = read_lines(out / "task-001-pinned.jsonl")
            statuses[agent] = (record["status"], record.get("reason", ""))
        assert statuses["pinned-default"][0] == "pass", statuses
        # the twin reached both servers: its clone and its direct connection worked
        assert statuses["host-twin"][0] == "fail", statuses
        assert "'clone.txt': 'cloned'" in statuses["host-twin"][1]
    finally:
        model.shutdown()
        git.shutdown()


@pytest.mark.parametrize("entry, field, said", [
    ({"command": "true", "network": "none"}, "agents.a.network", "expected one of host, api-only"),
    ({"command": "true", "allow_hosts": ["pypi.org/simple"]}, "agents.a.allow_hosts[0]",
     "expected a host name (host, or host:port for one port), got \"pypi.org/simple\""),
    ({"command": "true", "network": "api-only", "placement": "container"}, "agents.a.network",
     "api-only is for an agent in the local sandbox"),
])
def test_a_bad_network_entry_is_exit_2_naming_the_field(cli, repo_root, make_task,
                                                        assert_bad_input, entry, field, said):
    make_task(repo_root)
    (repo_root / "ci-eval.yaml").write_text(json.dumps({"agents": {"a": entry}}))
    ran = cli("run", "--agent", "a", "-k", "1", cwd=repo_root)
    assert_bad_input(ran, "ci-eval.yaml", field, said)


# Issue #31, item 5: through the filesystem. The upstream cache outside HOME (as the action's
# runner.temp in a container job) and a file:// upstream both held the fixed commit; an agent,
# api-only or not, read it there and passed. Both are hidden from every agent now.
LOOKER = r"""
import os, subprocess, sys
seen = []
for place in sys.argv[1:]:
    try:
        listed = sorted(os.listdir(place))  # a hidden folder is an empty one
    except OSError:
        listed = []
    if listed:
        seen.append(f"{place}: {listed[:3]}")
done = subprocess.run(["git", "clone", "-q", sys.argv[1], "future"], capture_output=True)
if done.returncode == 0:
    seen.append("cloned")
open("seen.txt", "w").write("\n".join(seen) or "nothing")
"""
LOOK_CHECKS = ("from pathlib import Path\n"
               "said = Path('seen.txt').read_text()\n"
               "print(said)\n"
               "raise SystemExit(0 if said == 'nothing' else 1)\n")


@pytest.mark.skipif(not SANDBOXED, reason="no agent sandbox on this machine (namespaces)")
@pytest.mark.parametrize("network", ["api-only", "host"])
def test_no_agent_reads_the_upstream_or_its_cache_from_the_disk(cli, repo_root, make_task,
                                                                 tmp_path, network):
    url, base, _ = upstream(tmp_path)
    bare = url.removeprefix("file://")
    cache = tmp_path / "runner-temp" / "upstream-cache"
    make_task(repo_root, "task-001-pinned", prompt="Fix add().\n", checks=LOOK_CHECKS,
              metadata={"repo": {"url": url, "commit": base}}, repo_state=None)
    (tmp_path / "looker.py").write_text(LOOKER)
    command = [sys.executable, str(tmp_path / "looker.py"), bare, str(cache)]
    (repo_root / "ci-eval.yaml").write_text(json.dumps({"agents": {
        "looker": {"command": command, "network": network}}}))
    ran = cli("run", "-k", "1", "--agent", "looker", cwd=repo_root,
              env={"CI_EVAL_UPSTREAM_CACHE": str(cache)}, timeout=180)
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr
    assert cache.is_dir() and any(cache.rglob("HEAD"))  # the cache was there, full
    [record] = read_lines(repo_root / "results" / "task-001-pinned.jsonl")
    assert record["status"] == "pass", record.get("reason")


def test_validate_warns_on_a_file_upstream(cli, repo_root, make_task, tmp_path):
    url, base, _ = upstream(tmp_path)
    make_task(repo_root, "task-001-pinned", metadata={"repo": {"url": url, "commit": base}},
              repo_state=None)
    ran = cli("validate", cwd=repo_root)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ("warning: " in ran.stderr and "$.repo.url: repo.url is a file:// path"
            in ran.stderr), ran.stderr
    shown = json.loads(cli("validate", "--json", cwd=repo_root).stdout)
    assert shown["valid"] and "file://" in shown["warnings"][0]
