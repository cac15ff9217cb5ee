"""The pure pieces of running Harbor tasks as Harbor does and of the hardened checks containers:
#! lines, Harbor's memory sizes, the keys the import names, the capabilities it gives back, and
the `docker run` argv (read-only root, tmpfs scratch, capabilities, a kept ENTRYPOINT)."""

from __future__ import annotations

import pytest

from ci_eval.importers.harbor_keys import capabilities, memory_mb, unsupported
from ci_eval.run.docker.containers import ContainerSpec, run_argv
from ci_eval.run.docker.harbor import script_argv
from ci_eval.run.docker.settings import DockerSettings


@pytest.mark.parametrize(("head", "argv"), [
    (b"#!/bin/bash\nset -o pipefail\n", ("/bin/bash", "/solution/solve.sh")),
    (b"#!/usr/bin/env bash\n", ("/usr/bin/env", "bash", "/solution/solve.sh")),
    (b"#! /usr/bin/awk -f -v x=1\n", ("/usr/bin/awk", "-f -v x=1", "/solution/solve.sh")),
    (b"echo no shebang\n", ("/bin/sh", "-c", script_argv(b"", "x")[2], "/solution/solve.sh")),
    (b"#!\n", ("/bin/sh", "-c", script_argv(b"", "x")[2], "/solution/solve.sh")),
])
def test_scripts_run_by_their_shebang_as_the_kernel_reads_it(head, argv):
    assert script_argv(head, "/solution/solve.sh") == argv


@pytest.mark.parametrize(("value", "megabytes"), [
    ("2G", 2048), ("512M", 512), ("1.5Gi", 1536), ("4GB", 4096), (1024, 1024), ("1T", 1048576),
    ("2X", None), ("", None), (True, None), ("0", None), ("-1G", None), ("2T", None),
])
def test_harbor_memory_sizes(value, megabytes):
    assert memory_mb(value) == megabytes


def test_every_dropped_key_is_named():
    data = {"version": "1.0", "environment": {"cpus": 1, "allow_internet": True, "gpus": 0,
                                              "mcp_servers": [], "skills_dir": "/skills",
                                              "env": {"A": "1"}, "colour": "red"},
            "verifier": {"timeout_sec": 5, "env": {"KEY": "x"}}, "artifacts": ["/app/x"],
            "metadata": {"anything": 1}}
    found = unsupported(data, {"environment/compose.yaml": b"services: {}\n",
                               "environment/Dockerfile": b"FROM x\nentrypoint [\"/e\"]\n",
                               "tests/test.sh": b"pip install pytest\n"})
    said = "\n".join(found)
    for key in ("[environment].allow_internet", "[environment].skills_dir", "[environment].env",
                "[environment].colour is not a key", "[verifier].env", "artifacts",
                "pip install"):
        assert key in said, (key, said)
    assert "compose" not in said  # sidecars are started (harbor_compose.py reads the file)
    assert "ENTRYPOINT" not in said  # kept, as Harbor keeps it
    assert "gpus" not in said and "mcp_servers" not in said  # 0 and [] ask for nothing
    assert "[environment].cpus" not in said and "anything" not in said


def test_capabilities_only_for_scripts_that_change_users():
    assert capabilities({"solution/solve.sh": b"useradd -m bob\n"}) == [
        "CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID"]
    assert capabilities({"tests/test.sh": b"pytest /tests\n", "x.py": b"chown\n"}) == []


def test_checks_containers_argv():
    settings = DockerSettings(memory_mb=256, capabilities=("CHOWN",))
    argv = run_argv(ContainerSpec("img", "c1", ("python3", "-I", "x.py"), "/w", settings=settings,
                                  read_only=True, scratch=("/tmp",)))
    line = " ".join(argv)
    assert "--cap-drop ALL --security-opt no-new-privileges" in line
    assert "--cap-add CHOWN" in line and "--read-only" in line
    assert "--tmpfs /tmp:rw,exec,nosuid,nodev,size=128m,mode=1777" in line
    assert argv[argv.index("--entrypoint"):] == ["--entrypoint", "python3", "img", "-I", "x.py"]
    kept = run_argv(ContainerSpec("img", "c2", ("/bin/sh", "/tests/test.sh"), "/w",
                                  keep_entrypoint=True))
    assert "--entrypoint" not in kept and kept[-3:] == ["img", "/bin/sh", "/tests/test.sh"]
    assert "--read-only" not in kept


