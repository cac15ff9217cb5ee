"""With CI_EVAL_NO_SKIPS=1 (set by .ci/run) a skipped test fails the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def test_a_skip_fails_the_suite_when_skips_are_not_allowed(tmp_path):
    for helper in ("conftest.py", "harness_helpers.py", "suite_order.py"):  # what conftest loads
        shutil.copy(Path(__file__).with_name(helper), tmp_path / helper)
    (tmp_path / "test_skipping.py").write_text(
        "import pytest\n\n@pytest.mark.skipif(True, reason='no namespaces here')\n"
        "def test_sandbox():\n    pass\n")
    run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)]
    env = {k: v for k, v in os.environ.items() if k != "CI_EVAL_NO_SKIPS"}
    allowed = subprocess.run(run, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert allowed.returncode == 0 and "1 skipped" in allowed.stdout, allowed.stdout
    strict = subprocess.run(run, cwd=tmp_path, env={**env, "CI_EVAL_NO_SKIPS": "1"},
                            capture_output=True, text=True)
    assert strict.returncode == 1, strict.stdout
    assert "skipped with CI_EVAL_NO_SKIPS=1" in strict.stdout and "no namespaces here" in strict.stdout
