"""The eval.yml that `ci-eval init --agent PRESET` writes, run by act, for every installable
preset (claude-code, codex, gemini, aider, mini-swe-agent, qwen-code, opencode, cline,
copilot): the workflow's own install step puts
the real CLI on PATH at its pinned version (from the npm registry or PyPI), the shard runs it
against a loopback fake of the model API (tests/fake_models), and the pull request gets a comment
with the run's usage and cost.

How each one reaches the fake is what a user of that tool writes: claude-code and aider take the
API's address from the job's environment (ANTHROPIC_BASE_URL, OPENAI_API_BASE); codex, gemini and
mini-swe-agent, qwen-code and opencode from an `agents:` entry of ci-eval.yaml (`base_url:`, and
the `model:` that mini-swe-agent needs), with a `pricing:` row where the tool reports no cost
(codex, gemini, qwen-code). openhands (its workflow sets up Python 3.12 first: the setup-python
stand-in puts the host's on PATH) reaches the fake through its entry's `base_url:` too.

The installs go to ~/.cache/ci-eval-tests/init-agents/PRESET ($CI_EVAL_TESTS_CACHE if set) through the step's
CI_EVAL_AGENT_PREFIX and are reused while they hold the pinned version (the step's version
check: under a second). A fresh machine installs them itself, from the registries, with npm's and
pip's download caches under ~/.cache/ci-eval-tests/ (npm-cache, pip-cache) so that a changed pin
downloads only what changed.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import act_helpers
import fake_models
import pytest
import real_clis
from act_helpers import REPOSITORY, commit_repo, job_results, pr_event, run_act
from test_act_report import user_repo

from ci_eval.agents.presets import PRESETS

INSTALLS = {name: preset.install for name, preset in PRESETS.items()}

api = act_helpers.api  # the loopback GitHub fixture, shared by the act tests

TEST_CACHE = real_clis.CACHE  # ~/.cache/ci-eval-tests, or $CI_EVAL_TESTS_CACHE
CACHE = TEST_CACHE / "init-agents"
NEEDS = {"npm": ("npm", "node"), "pip": ("python3",)}
REGISTRY_ENV = ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
                "CURL_CA_BUNDLE", "PIP_CERT", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
                "PIP_FIND_LINKS", "PIP_DEFAULT_TIMEOUT", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY",
                "npm_config_registry")
RUNS = 2  # runs of the one task (the workflow as written runs 5)
# The fake model's scripted tool call makes the example task's known-good change (init's
# solution/solve.sh), so the real CLI's edit passes the task's checks.
SOLUTION = (Path(__file__).resolve().parents[1] / "ci_eval" / "templates" / "task" / "solution"
            / "solve.sh").read_text()
FIX = fake_models.Edit("slug.py", re.search(r"<<'PY'\n(.*?)^PY$", SOLUTION, re.S | re.M).group(1))


@dataclass(frozen=True)
class Case:
    secret: str
    env: str = ""  # the job variable that takes the fake's address ("" = base_url: in ci-eval.yaml)
    suffix: str = ""  # appended to the fake's address
    model: str = ""  # the agents: entry's model ("" = no entry, the preset as init wrote it)
    price: str = ""  # a pricing: row for the model, for tools that report no cost


CASES = {
    "claude-code": Case("ANTHROPIC_API_KEY", env="ANTHROPIC_BASE_URL"),
    "codex": Case("OPENAI_API_KEY", suffix="/v1", model="gpt-5-codex",
                  price="{input: 1.25, cached_input: 0.125, output: 10}"),
    "gemini": Case("GEMINI_API_KEY", model="gemini-2.5-pro",
                   price="{input: 1.25, cached_input: 0.125, output: 10}"),
    "aider": Case("OPENAI_API_KEY", env="OPENAI_API_BASE", suffix="/v1"),
    "mini-swe-agent": Case("OPENAI_API_KEY", suffix="/v1", model="openai/gpt-4o"),
    "qwen-code": Case("OPENAI_API_KEY", suffix="/v1", model="qwen3-coder-plus",
                      price="{input: 1, cached_input: 0.1, output: 5}"),
    "opencode": Case("ANTHROPIC_API_KEY", suffix="/v1", model="anthropic/claude-sonnet-4-5"),
    # Cline prices the model itself; the base URL goes into its settings (with /v1)
    "cline": Case("ANTHROPIC_API_KEY", suffix="/v1", model="anthropic/claude-sonnet-4-5"),
    # Copilot with its own-provider key (the workflow's alternative secret); tokens from its
    # session log, the cost from the pricing row
    "copilot": Case("COPILOT_PROVIDER_API_KEY", model="claude-sonnet-4-5",
                    price="{input: 3, cached_input: 0.3, cache_write: 3.75, output: 15}"),
}
# The presets added in the second round of agents (issue 34): one line each.
CASES |= {
    "openhands": Case("LLM_API_KEY", suffix="/v1", model="openai/gpt-4o"),
}


def require_tools(kind: str) -> None:
    missing = [tool for tool in NEEDS[kind] if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"LOUD SKIP: {', '.join(missing)} not installed (.ci/run installs them); "
                    "the init-written install step cannot run")


def agent_entry(preset: str, case: Case, base_url: str) -> str:
    """What a user of the tool adds to the ci-eval.yaml that init wrote (default_agent: PRESET)."""
    text = (f"\nagents:\n  {preset}:\n    preset: {preset}\n    model: {case.model}\n"
            f"    base_url: {base_url}\n")
    if case.price:
        text += f"pricing:\n  {case.model}: {case.price}\n"
    return text


def run_preset(preset: str, tmp_path, api, model_url: str):
    install, case = INSTALLS[preset], CASES[preset]
    require_tools(install.kind)
    repo = tmp_path / "user-repo"
    flags = user_repo(repo, None, tmp_path, preset,
                      *(("--model", case.model) if install.needs_model else ()))
    config = repo / "ci-eval.yaml"  # init's agents: entry of --model, replaced by the user's
    config.write_text(config.read_text().split("\n# --model of")[0])
    workflow = repo / ".github" / "workflows" / "eval.yml"
    workflow.write_text(workflow.read_text().replace(
        "          mode: run\n", f"          mode: run\n          runs: {RUNS}\n"))
    if case.model:
        with (repo / "ci-eval.yaml").open("a") as config:
            config.write(agent_entry(preset, case, model_url + case.suffix))
    commit_repo(repo)
    prefix = CACHE / preset
    prefix.parent.mkdir(parents=True, exist_ok=True)
    flags += ["-s", f"{case.secret}=sk-test-0123456789"]
    env = {"CI_EVAL_AGENT_PREFIX": str(prefix),
           # download caches that outlive the job's HOME (a fresh machine fills them itself)
           "npm_config_cache": str(TEST_CACHE / "npm-cache"),
           "PIP_CACHE_DIR": str(TEST_CACHE / "pip-cache")}
    if case.env:
        env[case.env] = model_url + case.suffix
    # how this machine reaches the registries (its CA bundle, pip's index settings): the job's
    # environment is otherwise act's minimal one
    env |= {name: os.environ[name] for name in REGISTRY_ENV if os.environ.get(name)}
    done = run_act(repo, api, tmp_path / "act", event=pr_event(7), extra_flags=flags, env=env,
                   timeout=1500)
    if os.environ.get("CI_EVAL_ACT_LOG"):  # debugging: the whole act output
        Path(os.environ["CI_EVAL_ACT_LOG"]).write_text(done.stdout + done.stderr)
    return done


@pytest.mark.parametrize("preset", list(CASES))
def test_the_preset_installed_by_the_workflow_runs_against_a_fake_model(preset, tmp_path, api):
    with fake_models.FakeModelServer("solve", edit=FIX) as model:
        done = run_preset(preset, tmp_path, api, model.url)
        served = model.served_total()
        assert model.model_requests(), done.stdout[-6000:]
    results = job_results(done.stdout)
    assert results.get("shard 1/1") == "succeeded", done.stdout[-6000:]
    assert results.get("report") == "succeeded", done.stdout[-4000:]
    assert f"Install {INSTALLS[preset].program}" in done.stdout
    [posted] = api.comments_on(REPOSITORY, 7)
    body = posted["body"]
    assert f"agent `{preset}" in body, body
    assert f"{RUNS}/{RUNS} pass" in body, body
    usage = re.search(r"in all ([0-9,]+) tokens, \$([0-9.]+)", body)
    assert usage, body
    # every token the fake served, over both runs, and a cost: the tool's own or the pricing row's
    assert int(usage.group(1).replace(",", "")) == served.input + served.output, (served, body)
    assert float(usage.group(2)) > 0
