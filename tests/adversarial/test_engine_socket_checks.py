"""Agent code that the checks run (a test imports it) looks for the engine socket DOCKER_HOST
names. Outside /run, /tmp and HOME the checks' sandbox once showed it: the agent's sandbox hid
it (views.socket_folders), the checks' did not, and whoever reaches an engine's socket is root
on the host. A listener that answers like an engine stands in for it, in a folder of /var/lib;
the same probe run by the harness reaches it."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
from pathlib import Path

import pytest
from harness_helpers import cli, read_lines, write_task

from .conftest import needs_sandbox

# agent code, as the checks' pytest session runs it (a test of the workspace)
PROBE = """\
import socket


def test_the_engine_is_out_of_reach():
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(5)
        s.connect(@PATH@)
        s.sendall(b"GET /version HTTP/1.0\\r\\n\\r\\n")
        reply = s.recv(100)
    except OSError:
        return
    assert b"ApiVersion" not in reply, "REACHED the engine"
"""
CHECKS = '''from ci_eval.checks import main, run_tests

main(run_tests(pass_to_pass=["tests/test_probe.py::test_the_engine_is_out_of_reach"]))
'''


@pytest.fixture
def engine_like():
    """A unix listener in a folder of /var/lib answering as an engine does."""
    base = Path(tempfile.mkdtemp(prefix="ci-eval-engine-probe-", dir="/var/lib"))
    path = base / "docker.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:  # the request first, then the answer (closing early breaks its pipe)
                conn.settimeout(5)
                try:
                    request = b""
                    while b"\r\n\r\n" not in request and (chunk := conn.recv(1024)):
                        request += chunk
                    conn.sendall(b'HTTP/1.0 200 OK\r\n\r\n{"ApiVersion": "1.47"}')
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield path
    stop.set()
    thread.join(timeout=5)
    listener.close()
    shutil.rmtree(base, ignore_errors=True)


@needs_sandbox
@pytest.mark.skipif(not os.access("/var/lib", os.W_OK), reason="needs a folder in /var/lib")
def test_the_checks_do_not_reach_the_engine_socket_docker_host_names(tmp_path, engine_like):
    """noop leaves repo-state as it is: its test is the agent's code the checks run."""
    twin = socket.socket(socket.AF_UNIX)  # the harness's side reaches it
    twin.connect(str(engine_like))
    twin.sendall(b"GET /version HTTP/1.0\r\n\r\n")
    assert b"ApiVersion" in twin.recv(100)
    twin.close()
    root = tmp_path / "repo"
    write_task(root, checks=CHECKS, files={
        "tests/test_probe.py": PROBE.replace("@PATH@", repr(str(engine_like)))})
    env = {**os.environ, "DOCKER_HOST": f"unix://{engine_like}"}
    done = cli("run", "-k", "1", "--agent", "noop", cwd=root, env=env)
    assert (root / "results" / "task-001-greet.jsonl").exists(), done.stdout + done.stderr
    records = read_lines(root / "results" / "task-001-greet.jsonl")
    assert records, done.stderr
    # the probe passes only when it ran and did not reach the engine
    assert records[-1]["status"] == "pass", records[-1]["reason"]
