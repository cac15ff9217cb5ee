"""Two real SWE-bench records of pallets/flask (issue 36, items 7-11; tests/fixtures/swe-bench-flask):
`pallets__flask-4992` (Lite) and `pallets__flask-5014` (Verified, whose tests need the `app` and
`client` fixtures of flask's tests/conftest.py), both of flask's src layout, imported as published
from a local mirror (`--mirror pallets/flask=PATH`, the bundle of the two base commits), then
`validate` and `verify` on the local runner (an interpreter with the version's pins, from the wheel
cache of tests/swe_bench_env.py) and on the docker runner (the environment/Dockerfile the import
writes from SWE-bench's specification of flask 2.3 (issue 36 item 10): requirements/dev.txt at
the environment_setup_commit, then pip_packages, pip --no-index from `--wheels`, on a locally built
stand-in for python:3.11-slim): the record's patch passes every FAIL_TO_PASS and PASS_TO_PASS id,
the untouched repository fails the FAIL_TO_PASS ids, as SWE-bench's harness decides them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import swe_bench_env
from conftest import _cli_env
from docker_helpers import docker_engine, python_311_slim_stand_in  # noqa: F401 - fixtures

FIXTURES = Path(__file__).parent / "fixtures" / "swe-bench-flask"
BASES = ("4c288bc97ea371817199908d0d9b12de9dae327e", "7ee9ceb71e868944a46e1ff00b506772a53a4f1d")
# the environment_setup_commit of version 2.3: its requirements/dev.txt is what SWE-bench installs
ENV_SETUP = "182ce3dd15dfa3537391c3efaf9c3ff407d134d4"
RECORDS = [json.loads(line) for line in (FIXTURES / "instances.jsonl").read_text().splitlines()]


def wheels() -> Path:
    folder = swe_bench_env.prepared()
    if folder is None:
        pytest.skip("the SWE-bench flask wheels are not prepared: run "
                    "`python3 tests/swe_bench_env.py prepare` (.ci/run does)")
    return folder


def flask_mirror(tmp_path: Path) -> Path:
    """A bare repository holding the two base commits and version 2.3's environment_setup_commit,
    from the bundle (depth 1: its `shallow` file names them, so the missing parents are not
    looked for)."""
    bare = tmp_path / "mirrors" / "flask.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    (bare / "shallow").write_text("".join(f"{commit}\n" for commit in (*BASES, ENV_SETUP)))
    listed = subprocess.run(["git", "bundle", "unbundle", str(FIXTURES / "flask.bundle")],
                            cwd=bare, check=True, capture_output=True, text=True).stdout
    for line in listed.splitlines():
        commit, ref = line.split()
        subprocess.run(["git", "update-ref", ref, commit], cwd=bare, check=True)
    return bare


def imported(cli, repo_root: Path, tmp_path: Path, env: dict, *options: object) -> list[dict]:
    """The two records imported as published: no to-do (SWE-bench's specification of flask 2.3
    gives environment/Dockerfile)."""
    source = tmp_path / "instances.jsonl"
    shutil.copyfile(FIXTURES / "instances.jsonl", source)
    result = cli("import", "swe-bench", source, "--mirror", f"pallets/flask={flask_mirror(tmp_path)}",
                 *options, "--json", cwd=repo_root, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    items = json.loads(result.stdout)["imported"]
    assert [item["source_id"] for item in items] == ["pallets__flask-4992", "pallets__flask-5014"]
    for item in items:
        assert any("src layout" in warning for warning in item["warnings"]), item
        assert item["todo"] == [], item
        assert any("specification of pallets/flask 2.3" in warning and "requirements/dev.txt at "
                   "182ce3dd15df" in warning for warning in item["warnings"]), item
        task = repo_root / "tasks" / item["task"]
        environment = task / "environment"
        assert (environment / "requirements.txt").read_text().splitlines() == list(
            swe_bench_env.REQUIREMENTS)
        assert tuple((environment / "pip-packages.txt").read_text().splitlines()) == \
            swe_bench_env.PIP_PACKAGES
        assert "\nFROM python:3.11-slim\n" in (environment / "Dockerfile").read_text()
        assert "CI-EVAL-PLACEHOLDER" not in (task / "checks.py").read_text()
        metadata = json.loads((task / "metadata.json").read_text())
        assert metadata["repo"]["url"] == "https://github.com/pallets/flask.git"
        assert (task / "test-files" / "tests" / "conftest.py").is_file()
    return items


# Agents that do not fix the bug but make the FAIL_TO_PASS test pass: each must fail the checks.
NEGATIVES = {
    # the agent's conftest.py makes an empty name raise at test time (the pristine one is loaded)
    "pallets__flask-5014": ("conftest-patches-blueprint.sh",
                            "cat >> tests/conftest.py <<'E'\n\nimport flask\n_init = "
                            "flask.Blueprint.__init__\n\n\ndef _strict(self, name, *a, **k):\n"
                            "    if not name:\n        raise ValueError(name)\n"
                            "    _init(self, name, *a, **k)\n\n\n"
                            "flask.Blueprint.__init__ = _strict\nE\n"),
    # the agent rewrites the instance's test (the test patch's file is put back first)
    "pallets__flask-4992": ("weakened-test.sh",
                            "printf 'def test_config_from_file_toml():\\n    pass\\n' "
                            ">> tests/test_config.py\n"),
}


def add_negatives(repo_root: Path, items: list[dict]) -> None:
    for item in items:
        name, script = NEGATIVES[item["source_id"]]
        folder = repo_root / "tasks" / item["task"] / "negatives"
        folder.mkdir()
        (folder / name).write_text(script)


def assert_verdicts(stdout: str) -> None:
    """Each record's rows: FAIL_TO_PASS ids FAIL before, PASS with the patch; PASS_TO_PASS PASS
    both times (verify's table: before, after, id)."""
    rows = {parts[2]: parts[:2] for parts in (line.split(None, 2) for line in stdout.splitlines())
            if len(parts) == 3 and parts[0] in ("PASS", "FAIL") and "::" in parts[2]}
    for record in RECORDS:
        for test_id in json.loads(record["FAIL_TO_PASS"]):
            assert rows.get(test_id) == ["FAIL", "PASS"], (test_id, stdout)
        for test_id in json.loads(record["PASS_TO_PASS"]):
            assert rows.get(test_id) == ["PASS", "PASS"], (test_id, stdout)


def pinned_interpreter(tmp_path: Path, folder: Path) -> Path:
    """A venv of this Python with the record's pins installed offline from the wheel cache, and
    ci-eval (with its own dependencies) importable after them."""
    venv = tmp_path / "flask-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], check=True, capture_output=True,
                               text=True).stdout.strip())
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-warn-conflicts", "--no-index", "--find-links", str(folder), "--target", str(site),
                    *swe_bench_env.PINS], check=True, timeout=300)
    # after the pins on sys.path: ci-eval and its dependencies (pytest 7.3.0 stays the one used)
    (site / "zz-ci-eval.pth").write_text(f"{Path(__file__).parent.parent}\n"
                                         f"{sysconfig.get_paths()['purelib']}\n")
    return python


