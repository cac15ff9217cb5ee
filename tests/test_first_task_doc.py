"""docs/first-task.md, "Your first task in 10 minutes", run verbatim in a fresh git repo."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

FIRST_TASK = Path(__file__).resolve().parents[1] / "docs" / "first-task.md"


def first_task_script() -> str:
    block = FIRST_TASK.read_text().split("<!-- first-task:begin -->", 1)[1]
    block = block.split("<!-- first-task:end -->", 1)[0]
    return block.split("```sh\n", 1)[1].rsplit("```", 1)[0]


def test_the_first_task_walkthrough_works_as_written(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("GITHUB_ACTIONS", None)
    done = subprocess.run(["bash", "-e", "-c", first_task_script()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 of 1 tasks valid" in done.stdout  # validate
    assert "1/1 tasks valid" in done.stdout  # verify
    assert "1 tasks, 5/5 valid runs passed" in done.stdout  # run
    assert "wrote baseline.json: 1 added" in done.stdout  # baseline update
    assert "PASS ci-eval: no regressions" in done.stdout  # compare
