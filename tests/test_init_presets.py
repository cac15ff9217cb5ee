"""`ci-eval init --agent PRESET`: the written eval.yml and baseline.yml install the preset's CLI at
its pinned version before the run step, hand that step (and only it) the preset's secrets, and
the next steps say what to set; the report job runs unless cancelled and gets the plan."""

from __future__ import annotations

import re

import pytest
import yaml
from act_helpers import commit_repo

from ci_eval.agents.installs import INSTALLS
from ci_eval.agents.presets import PRESETS
from ci_eval.commands.init import ACTION_REF


def test_every_preset_has_an_install_entry():
    assert set(INSTALLS) == set(PRESETS)
    for name, install in INSTALLS.items():
        assert install.program == PRESETS[name].program
        assert set(install.secrets) <= set(PRESETS[name].key_env), name


@pytest.fixture
def written(tmp_path, cli):
    def init(agent: str):
        root = tmp_path / agent
        root.mkdir()
        commit_repo(root)
        done = cli("init", "--agent", agent, cwd=root)
        assert done.returncode == 0, done.stderr
        return root, done.stdout
    return init


@pytest.mark.parametrize("agent", sorted(INSTALLS))
def test_the_written_workflows_install_the_cli_and_pass_its_secrets(written, agent):
    install = INSTALLS[agent]
    root, out = written(agent)
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
        assert installer["env"] == {"PACKAGE": install.package, "AGENT_VERSION": install.version,
                                    "PROGRAM": install.program}
        assert "$prefix/bin" in installer["run"] and "GITHUB_PATH" in installer["run"]
        uses_node = any("actions/setup-node@" in str(s.get("uses", "")) for s in before)
        assert uses_node == (install.kind == "npm"), name
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
    root, _ = written(agent)
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
