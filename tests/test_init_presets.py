"""`ci-eval init --agent PRESET`: the written eval.yml and baseline.yml install the preset's CLI at
its pinned version before the run step, hand that step (and only it) the preset's secrets, and
the next steps say what to set; the report job runs unless cancelled and gets the plan."""

from __future__ import annotations

import os
import re

import pytest
import yaml
from act_helpers import commit_repo
from harness_helpers import assert_bad_input

from ci_eval.agents.installs import NO_INSTALL
from ci_eval.agents.presets import PRESETS
from ci_eval.scaffold import ACTION_REF

INSTALLS = {name: preset.install for name, preset in PRESETS.items()}


def test_every_preset_has_an_install_entry():
    for name, install in INSTALLS.items():
        assert install is not NO_INSTALL, name
        assert install.program == PRESETS[name].program
        assert set(install.secrets) <= set(PRESETS[name].key_env), name


@pytest.fixture
def written(tmp_path, cli):
    def init(agent: str, *args: str):
        root = tmp_path / agent
        root.mkdir()
        commit_repo(root)
        done = cli("init", "--agent", agent, *args, cwd=root)
        assert done.returncode == 0, done.stderr
        return root, done.stdout
    return init


OFFERED = sorted(name for name, install in INSTALLS.items() if not install.refused)
MODEL = "anthropic/claude-sonnet-4-5"


@pytest.mark.parametrize("agent", OFFERED)
def test_the_written_workflows_install_the_cli_and_pass_its_secrets(written, agent):
    install = INSTALLS[agent]
    root, out = written(agent, *(("--model", MODEL) if install.needs_model else ()))
    for name in ("eval.yml", "baseline.yml"):
        text = (root / ".github" / "workflows" / name).read_text()
        jobs = yaml.safe_load(text)["jobs"]
        steps = jobs["shard"]["steps"]
        [run_step] = [s for s in steps if s.get("uses") == ACTION_REF]
        assert run_step["env"] == {s: f"${{{{ secrets.{s} }}}}" for s in install.secrets}
        before = steps[:steps.index(run_step)]
        installers = [s for s in before if str(s.get("name", "")).startswith("Install ")]
        if install.kind is None:  # goose: no registry package, a comment says what to add
            assert not installers and "goose has no npm or PyPI package" in text
            continue
        [installer] = installers
        python = {"AGENT_PYTHON": "${{ steps.agent-python.outputs.python-path }}"} \
            if install.python else {}
        assert installer["env"] == {"PACKAGE": install.package, "AGENT_VERSION": install.version,
                                    "PROGRAM": install.program} | python
        assert "$prefix/bin" in installer["run"] and "GITHUB_PATH" in installer["run"]
        uses_node = any("actions/setup-node@" in str(s.get("uses", "")) for s in before)
        assert uses_node == (install.kind == "npm"), name
        # a package that needs a newer Python than the runner's (openhands: 3.12) sets it up
        # off PATH (update-environment: false): ci-eval's own steps keep their Python
        pythons = [(s["with"]["python-version"], s["with"]["update-environment"], s["id"])
                   for s in before if "actions/setup-python@" in str(s.get("uses", ""))]
        assert pythons == ([(install.python, False, "agent-python")] if install.python else []), name
        others = [s for job in jobs.values() for s in job["steps"] if s is not run_step]
        assert all(not set(s.get("env", {})) & set(install.secrets) for s in others)
    assert f"gh secret set {install.secrets[0]}" in " ".join(out.split())
    if install.login:
        assert "Login:" in out
    if install.kind:
        assert install.spec in out


def test_the_report_job_runs_unless_cancelled_and_gets_the_plan(written):
    root, out = written("reference")
    jobs = yaml.safe_load((root / ".github/workflows/eval.yml").read_text())["jobs"]
    assert jobs["report"]["if"] == "${{ !cancelled() && needs.plan.outputs.skip != 'true' }}"
    [step] = [s for s in jobs["report"]["steps"] if s.get("uses") == ACTION_REF]
    assert step["with"]["plan"] == "${{ needs.plan.outputs.plan }}"
    assert step["with"]["plan-result"] == "${{ needs.plan.result }}"
    assert jobs["plan"]["outputs"]["plan"] == "${{ steps.plan.outputs.plan }}"
    assert "the report job's" in " ".join(out.split())


def test_pushes_to_the_default_branch_are_never_cancelled(written):
    root, _ = written("reference")
    workflow = yaml.safe_load((root / ".github/workflows/eval.yml").read_text())
    group = workflow["concurrency"]["group"]
    assert "github.run_id" in group and "pull_request.number" in group
    assert workflow["concurrency"]["cancel-in-progress"] == \
        "${{ github.event_name == 'pull_request' }}"


