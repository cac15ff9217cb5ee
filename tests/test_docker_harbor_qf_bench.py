"""A real Harbor task whose solve.sh reads /solution (issue 36 item 2): QuantitativeFinance-
Bench's kelly-var-sizing (tests/fixtures/qf-bench/SOURCE.md, unchanged), verified with `--runner
docker` as imported. Its solve.sh (`#!/usr/bin/env bash`, `set -euo pipefail`) reads
/solution/expected.json and /solution/checkpoints.json, where Harbor mounts solution/; its
test.sh installs uv with curl and runs `uvx -p 3.11 -w pytest==8.4.1 -w pytest-json-ctrf==0.3.5
-w numpy -w pandas -w scipy pytest`, whose verifier writes a partial-credit reward.txt. Harbor's
own oracle run scored it 1.0 (the task's oracle_logs/reward.txt): the reference must score 1
here, and noop (no output) 0.

No registry here: its FROM image, `finance-bench-sandbox:latest` (the benchmark's own sandbox,
built from its docker/ folder), is the `ubuntu:24.04` stand-in (Debian bookworm with python3
and curl, tests/docker_helpers.py) tagged under that name: the task needs only bash and
python3 in it. The verifier's uv and wheels come from CI_EVAL_VERIFIER_TOOLS
(tests/harbor_tools.py SCIENTIFIC)."""

from __future__ import annotations

import json
from pathlib import Path

import harbor_tools
import pytest
from docker_helpers import docker_engine, ubuntu_stand_in  # noqa: F401 - fixtures

TASK = Path(__file__).parent / "fixtures" / "qf-bench" / "kelly-var-sizing"
TASK_ID = "task-001-kelly-var-sizing"
SANDBOX = "finance-bench-sandbox:latest"


@pytest.fixture
def sandbox(docker_engine, ubuntu_stand_in):  # noqa: F811
    docker_engine.docker("tag", ubuntu_stand_in, SANDBOX)
    return SANDBOX


def test_solve_sh_reads_solution_and_scores_as_harbor_s_oracle(tmp_path, cli, sandbox):
    tools = harbor_tools.prepared(harbor_tools.SCIENTIFIC)
    if tools is None:
        pytest.skip(f"the verifier's tools are not prepared at {harbor_tools.SCIENTIFIC} "
                    "(python3 tests/harbor_tools.py prepare; .ci/run does)")
    assert "/solution" in (TASK / "solution" / "solve.sh").read_text()
    assert (TASK / "oracle_logs" / "reward.txt").read_text().strip() == "1.0"
    env = {"CI_EVAL_VERIFIER_TOOLS": str(tools)}
    root = tmp_path / "root"
    (root / "tasks").mkdir(parents=True)
    imported = cli("import", "harbor", TASK, "--into", root, "--json", "--today", "2026-12-03")
    assert imported.returncode == 0, imported.stderr
    [report] = json.loads(imported.stdout)["imported"]
    assert any("oracle_logs" in w for w in report["warnings"]), report["warnings"]
    result = cli("verify", "--root", root, "--runner", "docker", "--json", env=env, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    verdict = json.loads(result.stdout)["tasks"][0]
    assert verdict["valid"] and verdict["states_checked"] == 2, verdict
    for agent, reward in (("reference", "reward 1 "), ("noop", "reward 0 ")):
        ran = cli("run", "--root", root, "--agent", agent, "-k", "1", "--fresh", TASK_ID,
                  env=env, timeout=900)
        assert ran.returncode == 0, ran.stderr[-3000:]
        [record] = [json.loads(line) for line in
                    (root / "results" / f"{TASK_ID}.jsonl").read_text().splitlines()]
        assert record["status"] == ("pass" if agent == "reference" else "fail"), record["reason"]
        assert record["reason"].startswith(reward) or reward in record["reason"], record["reason"]
