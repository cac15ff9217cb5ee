"""A throwaway virtualenv with ci-eval installed NON-editable, as a user's CI installs it.

An editable install puts a `.pth` finder into site-packages that every Python start imports
(16-30 ms here), on both sides of a benchmark; a user's `pip install ci-eval` has none. The
benchmarks re-run themselves inside such a venv (`--inner`), so the harness they measure, and
the interpreter that both sides start, are the ones a user gets.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def make_venv(path: Path | None, *, extra: tuple[str, ...] = ()) -> tuple[Path, bool]:
    """(the venv's python, whether it is throwaway). With `path`: reused when it exists
    (ci-eval reinstalled from the working tree), made there otherwise."""
    throwaway = path is None
    path = Path(path) if path else Path(tempfile.mkdtemp(prefix="ci-eval-bench-venv-"))
    python = path / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(path)], check=True)
    print(f"installing ci-eval (non-editable) into {path} ...", file=sys.stderr)
    build = Path(tempfile.mkdtemp(prefix="ci-eval-bench-src-"))
    try:
        # a copy of the tree, so that no build/ or egg-info lands in the working tree
        src = build / "src"
        skipped = shutil.ignore_patterns(".venv", "venv", ".git", "__pycache__", "*.egg-info",
                                         "build", "dist")
        shutil.copytree(REPO, src, ignore=lambda folder, names: [
            *skipped(folder, names), *(["results"] if Path(folder) == REPO else [])])
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "--force-reinstall", "--no-deps", str(src)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        str(src), *extra], check=True)
    finally:
        shutil.rmtree(build, ignore_errors=True)
    check = subprocess.run([str(python), "-I", "-c", "import ci_eval, sys; print(ci_eval.__file__)"],
                           capture_output=True, text=True, check=True, cwd="/")
    location = Path(check.stdout.strip())
    if not location.is_relative_to(path):
        raise SystemExit(f"ci_eval imports from {location}, not from the venv {path}")
    return python, throwaway


def reexec_inside(python: Path, script: Path, args: list[str]) -> int:
    """Run `script --inner ARGS` with the venv's python, from a neutral folder (the repo's own
    ci_eval must not be importable from the cwd)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{python.parent}{os.pathsep}{env.get('PATH', os.defpath)}"
    return subprocess.run([str(python), str(script), "--inner", *args], env=env,
                          cwd="/", check=False).returncode


def run_inside(script: str, venv: Path | None, args: list[str], *,
               extra: tuple[str, ...] = ()) -> int:
    """`script --inner ARGS` in a venv made (or reused at `venv`) with ci-eval and `extra`;
    a throwaway venv is removed afterwards."""
    python, throwaway = make_venv(venv, extra=extra)
    try:
        return reexec_inside(python, Path(script).resolve(), args)
    finally:
        if throwaway:
            shutil.rmtree(python.parents[1], ignore_errors=True)


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]
