"""The eval.yml that `ci-eval init --agent PRESET` writes, run by act: the workflow's own install
step puts the real CLI on PATH at its pinned version (from the npm registry or PyPI), the shard
runs it against a loopback fake of the model API (tests/fake_models), and the pull request gets a
comment with the run's usage and cost.

Under act: claude-code (npm) and aider (pip). The other installable presets (codex, gemini,
mini-swe-agent) get the same install step from the same code (tests/test_init_presets.py checks
each one's step); running all five under act would add several minutes to a suite that must
stay under six. The installs go to ~/.cache/ci-eval-tests/init-agents/PRESET through the step's
CI_EVAL_AGENT_PREFIX and are reused while they hold the pinned version (a fresh machine
installs them itself: about a minute for Claude Code, longer for aider).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import fake_models
import pytest
from act_helpers import REPOSITORY, TOKEN, job_results, pr_event, run_act
from fake_github import FakeGitHub
from test_act_report import user_repo

from ci_eval.agents.installs import INSTALLS

CACHE = Path.home() / ".cache" / "ci-eval-tests" / "init-agents"
NEEDS = {"npm": ("npm", "node"), "pip": ("python3",)}
REGISTRY_ENV = ("NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
                "CURL_CA_BUNDLE", "PIP_CERT", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL",
                "PIP_FIND_LINKS", "PIP_DEFAULT_TIMEOUT", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY")


def require_tools(kind: str) -> None:
    missing = [tool for tool in NEEDS[kind] if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"LOUD SKIP: {', '.join(missing)} not installed (.ci/run installs them); "
                    "the init-written install step cannot run")


@pytest.fixture
def api():
    with FakeGitHub() as fake:
        fake.add_token(TOKEN, "github-actions[bot]", installation=True)
        fake.add_pull(REPOSITORY, 7)
        yield fake


def run_preset(preset: str, tmp_path, api, model_env: dict, secrets: dict):
    install = INSTALLS[preset]
    require_tools(install.kind)
    repo = tmp_path / "user-repo"
    flags = user_repo(repo, None, tmp_path, preset)
    # two runs of the one task (the workflow as written runs 5)
    workflow = repo / ".github" / "workflows" / "eval.yml"
    workflow.write_text(workflow.read_text().replace("          mode: run\n",
                                                     "          mode: run\n          runs: 2\n"))
    from act_helpers import commit_repo

    commit_repo(repo)
    prefix = CACHE / preset
    prefix.parent.mkdir(parents=True, exist_ok=True)
    for name, value in secrets.items():
        flags += ["-s", f"{name}={value}"]
    env = {"CI_EVAL_AGENT_PREFIX": str(prefix), **model_env}
    # how this machine reaches the registries (its CA bundle, pip's index settings): the job's
    # environment is otherwise act's minimal one
    env |= {name: os.environ[name] for name in REGISTRY_ENV if os.environ.get(name)}
    done = run_act(repo, api, tmp_path / "act", event=pr_event(7), extra_flags=flags, env=env,
                   timeout=900)
    if os.environ.get("CI_EVAL_ACT_LOG"):  # debugging: the whole act output
        Path(os.environ["CI_EVAL_ACT_LOG"]).write_text(done.stdout + done.stderr)
    return done


def assert_usage_comment(done, api, preset: str):
    results = job_results(done.stdout)
    assert results.get("shard 1/1") == "succeeded", done.stdout[-6000:]
    assert results.get("report") == "succeeded", done.stdout[-4000:]
    assert f"Install {INSTALLS[preset].program}" in done.stdout
    [posted] = api.comments_on(REPOSITORY, 7)
    body = posted["body"]
    assert f"agent `{preset}`" in body, body
    usage = re.search(r"in all ([0-9,]+) tokens, \$([0-9.]+)", body)
    assert usage, body
    assert int(usage.group(1).replace(",", "")) >= 2 * 1050  # two runs of >= 1 answer each
    assert float(usage.group(2)) > 0
    return body


def test_claude_code_installed_by_the_workflow_runs_against_a_fake_model(tmp_path, api):
    with fake_models.FakeModelServer("solve") as model:
        done = run_preset("claude-code", tmp_path, api, {"ANTHROPIC_BASE_URL": model.url},
                          {"ANTHROPIC_API_KEY": "sk-ant-test"})
        assert model.model_requests(), done.stdout[-6000:]
    assert_usage_comment(done, api, "claude-code")


def test_aider_installed_by_the_workflow_runs_against_a_fake_model(tmp_path, api):
    with fake_models.FakeModelServer("solve") as model:
        done = run_preset("aider", tmp_path, api,
                          {"OPENAI_API_BASE": model.url + "/v1"},
                          {"OPENAI_API_KEY": "sk-test"})
        assert model.model_requests(), done.stdout[-6000:]
    assert_usage_comment(done, api, "aider")
