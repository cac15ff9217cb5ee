"""What a judged container may reach, proven on a real engine: no network (a loopback listener
of the host that the same client reaches from the host gets nothing from inside), the task's
limits applied (the container's own cgroup files, no capability, no-new-privileges), and no
engine socket for the agent (an agent that searches for sockets and speaks the engine's API to
each gets nothing; the same script run outside the sandbox reaches the engine)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest
from docker_helpers import busybox_image, docker_engine  # noqa: F401 - fixtures

from ci_eval.run.docker.containers import ContainerSpec, Mount, run_argv
from ci_eval.run.docker.settings import DockerSettings
from ci_eval.run.sandbox.views import kept_under

LIMITS = {"cpus": 0.5, "memory_mb": 96, "pids": 64}


def harbor_task(root: Path, test_sh: str, *, docker: dict | None = None) -> Path:
    """A Harbor-verified docker task on the busybox image, its workspace from repo-state/."""
    task = root / "tasks" / "task-001-probe"
    for folder in ("environment", "tests", "solution", "repo-state"):
        (task / folder).mkdir(parents=True)
    (task / "prompt.md").write_text("Probe.\n")
    (task / "environment" / "Dockerfile").write_text("FROM ci-eval-tests/busybox:1\n")
    (task / "tests" / "test.sh").write_text(test_sh)
    (task / "solution" / "solve.sh").write_text("#!/bin/sh\ntouch solved\n")
    (task / "repo-state" / "README.md").write_text("probe\n")
    metadata = {"difficulty": 1, "area": "probe", "tags": ["probe"], "created": "2026-11-30",
                "runner": "docker", "docker": {"verifier": "harbor", **(docker or {})}}
    (task / "metadata.json").write_text(json.dumps(metadata))
    return task


def one_run(root: Path, cli, *args) -> dict:
    result = cli("run", "--root", root, "-k", "1", *args, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = (root / "results" / "task-001-probe.jsonl").read_text().splitlines()
    return json.loads(lines[-1])


class Listener:
    """A TCP listener on the host's loopback that counts the connections it accepted."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.accepted += 1
            conn.close()


CGROUP_PROBE = textwrap.dedent("""\
    read_first() { for f in "$@"; do [ -r "$f" ] && { tr '\\n' ' ' < "$f"; return; }; done; echo none; }
    echo "LIMITS pids=$(read_first /sys/fs/cgroup/pids.max /sys/fs/cgroup/pids/pids.max)" \\
      "mem=$(read_first /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes)" \\
      "cpu=$(read_first /sys/fs/cgroup/cpu.max /sys/fs/cgroup/cpu/cpu.cfs_quota_us)" \\
      "$(grep -E '^(CapEff|NoNewPrivs)' /proc/self/status | tr -s '\\t\\n' '= ')"
    """)


def test_checks_containers_have_no_network_and_the_tasks_limits(tmp_path, cli, busybox_image):  # noqa: F811
    listener = Listener()
    probe = f"echo ping | nc -w 3 127.0.0.1 {listener.port}"
    honest = subprocess.run(["busybox", "sh", "-c", probe], capture_output=True, timeout=30,
                            check=False)
    assert honest.returncode == 0 and listener.accepted == 1  # the client reaches it from here
    harbor_task(tmp_path, "#!/bin/sh\n" + CGROUP_PROBE + textwrap.dedent(f"""\
        if {probe}; then echo NETWORK-REACHED; echo 1 > /logs/verifier/reward.txt
        else echo NETWORK-UNREACHABLE; echo 0 > /logs/verifier/reward.txt; fi
        """), docker=LIMITS)
    record = one_run(tmp_path, cli, "--agent", "noop")
    assert record["status"] == "fail" and "NETWORK-UNREACHABLE" in record["reason"], record
    assert listener.accepted == 1
    line = record["reason"].split("LIMITS ", 1)[1]
    assert "pids=64 " in line, line
    assert f"mem={96 * 1024 * 1024} " in line, line
    assert "cpu=50000" in line, line  # 0.5 CPU of a 100000 us period (v1 quota or v2 cpu.max)
    assert "CapEff:=0000000000000000" in line and "NoNewPrivs:=1" in line, line


def test_a_check_past_its_timeout_is_a_fail_and_its_container_is_gone(tmp_path, cli,
                                                                       busybox_image, docker_engine):  # noqa: F811
    task = harbor_task(tmp_path, "#!/bin/sh\nsleep 60\n")
    metadata = json.loads((task / "metadata.json").read_text())
    metadata["timeout_seconds"] = {"checks": 2}
    (task / "metadata.json").write_text(json.dumps(metadata))
    record = one_run(tmp_path, cli, "--agent", "noop")
    assert record["status"] == "fail" and "checks timed out after 2s" in record["reason"], record
    left = docker_engine.docker("ps", "-a", "--filter", "label=ci-eval.task=task-001-probe",
                                "--format", "{{.Names}}")
    assert left.stdout.strip() == b""


