"""`ci-eval import swe-bench` as SWE-bench runs an instance (issue 36 items 7, 8, 9, 11): a record
as published (`repo: owner/name`) imported from a local mirror (`--mirror owner/name=PATH`, no
record edited), a src-layout repository whose tests need its conftest.py fixtures: the tests
import the workspace's package from src/, the fixtures load from the pristine conftest.py (an
agent's conftest.py that rewrites them is never loaded), and `validate` reports the import's
to-do until the marker line is deleted; and the same on the docker runner (issue 36 item 10)."""

from __future__ import annotations

import json
import subprocess

from docker_helpers import PYTHON, docker_engine, python_image  # noqa: F401 - fixtures

from ci_eval.importers.base import file_patch

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
CONFTEST = ("import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [(2, 3, 5), (-1, -1, -2)]\n")
TESTS = ("from calc import add\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n")
NEW_TESTS = TESTS + ("\n\ndef test_numbers(numbers):\n    for a, b, total in numbers:\n"
                     "        assert add(a, b) == total\n")
# the agent's conftest.py: fixtures the buggy add() passes
WEAK_CONFTEST = ("import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [(5, 0, 5)]\n")


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def mirror(tmp_path):
    work = tmp_path / "calc-work"
    (work / "src" / "calc").mkdir(parents=True)
    (work / "tests").mkdir()
    (work / "src" / "calc" / "__init__.py").write_text(BUGGY)
    (work / "tests" / "conftest.py").write_text(CONFTEST)
    (work / "tests" / "test_calc.py").write_text(TESTS)
    (work / "pyproject.toml").write_text('[project]\nname = "calc"\nversion = "1.0"\n\n'
                                         '[tool.pytest.ini_options]\nxfail_strict = true\n')
    git("init", "-q", "-b", "main", cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", "-A", cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base", cwd=work)
    base = git("rev-parse", "HEAD", cwd=work)
    bare = tmp_path / "mirrors" / "calc.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    return bare, base


def record(base: str) -> dict:
    return {"instance_id": "acme__calc-7", "repo": "acme/calc", "base_commit": base,
            "patch": file_patch({"src/calc/__init__.py": BUGGY.encode()},
                                {"src/calc/__init__.py": FIXED.encode()}),
            "test_patch": file_patch({"tests/test_calc.py": TESTS.encode()},
                                     {"tests/test_calc.py": NEW_TESTS.encode()}),
            "problem_statement": "add() subtracts.", "version": "1.0",
            "FAIL_TO_PASS": json.dumps(["tests/test_calc.py::test_numbers"]),
            "PASS_TO_PASS": json.dumps(["tests/test_calc.py::test_zero"])}


def test_a_published_record_imports_from_a_mirror_and_verifies(cli, repo_root, tmp_path):
    bare, base = mirror(tmp_path)
    source = tmp_path / "instances.jsonl"
    source.write_text(json.dumps(record(base)) + "\n")
    env = {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}
    result = cli("import", "swe-bench", source, "--mirror", f"acme/calc={bare}", "--json",
                 cwd=repo_root, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    [item] = json.loads(result.stdout)["imported"]
    assert any("src layout" in w for w in item["warnings"]), item
    task = repo_root / "tasks" / item["task"]
    metadata = json.loads((task / "metadata.json").read_text())
    assert metadata["repo"] == {"url": "https://github.com/acme/calc.git", "commit": base}
    assert metadata["x-imported-from"]["mirror"] == f"file://{bare}"
    assert (task / "test-files" / "tests" / "conftest.py").read_text() == CONFTEST
    # an agent that fixes nothing but replaces the fixtures: the pristine conftest.py is loaded
    (task / "negatives").mkdir()
    (task / "negatives" / "weaker-fixtures.sh").write_text(
        f"cat > tests/conftest.py <<'E'\n{WEAK_CONFTEST}E\n")
    (task / "negatives" / "half-fix.sh").write_text(
        "printf 'def add(a, b):\\n    return a + b if a > 0 else 0\\n' > src/calc/__init__.py\n")
    verified = cli("verify", item["task"].split("-")[1], cwd=repo_root, env=env, timeout=300)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "FAIL    PASS    tests/test_calc.py::test_numbers" in verified.stdout, verified.stdout
    # the to-do is reported until the marker line goes
    pending = cli("validate", cwd=repo_root, env=env)
    assert pending.returncode != 0 and "CI-EVAL-PLACEHOLDER" in pending.stdout + pending.stderr
    checks = task / "checks.py"
    checks.write_text("".join(line for line in checks.read_text().splitlines(keepends=True)
                              if not line.startswith("# CI-EVAL-PLACEHOLDER")
                              and not line.startswith("# it with `ci-eval verify`")))
    done = cli("validate", cwd=repo_root, env=env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_bad_mirrors_are_bad_input(cli, repo_root, tmp_path):
    bare, base = mirror(tmp_path)
    source = tmp_path / "instances.jsonl"
    source.write_text(json.dumps(record(base)) + "\n")
    for value, said in ((f"acme/calc={tmp_path / 'nowhere'}", "no such folder"),
                        (f"not-a-repo={bare}", "expected OWNER/NAME=PATH")):
        result = cli("import", "swe-bench", source, "--mirror", value, cwd=repo_root,
                     env={"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")})
        assert result.returncode == 2 and said in result.stderr, result.stderr
        assert "--mirror" in result.stderr and "Traceback" not in result.stderr
    other = cli("import", "harbor", tmp_path, "--mirror", f"acme/calc={bare}", cwd=repo_root)
    assert other.returncode == 2 and "--mirror" in other.stderr
    assert list((repo_root / "tasks").iterdir()) == []


def test_the_imported_instance_verifies_on_the_docker_runner(cli, repo_root, tmp_path,
                                                             python_image):  # noqa: F811
    """The same instance in an image of the team's (python3 and pytest): the workspace is the
    base commit's tree, the checks run in a fresh read-only container of that image."""
    bare, base = mirror(tmp_path)
    source = tmp_path / "instances.jsonl"
    source.write_text(json.dumps(record(base)) + "\n")
    env = {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}
    result = cli("import", "swe-bench", source, "--mirror", f"acme/calc={bare}", "--json",
                 cwd=repo_root, env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    [item] = json.loads(result.stdout)["imported"]
    task = repo_root / "tasks" / item["task"]
    (task / "environment").mkdir()
    (task / "environment" / "Dockerfile").write_text(f"FROM {PYTHON}\n")
    (task / "negatives").mkdir()
    (task / "negatives" / "weaker-fixtures.sh").write_text(
        f"cat > tests/conftest.py <<'E'\n{WEAK_CONFTEST}E\n")
    verified = cli("verify", "--runner", "docker", cwd=repo_root, env=env, timeout=600)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "FAIL    PASS    tests/test_calc.py::test_numbers" in verified.stdout, verified.stdout
