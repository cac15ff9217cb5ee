"""Native tasks on the docker runner: checks.py runs in a fresh container of the task's image
(python3 and pytest from the image, ci-eval's helpers mounted read-only) under the verdict
rules of the local sandbox. A task-yaml import keeps its Dockerfile and `--runner docker`
builds it; code under test that writes "pass" everywhere it can reach does not forge the verdict.
The images: tests/docker_helpers.py (the python one is built once with mmdebstrap and cached)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from docker_helpers import PYTHON, docker_engine, python_image  # noqa: F401 - fixtures
from harness_helpers import write_task

SLUG = Path(__file__).parent / "fixtures" / "task-yaml-sample" / "slugify-001-digits-and-hyphens"


def test_task_yaml_import_verifies_in_its_image(tmp_path, cli, python_image):  # noqa: F811
    source = tmp_path / "source"
    shutil.copytree(SLUG, source)
    # the sample's FROM python:3.12-slim needs a registry; the same Dockerfile on a local base
    (source / "Dockerfile").write_text(f"FROM {PYTHON}\nWORKDIR /workspace\n")
    root = tmp_path / "root"
    (root / "tasks").mkdir(parents=True)
    imported = cli("import", "task-yaml", source, "--into", root)
    assert imported.returncode == 0, imported.stderr
    result = cli("verify", "--root", root, "--runner", "docker", timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL    PASS    tests/test_slug.py::test_digits_are_kept" in result.stdout, result.stdout
    assert "PASS    PASS    tests/test_slug.py::test_basic" in result.stdout


CHECKS = ('import os, subprocess, sys\nfrom ci_eval.checks import file_equals, main\n'
          'if os.path.exists("evil.py"):  # the agent\'s code, run by the checks (as tests are)\n'
          '    subprocess.run([sys.executable, "evil.py"], check=False)\n'
          'main(file_equals("greet.txt", "hello\\n"))\n')
# It writes "pass" to every descriptor it has and to every one of its parent's and PID 1's it
# can open through /proc, then tries to kill its parent (which would end the checks unsaid).
FORGER = ("cat > evil.py <<'EOF'\nimport os, signal\nparent = os.getppid()\n"
          "for fd in range(64):\n    for target in (fd, f'/proc/{parent}/fd/{fd}', f'/proc/1/fd/{fd}'):\n"
          "        try:\n            out = target if isinstance(target, int) else os.open(target, os.O_WRONLY)\n"
          "            os.write(out, b'pass')\n        except OSError:\n            pass\n"
          "os.kill(parent, signal.SIGKILL)\nEOF\n")


def test_code_under_test_cannot_forge_the_verdict(tmp_path, cli, python_image):  # noqa: F811
    task = write_task(tmp_path, checks=CHECKS, metadata={"runner": "docker", "docker": {}},
                      extra={"environment/Dockerfile": f"FROM {PYTHON}\n"})
    assert task.is_dir()
    honest = cli("run", "--root", tmp_path, "-k", "1", "--agent-cmd", "echo hello > greet.txt",
                 timeout=300)
    assert honest.returncode == 0, honest.stderr
    record = json.loads((tmp_path / "results" / "task-001-greet.jsonl").read_text())
    assert record["status"] == "pass", record["reason"]
    forged = cli("run", "--root", tmp_path, "-k", "1", "--fresh", "--agent-cmd", FORGER,
                 timeout=300)
    assert forged.returncode == 0, forged.stderr
    record = json.loads((tmp_path / "results" / "task-001-greet.jsonl").read_text())
    # the forged word went to the checks' output (its stdout is stderr), the verdict stayed the
    # checks' own (PID 1 of the container ignores the kill from inside: no verdict lost either)
    assert record["status"] == "fail", record
    assert "pass" in record["reason"] and "expected 'hello', found 'bye'" in record["reason"]