def test_read_back_follows_no_link_at_any_component(tmp_path):
    from ci_eval.output import UntrustedFile, read_capped_beneath

    logs, host = tmp_path / "logs", tmp_path / "host"
    host.mkdir()
    (host / "reward.txt").write_text("1")
    (logs / "verifier").mkdir(parents=True)
    (logs / "verifier" / "reward.txt").write_text("0")
    assert read_capped_beneath(logs, "verifier/reward.txt", 16) == b"0"
    assert read_capped_beneath(logs, "verifier/reward.json", 16) is None
    assert read_capped_beneath(logs, "gone/reward.json", 16) is None
    (logs / "verifier" / "reward.txt").unlink()
    (logs / "verifier" / "reward.txt").symlink_to(host / "reward.txt")
    with pytest.raises(UntrustedFile, match="reward.txt: is a symlink"):
        read_capped_beneath(logs, "verifier/reward.txt", 16)
    (logs / "verifier" / "reward.txt").unlink()
    (logs / "verifier").rmdir()
    (logs / "verifier").symlink_to(host)
    with pytest.raises(UntrustedFile, match="verifier: is a symlink"):
        read_capped_beneath(logs, "verifier/reward.txt", 16)
    (logs / "verifier").unlink()
    (logs / "verifier").write_text("a file")
    with pytest.raises(UntrustedFile, match="verifier: is not a folder"):
        read_capped_beneath(logs, "verifier/reward.txt", 16)
    (logs / "verifier").unlink()
    (logs / "verifier").mkdir()
    (logs / "verifier" / "reward.txt").write_text("9" * 17)
    with pytest.raises(UntrustedFile, match="cap"):
        read_capped_beneath(logs, "verifier/reward.txt", 16)


def test_an_image_with_an_entrypoint_is_started_then_the_script_exec_d():
    from ci_eval.run.docker.containers import KEEP_ALIVE, started_argvs

    spec = ContainerSpec("img", "c3", ("/bin/bash", "/solution/solve.sh"), "/app",
                         keep_entrypoint=True, low_ports=True, env={"PATH": "/t/bin:/usr/bin"})
    start, run = started_argvs(spec)
    assert start[:2] == ["run", "--detach"] and start[-4:] == ["img", *KEEP_ALIVE]
    assert "--entrypoint" not in start and "--env" in start
    assert "--sysctl" in start and "net.ipv4.ip_unprivileged_port_start=0" in start
    assert run[:2] == ["exec", "c3"] and run[-2:] == ["/bin/bash", "/solution/solve.sh"]


def test_allow_internet_false_takes_the_agent_s_network_and_is_not_warned(tmp_path):
    import datetime as dt
    import json
    from types import SimpleNamespace

    from ci_eval.importers.harbor import convert
    from ci_eval.run.docker.backend import agent_network

    for allow, expected in ((False, "none"), (True, None)):
        folder = tmp_path / f"task-{allow}"
        for part in ("environment", "tests"):
            (folder / part).mkdir(parents=True)
        (folder / "instruction.md").write_text("Do it.\n")
        (folder / "environment" / "Dockerfile").write_text("FROM x\n")
        (folder / "tests" / "test.sh").write_text("#!/bin/sh\necho 1 > /logs/verifier/reward.txt\n")
        (folder / "task.toml").write_text(
            f"[environment]\nallow_internet = {str(allow).lower()}\n")
        [task] = convert(folder, today=dt.date(2026, 12, 3)).tasks
        metadata = json.loads(task.files["metadata.json"])
        assert metadata["docker"].get("agent_network") == expected, metadata
        assert any("allow_internet" in w for w in task.warnings) is allow, task.warnings
        assert agent_network(SimpleNamespace(metadata=metadata)) == expected
