"""`ci-eval init` from a normal (non-editable) pip install of the package, as a user gets it.

pip compiles the template .py files into __pycache__/ beside them; init must leave those out.
The install is built from a copy of the package's files (so the checkout gets no build/ or
egg-info) with this interpreter's setuptools and wheel, offline, into a --target folder that is
first on PYTHONPATH (about 7 s, once per session).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from act_helpers import REPO_ROOT, commit_repo


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    work = tmp_path_factory.mktemp("installed")
    source = work / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO_ROOT / name, source / name)
    shutil.copytree(REPO_ROOT / "ci_eval", source / "ci_eval",
                    ignore=shutil.ignore_patterns("__pycache__"))
    target = work / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                           "--no-build-isolation", "--no-index", "--disable-pip-version-check",
                           "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return target


def run_installed(target, *args, cwd):
    env = {**os.environ, "PYTHONPATH": str(target)}
    return subprocess.run([sys.executable, "-m", "ci_eval", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def written(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


@pytest.mark.parametrize("agent", ["reference", "claude-code"])
def test_init_after_a_non_editable_install_writes_what_the_source_tree_writes(
        installed, tmp_path, cli, agent):
    where = subprocess.run([sys.executable, "-c", "import ci_eval; print(ci_eval.__file__)"],
                           env={**os.environ, "PYTHONPATH": str(installed)}, cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(installed)), where  # the installed copy, not this checkout
    compiled = list((installed / "ci_eval" / "templates").rglob("__pycache__"))
    assert compiled, "the install compiled no template (the case under test is gone)"

    from_install, from_source = tmp_path / "a", tmp_path / "b"
    for root in (from_install, from_source):
        root.mkdir()
        commit_repo(root)
    done = run_installed(installed, "init", "--agent", agent, cwd=from_install)
    assert done.returncode == 0, done.stderr
    assert "wrote tasks/task-001-slugify-punctuation/checks.py" in done.stdout
    assert cli("init", "--agent", agent, cwd=from_source).returncode == 0
    files = written(from_install)
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in files), files
    assert files == written(from_source)
    validated = run_installed(installed, "validate", cwd=from_install)
    assert validated.returncode == 0, validated.stdout + validated.stderr