def test_run_argv_carries_every_fence():
    spec = ContainerSpec("img", "name", ("sh", "-c", "true"), workdir="/app",
                         mounts=(Mount("/host/ws", "/app"), Mount("/host/tests", "/tests", True)),
                         settings=DockerSettings(cpus=2, memory_mb=512, pids=100))
    argv = run_argv(spec)
    joined = " ".join(argv)
    for fence in ("--network none", "--cap-drop ALL", "--security-opt no-new-privileges",
                  "--pids-limit 100", "--memory 512m", "--memory-swap 512m", "--cpus 2",
                  "type=bind,source=/host/tests,target=/tests,readonly"):
        assert fence in joined, fence
    assert "type=bind,source=/host/ws,target=/app " in joined + " "
    assert argv[-5:] == ["--entrypoint", "sh", "img", "-c", "true"] and "docker.sock" not in joined


SOCKET_SEARCH = textwrap.dedent("""\
    import glob, os, socket, sys
    known_only = sys.argv[1:2] == ["--known-only"]  # the host-side twin: other tests' sockets
    given = sys.argv[2:] if known_only else sys.argv[1:]  # live under /run too, leave them be
    found = set(given) | {"/run/docker.sock", "/var/run/docker.sock",
                          "/run/containerd/containerd.sock"}
    for top in () if known_only else ("/run", "/var/run", "/tmp", "/var/lib", "/root", "/home"):
        for folder, dirs, files in os.walk(top):
            if folder.count("/") - top.count("/") >= 2:
                dirs[:] = []  # three levels down: where engines put their sockets
            for name in files:
                path = os.path.join(folder, name)
                try:
                    if os.path.stat.S_ISSOCK(os.lstat(path).st_mode):
                        found.add(path)
                except OSError:
                    pass
    lines = []
    for path in sorted(found):
        try:
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(5)
            s.connect(path)
            s.sendall(b"GET /version HTTP/1.0\\r\\nHost: docker\\r\\n\\r\\n")
            reply = s.recv(4096)
            lines.append(("REACHED " if b"ApiVersion" in reply else "answered ") + path)
        except OSError as exc:
            lines.append(f"refused {path}: {exc.strerror or exc}")
    lines.append(f"searched {len(found)} socket paths")
    open("found.txt", "w").write("\\n".join(lines) + "\\n")
    """)


def test_the_agent_reaches_no_engine_socket(tmp_path, cli, busybox_image, docker_engine):  # noqa: F811
    if os.environ.get("CI_EVAL_NO_ISOLATION") == "1":
        pytest.skip("isolation disabled by CI_EVAL_NO_ISOLATION=1")
    sockets = docker_engine.sockets
    assert sockets, "the engine's unix socket is known"
    script = tmp_path / "search.py"
    script.write_text(SOCKET_SEARCH)
    twin = tmp_path / "twin"
    twin.mkdir()
    # the twin outside the sandbox talks to the engine's sockets only: a search of the host's /run
    # would connect to what other tests listen on there (test_checks_sandbox records every
    # connect to its /run socket as an escape)
    subprocess.run([sys.executable, str(script), "--known-only", *sockets], cwd=twin, check=True,
                   timeout=120)
    assert any(line.startswith("REACHED ") for line in (twin / "found.txt").read_text().splitlines())
    root = tmp_path / "root"  # the repo root is hidden from the agent: the script is beside it
    harbor_task(root, "#!/bin/sh\necho 0 > /logs/verifier/reward.txt\n")
    record = one_run(root, cli, "--agent-cmd",
                     f"{sys.executable} {script} {' '.join(sockets)}")
    added = [line[1:] for line in record["diff"].splitlines() if line.startswith("+") and not
             line.startswith("+++")]
    assert any(line.startswith("searched ") for line in added), record
    assert not [line for line in added if line.startswith("REACHED ")], added
    for path in sockets:
        assert any(path in line for line in added), (path, added)


@pytest.mark.skipif(os.geteuid() != 0, reason="writes a probe file into /run (needs root)")
def test_hiding_run_keeps_the_resolver_file_it_links_to(tmp_path):
    """Ubuntu's /etc/resolv.conf is a link into /run: covering /run must not take the agent's
    DNS. The file the link names is bound back into the covered /run, and nothing else is."""
    target = Path(f"/run/ci-eval-resolv-probe-{os.getpid()}.conf")
    target.write_text("nameserver 127.0.0.53\n")
    try:
        link = tmp_path / "resolv.conf"
        link.symlink_to(target)
        kept = kept_under(("/run",), files=(str(link), str(tmp_path / "plain")))
        assert kept == (str(target),)
        sandbox = Path(__file__).resolve().parents[1] / "ci_eval" / "run" / "sandbox" / "sandbox_program.py"
        seen = subprocess.run(
            ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc",
             "--propagation", "private", sys.executable, "-I", "-S", str(sandbox),
             "--hide", "/run", "--keep", kept[0], "--", "sh", "-c", f"cat {link}; ls /run"],
            capture_output=True, text=True, timeout=60, check=False)
    finally:
        target.unlink()
    assert seen.returncode == 0, seen.stderr
    assert seen.stdout.split() == ["nameserver", "127.0.0.53", target.name]