def test_the_flask_records_import_and_verify_locally(cli, repo_root, tmp_path):
    folder = wheels()
    env = {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}
    items = imported(cli, repo_root, tmp_path, env)
    python = pinned_interpreter(tmp_path, folder)
    add_negatives(repo_root, items)
    valid = cli("validate", cwd=repo_root, env=env)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    verified = subprocess.run([str(python), "-m", "ci_eval", "verify"], cwd=repo_root,
                              env=_cli_env(env), capture_output=True, text=True, timeout=900)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert_verdicts(verified.stdout)


def test_the_flask_records_verify_on_the_docker_runner(cli, repo_root, tmp_path,
                                                      python_311_slim_stand_in):  # noqa: F811
    """No hand-written Dockerfile: the import's, from SWE-bench's spec, installing from --wheels."""
    folder = wheels()
    env = {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}
    items = imported(cli, repo_root, tmp_path, env, "--wheels", folder)
    for item in items:
        wheels_copied = repo_root / "tasks" / item["task"] / "environment" / "wheels"
        assert sorted(p.name for p in wheels_copied.iterdir()) == sorted(
            p.name for p in folder.iterdir() if p.suffix == ".whl")
    add_negatives(repo_root, items)
    valid = cli("validate", cwd=repo_root, env=env)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    verified = cli("verify", "--runner", "docker", cwd=repo_root, env=env, timeout=1500)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert_verdicts(verified.stdout)