def test_init_names_what_the_existing_tasks_require(tmp_path, cli, make_task, valid_metadata):
    root = tmp_path / "repo"
    root.mkdir()
    make_task(root, "task-001-x", metadata={**valid_metadata(), "requires": ["pytest", "ruff"]})
    commit_repo(root)
    done = cli("init", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "Your tasks require pytest, ruff" in " ".join(done.stdout.split())


@pytest.mark.parametrize("agent", sorted(set(INSTALLS) - set(OFFERED)))
def test_init_refuses_a_preset_it_cannot_write_a_running_workflow_for(tmp_path, cli, agent):
    """goose: no package a workflow could install, and a provider and model to set."""
    commit_repo(tmp_path)
    done = cli("init", "--agent", agent, cwd=tmp_path)
    assert_bad_input(done, "--agent", "no npm or PyPI package", "by hand")
    assert not (tmp_path / "ci-eval.yaml").exists() and not (tmp_path / ".github").exists()


def test_a_preset_without_a_default_model_needs_one_and_init_writes_it(tmp_path, cli, written):
    commit_repo(tmp_path)
    assert_bad_input(cli("init", "--agent", "mini-swe-agent", cwd=tmp_path), "--model",
                     "no default model")
    assert not (tmp_path / "ci-eval.yaml").exists()
    assert_bad_input(cli("init", "--model", MODEL, cwd=tmp_path), "--model", "for a preset")
    assert_bad_input(cli("init", "--agent", "codex", "--model", "a b", cwd=tmp_path), "--model")
    root, _ = written("mini-swe-agent", "--model", MODEL)
    config = yaml.safe_load((root / "ci-eval.yaml").read_text())
    assert config["default_agent"] == "mini-swe-agent"
    assert config["agents"]["mini-swe-agent"] == {"preset": "mini-swe-agent", "model": MODEL}
    assert cli("validate", cwd=root).returncode == 0


def test_the_run_preflight_refuses_a_preset_without_a_model(tmp_path, cli):
    """With its program on PATH and a key set, mini-swe-agent still cannot start without a
    model: exit 2 before any agent run (it would fail every run in its first API call)."""
    commit_repo(tmp_path)
    assert cli("init", "--agent", "codex", cwd=tmp_path).returncode == 0
    config = tmp_path / "ci-eval.yaml"
    config.write_text(config.read_text().replace("default_agent: codex",
                                                 "default_agent: mini-swe-agent"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "mini-swe-agent").write_text("#!/bin/sh\nexit 0\n")
    (bin_dir / "mini-swe-agent").chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "OPENAI_API_KEY": "sk-test"}
    done = cli("run", "-k", "1", cwd=tmp_path, env=env)
    assert_bad_input(done, "--agent", "no model", "MSWEA_MODEL_NAME", "no run started")
    assert not (tmp_path / "results").exists()
    done = cli("run", "-k", "1", "--out", "results", cwd=tmp_path,
               env={**env, "MSWEA_MODEL_NAME": "openai/gpt-4o"})
    assert "no model" not in done.stderr


def test_init_writes_what_the_tasks_require_into_the_workflows(tmp_path, cli, make_task,
                                                               valid_metadata):
    root = tmp_path / "repo"
    root.mkdir()
    make_task(root, "task-001-x", metadata={**valid_metadata(), "requires": ["ruff", "pytest"]})
    commit_repo(root)
    assert cli("init", cwd=root).returncode == 0
    for name in ("eval.yml", "baseline.yml"):
        jobs = yaml.safe_load((root / ".github" / "workflows" / name).read_text())["jobs"]
        packages = [s["with"]["pip-packages"] for job in jobs.values() for s in job["steps"]
                    if "pip-packages" in s.get("with", {})]
        assert packages and set(packages) == {
            "${{ vars.CI_EVAL_PIP_PACKAGES || 'pytest ruff' }}"}, (name, packages)


def test_init_help_lists_the_presets(cli, tmp_path):
    text = " ".join(cli("init", "--help", cwd=tmp_path).stdout.split())
    for name in OFFERED:
        assert name in text
    assert "Not offered: goose" in text and "--model" in text


# The matchStrings of Renovate's built-in preset customManagers:githubActionsVersions
# (renovatebot/renovate lib/config/presets/internal/custom-managers.ts), JS named groups as
# Python's: what docs/github.md tells a team to extend.
RENOVATE_GITHUB_ACTIONS_VERSIONS = re.compile(
    r"# renovate: datasource=(?P<datasource>[a-zA-Z0-9-._]+?) depName=(?P<depName>[^\s]+?)"
    r"(?: (?:lookupName|packageName)=(?P<packageName>[^\s]+?))?"
    r"(?: versioning=(?P<versioning>[^\s]+?))?(?: extractVersion=(?P<extractVersion>[^\s]+?))?"
    r"(?: registryUrl=(?P<registryUrl>[^\s]+?))?\s+[A-Za-z0-9_]+?_VERSION\s*:\s*[\"']?"
    r"(?P<currentValue>.+?)[\"']?\s")


@pytest.mark.parametrize("agent", sorted(a for a, i in INSTALLS.items() if i.kind))
def test_the_pin_is_what_renovates_preset_finds_and_bumps(written, agent):
    """A bot's bump is one changed line: Renovate's preset finds the package and its version,
    and after its replacement of currentValue the step installs the new version."""
    install = INSTALLS[agent]
    root, _ = written(agent, *(("--model", MODEL) if install.needs_model else ()))
    path = root / ".github" / "workflows" / "eval.yml"
    text = path.read_text()
    [found] = list(RENOVATE_GITHUB_ACTIONS_VERSIONS.finditer(text))
    assert (found["datasource"], found["depName"], found["currentValue"]) == \
        ({"npm": "npm", "pip": "pypi"}[install.kind], install.package, install.version)
    bumped = text[:found.start("currentValue")] + "99.0.0" + text[found.end("currentValue"):]
    steps = yaml.safe_load(bumped)["jobs"]["shard"]["steps"]
    [installer] = [s for s in steps if str(s.get("name", "")).startswith("Install ")]
    assert installer["env"]["AGENT_VERSION"] == "99.0.0"
    assert install.version not in bumped  # no stale copy left (the step name has none)
