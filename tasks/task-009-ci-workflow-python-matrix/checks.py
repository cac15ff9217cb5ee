"""ci.yml: runs on PRs and pushes to main; tests on 3.10-3.13 (as strings); lint failures fail CI.

The lint job's ruff steps are executed the way GitHub runs `run:` steps (bash -eo pipefail) with a
stand-in `ruff` that reports violations (exit 1), so a swallowed failure shows as exit 0. pip, uv,
pipx and python are stubbed to do nothing, so no install runs and nothing reaches the network.
"""

import os
import re
import stat
import subprocess
import tempfile
from pathlib import Path

import yaml

from ci_eval.checks import failed, main, passed

WORKFLOW = Path(".github/workflows/ci.yml")
WANTED_PYTHONS = {"3.10", "3.11", "3.12", "3.13"}


def load():
    return yaml.safe_load(WORKFLOW.read_text())


def triggers(workflow: dict):
    on = workflow.get("on", workflow.get(True))  # PyYAML reads a bare `on` key as True
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {name: None for name in on}
    return on if isinstance(on, dict) else {}


def check_triggers():
    on = triggers(load())
    if "pull_request" not in on:
        return failed("the workflow does not run on pull requests")
    if "push" not in on:
        return failed("the workflow no longer runs on pushes")
    branches = (on.get("push") or {}).get("branches")
    if branches is not None and "main" not in branches:
        return failed(f"pushes to main do not trigger the workflow (push branches: {branches})")
    pr_branches = (on.get("pull_request") or {}).get("branches")
    if pr_branches is not None and "main" not in pr_branches:
        return failed(f"pull requests to main do not trigger the workflow (branches: {pr_branches})")
    return passed("runs on pull requests and on pushes to main")


def as_version(value) -> str:
    return value if isinstance(value, str) else str(value)  # 3.10 read as a float -> "3.1"


def check_python_matrix():
    jobs = load().get("jobs", {})
    for name, job in jobs.items():
        steps = job.get("steps", [])
        if not any("pytest" in str(step.get("run", "")) for step in steps):
            continue
        setup = [s for s in steps if str(s.get("uses", "")).startswith("actions/setup-python")]
        if not setup:
            return failed(f"job {name!r} runs pytest without actions/setup-python")
        expr = str((setup[0].get("with") or {}).get("python-version", ""))
        ref = re.fullmatch(r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}", expr.strip())
        if not ref:
            return failed(f"job {name!r}: python-version {expr!r} does not come from the matrix")
        matrix = (job.get("strategy") or {}).get("matrix") or {}
        values = list(matrix.get(ref.group(1)) or [])
        values += [inc[ref.group(1)] for inc in matrix.get("include", []) if ref.group(1) in inc]
        versions = {as_version(v) for v in values}
        if versions != WANTED_PYTHONS:
            return failed(f"job {name!r} tests on Python {sorted(versions)}, expected "
                          f"{sorted(WANTED_PYTHONS)} (unquoted 3.10 is read as 3.1)")
        if job.get("continue-on-error") is True:
            return failed(f"job {name!r} has continue-on-error: true")
        return passed(f"job {name!r} tests on {sorted(versions)}")
    return failed("no job runs pytest")


def lint_steps(workflow: dict):
    for name, job in workflow.get("jobs", {}).items():
        for step in job.get("steps", []):
            run, uses = str(step.get("run", "")), str(step.get("uses", ""))
            if re.search(r"\bruff\b(\s+\S+)*\s+check\b|\bruff\s+check\b", run) or "ruff-action" in uses:
                yield name, job, step


def check_lint_fails_on_violations():
    workflow = load()
    steps = list(lint_steps(workflow))
    if not steps:
        return failed("no step runs `ruff check`")
    with tempfile.TemporaryDirectory() as tmp:
        stubs = {
            # ruff reports a violation; installers and python do nothing (no network, no changes)
            "ruff": 'echo "src/x.py:1:1: F401 unused import" >&2\nexit 1',
            "pip": "exit 0", "pip3": "exit 0", "uv": "exit 0", "pipx": "exit 0",
            "python": 'case "$*" in *"-m ruff"*) exec ruff ;; esac\nexit 0',
            "python3": 'case "$*" in *"-m ruff"*) exec ruff ;; esac\nexit 0',
        }
        for name, body in stubs.items():
            stub = Path(tmp) / name
            stub.write_text(f"#!/bin/sh\n{body}\n")
            stub.chmod(stub.stat().st_mode | stat.S_IEXEC)
        env = dict(os.environ, PATH=f"{tmp}{os.pathsep}{os.environ.get('PATH', '')}")
        for job_name, job, step in steps:
            if job.get("continue-on-error") is True or step.get("continue-on-error") is True:
                return failed(f"job {job_name!r}: the ruff step is allowed to fail "
                              "(continue-on-error: true)")
            if "run" not in step:
                continue  # a ruff action fails its step on violations
            if str(step.get("shell", "bash")).split()[0] not in ("bash", "sh"):
                return failed(f"job {job_name!r}: ruff step uses an unexpected shell")
            script = Path(tmp) / "step.sh"
            script.write_text(str(step["run"]))
            proc = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                env=env, capture_output=True, text=True, timeout=30, check=False,
            )
            if proc.returncode == 0:
                return failed(f"job {job_name!r}: the step `{step['run'].strip()}` succeeds even "
                              "when ruff reports violations")
    return passed("ruff violations fail the lint job")


main(check_triggers, check_python_matrix, check_lint_fails_on_violations)
