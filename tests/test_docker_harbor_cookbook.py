"""Real Harbor tasks verified on a real engine as imported (issue 36 item 1): four recipes of
harbor-framework's cookbook (tests/fixtures/harbor-cookbook/SOURCE.md, unchanged) give the
verdicts Harbor's oracle and nop agents give (reward 1 with solution/solve.sh, 0 untouched):

- simple-task: a bash-only solve.sh; a test.sh that installs its tools (apt-get curl, curl
  astral.sh/uv, `uvx --with pytest==8.4.1 --with pytest-json-ctrf==0.3.5 pytest`), on an image
  that is ubuntu:24.04 and WORKDIR /app only;
- multi-reward: a multi-key reward.json ({"correctness": c, "performance": p});
- dns-blacklisting: an ENTRYPOINT that writes /etc/hosts and starts a server solve.sh curls;
- skills: skills COPY'd into the image (skills_dir is not given to agents: warned at import).

No registry and no network here: `ubuntu:24.04` is a Debian rootfs imported under that name
(tests/docker_helpers.py), and the tools test.sh would fetch come from CI_EVAL_VERIFIER_TOOLS
(tests/harbor_tools.py, prepared by .ci/run). The compose recipes: multi-container is
verified in tests/test_docker_harbor_compose.py; mcp-tools is not run (its sidecar FROM
python:3.12-slim takes uv from ghcr.io and fastmcp from PyPI when it starts, and its solve.sh
installs uv with curl)."""

from __future__ import annotations

import json
from pathlib import Path

import harbor_tools
import pytest
from docker_helpers import docker_engine, ubuntu_stand_in  # noqa: F401 - fixtures

COOKBOOK = Path(__file__).parent / "fixtures" / "harbor-cookbook"
RUNNABLE = ("simple-task", "multi-reward", "dns-blacklisting", "skills")


@pytest.fixture(scope="module")
def tools():
    folder = harbor_tools.prepared()
    if folder is None:
        pytest.skip(f"the verifier's tools are not prepared at {harbor_tools.TOOLS} "
                    "(python3 tests/harbor_tools.py prepare; .ci/run does)")
    return {"CI_EVAL_VERIFIER_TOOLS": str(folder)}


@pytest.fixture
def cookbook_root(tmp_path, cli, ubuntu_stand_in):  # noqa: F811
    root = tmp_path / "root"
    (root / "tasks").mkdir(parents=True)
    imported = cli("import", "harbor", COOKBOOK, "--into", root, "--json", "--today", "2026-12-03")
    assert imported.returncode == 0, imported.stderr
    ids = {item["source_id"]: item["task"] for item in json.loads(imported.stdout)["imported"]}
    return root, ids


def test_four_cookbook_tasks_verify_as_imported(cookbook_root, cli, tools):
    root, ids = cookbook_root
    result = cli("verify", "--root", root, "--runner", "docker", "--json", "-j", "2",
                 *(ids[name] for name in RUNNABLE), env=tools, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    verdicts = {v["task"]: v for v in json.loads(result.stdout)["tasks"]}
    for name in RUNNABLE:
        verdict = verdicts[ids[name]]
        assert verdict["valid"] and verdict["states_checked"] == 2, (name, verdict)


def records(root: Path, task: str) -> list[dict]:
    return [json.loads(line) for line in
            (root / "results" / f"{task}.jsonl").read_text().splitlines()]


def test_oracle_scores_1_and_nop_0_as_in_harbor(cookbook_root, cli, tools):
    root, ids = cookbook_root
    chosen = [ids["multi-reward"], ids["simple-task"]]
    oracle = cli("run", "--root", root, "--agent", "reference", "-k", "1", "-j", "2", *chosen,
                 env=tools, timeout=900)
    assert oracle.returncode == 0, oracle.stderr[-3000:]
    multi = records(root, ids["multi-reward"])[0]
    assert multi["status"] == "pass", multi["reason"]
    assert "correctness 1, performance 1" in multi["reason"], multi["reason"]
    assert records(root, ids["simple-task"])[0]["status"] == "pass"
    nop = cli("run", "--root", root, "--agent", "noop", "-k", "1", "-j", "2", "--fresh", *chosen,
              env=tools, timeout=900)
    assert nop.returncode == 0, nop.stderr[-3000:]
    multi = records(root, ids["multi-reward"])[0]
    assert multi["status"] == "fail" and "reward 0" in multi["reason"], multi["reason"]
    assert "correctness 0, performance 0" in multi["reason"], multi["reason"]
    simple = records(root, ids["simple-task"])[0]
    assert simple["status"] == "fail" and "reward 0 (reward.txt)" in simple["reason"], simple


def test_without_the_tools_a_task_that_installs_them_fails_and_says_why(cookbook_root, cli):
    root, ids = cookbook_root
    result = cli("verify", "--root", root, "--runner", "docker", "--json", ids["simple-task"],
                 env={"CI_EVAL_VERIFIER_TOOLS": ""}, timeout=600)
    assert result.returncode == 1, result.stdout + result.stderr[-2000:]
    [verdict] = json.loads(result.stdout)["tasks"]
    assert not verdict["valid"], verdict


def test_a_tools_setting_that_names_no_folder_is_bad_input(cookbook_root, cli, tmp_path):
    root, ids = cookbook_root
    result = cli("verify", "--root", root, "--runner", "docker", ids["simple-task"],
                 env={"CI_EVAL_VERIFIER_TOOLS": str(tmp_path / "nowhere")})
    assert result.returncode == 2
    assert "CI_EVAL_VERIFIER_TOOLS=" in result.stderr and "not a folder" in result.stderr
    assert "Traceback" not in result.stderr
