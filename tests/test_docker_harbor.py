"""The docker runner on a real engine, through the real CLI: a Harbor task imported, verified,
run with the reference and noop agents and an agent placed in the container; a build failure
is an error naming the task. The engine and the images: tests/docker_helpers.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docker_helpers import busybox_image, docker_engine  # noqa: F401 - fixtures

from ci_eval.run.docker.images import context_hash

HARBOR_TASK = Path(__file__).parent / "fixtures" / "harbor" / "broken-inventory"


@pytest.fixture
def harbor_root(tmp_path, cli, busybox_image):  # noqa: F811
    root = tmp_path / "root"
    (root / "tasks").mkdir(parents=True)
    imported = cli("import", "harbor", HARBOR_TASK, "--into", root, "--json",
                   "--today", "2026-11-30")
    assert imported.returncode == 0, imported.stderr
    report = json.loads(imported.stdout)
    assert [t["task"] for t in report["imported"]] == ["task-001-broken-inventory"]
    return root


def task_dir(root: Path) -> Path:
    return root / "tasks" / "task-001-broken-inventory"


def test_import_maps_task_toml_and_keeps_the_folders(harbor_root):
    folder = task_dir(harbor_root)
    metadata = json.loads((folder / "metadata.json").read_text())
    assert metadata["runner"] == "docker"
    assert metadata["docker"] == {"dockerfile": "environment/Dockerfile", "workspace": "image",
                                  "verifier": "harbor", "build_timeout_seconds": 120.0,
                                  "cpus": 1.0, "memory_mb": 256}
    assert metadata["timeout_seconds"] == {"agent": 120.0, "checks": 60.0}
    assert (metadata["difficulty"], metadata["area"]) == (2, "file-operations")
    assert metadata["tags"] == ["imported", "harbor", "counting", "busybox"]
    assert metadata["x-imported-from"]["storage_mb"] == 1024
    assert (folder / "prompt.md").read_text().startswith("The inventory of this machine")
    for kept in ("environment/Dockerfile", "tests/test.sh", "solution/solve.sh"):
        assert (folder / kept).read_bytes() == (HARBOR_TASK / kept).read_bytes()
    assert not (folder / "checks.py").exists() and not (folder / "repo-state").exists()


def test_verify_on_docker_fails_untouched_and_passes_the_solution(harbor_root, cli):
    assert not Path("/opt/inventory/items.csv").exists()  # the answer is only in the image
    result = cli("verify", "--root", harbor_root, "--runner", "docker", "--json", timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    verdict = json.loads(result.stdout)["tasks"][0]
    assert verdict["valid"] and verdict["states_checked"] == 2, verdict
    assert "image ci-eval/task-001-broken-inventory:" in result.stderr


def test_verify_on_local_is_bad_input_for_a_harbor_task(harbor_root, cli):
    result = cli("verify", "--root", harbor_root, "--runner", "local")
    assert result.returncode == 2
    assert "task-001-broken-inventory" in result.stderr and "needs the docker runner" in result.stderr


def runs(root: Path) -> list[dict]:
    path = root / "results" / "task-001-broken-inventory.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_reference_passes_and_noop_fails(harbor_root, cli):
    passed = cli("run", "--root", harbor_root, "--agent", "reference", "-k", "1", "--json",
                 timeout=180)
    assert passed.returncode == 0, passed.stderr
    assert "image ci-eval/task-001-broken-inventory:" in passed.stderr  # built, or found
    assert [r["status"] for r in runs(harbor_root)] == ["pass"]
    assert "reward 1 (reward.txt)" in runs(harbor_root)[0]["reason"]
    assert runs(harbor_root)[0]["isolation"].endswith(",checks-docker")
    assert "answer.txt" in runs(harbor_root)[0]["diff"]
    failed = cli("run", "--root", harbor_root, "--agent", "noop", "-k", "1", "--fresh",
                 timeout=180)
    assert failed.returncode == 0, failed.stderr
    assert "found in the engine (context unchanged)" in failed.stderr  # built once, reused
    assert [r["status"] for r in runs(harbor_root)] == ["fail"]
    assert "reward 0" in runs(harbor_root)[0]["reason"]


def test_an_agent_placed_in_the_container_sees_the_image(harbor_root, cli):
    (harbor_root / "ci-eval.yaml").write_text(
        "agents:\n  inside:\n    command: [/bin/sh, -c, \"grep -c ',broken$' "
        "/opt/inventory/items.csv > answer.txt; echo \\\"$CI_EVAL_TASK_ID\\\" > seen.txt\"]\n"
        "    placement: container\n")
    result = cli("run", "--root", harbor_root, "--agent", "inside", "-k", "1", timeout=180)
    assert result.returncode == 0, result.stderr
    record = runs(harbor_root)[0]
    assert record["status"] == "pass", record["reason"]
    assert record["isolation"] == "agent-container,checks-docker"
    assert "+task-001-broken-inventory" in record["diff"]


def test_a_failed_build_is_an_error_naming_the_task(harbor_root, cli):
    dockerfile = task_dir(harbor_root) / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN echo the-build-broke && false\n")
    for command in (["verify", "--runner", "docker"], ["run", "--agent", "reference", "-k", "1"]):
        result = cli(*command, "--root", harbor_root, timeout=180)
        assert result.returncode == 2, result.stdout + result.stderr
        last = result.stderr.strip().splitlines()[-1]
        assert "task-001-broken-inventory: image build failed" in last, result.stderr
        assert "Traceback" not in result.stderr
        log = Path(last.split("(log: ")[1].rstrip(")"))
        assert "the-build-broke" in log.read_text()
    assert not (harbor_root / "results" / "task-001-broken-inventory.jsonl").exists()


def test_a_build_past_its_timeout_is_an_error(harbor_root, cli):
    folder = task_dir(harbor_root)
    metadata = json.loads((folder / "metadata.json").read_text())
    metadata["docker"]["build_timeout_seconds"] = 2
    (folder / "metadata.json").write_text(json.dumps(metadata))
    dockerfile = folder / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN sleep 30\n")
    result = cli("verify", "--root", harbor_root, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "task-001-broken-inventory: image build timed out after 2s" in result.stderr


def test_the_tag_follows_the_build_context(tmp_path):
    context = tmp_path / "environment"
    context.mkdir()
    dockerfile = context / "Dockerfile"
    dockerfile.write_text("FROM scratch\n")
    (context / "data.txt").write_text("one\n")
    first = context_hash(context, dockerfile)
    assert context_hash(context, dockerfile) == first
    (context / "data.txt").write_text("two\n")
    second = context_hash(context, dockerfile)
    (context / "data.txt").chmod(0o755)
    third = context_hash(context, dockerfile)
    dockerfile.write_text("FROM scratch\n# changed\n")
    assert len({first, second, third, context_hash(context, dockerfile)}) == 4


def test_grade_a_patch_on_docker(harbor_root, cli, tmp_path):
    right, wrong = tmp_path / "right.patch", tmp_path / "wrong.patch"
    for path, number in ((right, 13), (wrong, 12)):
        path.write_text("diff --git a/answer.txt b/answer.txt\nnew file mode 100644\n"
                        "--- /dev/null\n+++ b/answer.txt\n@@ -0,0 +1 @@\n" f"+{number}\n")
    good = cli("grade", "task-001", "--patch", right, "--root", harbor_root, "--json", timeout=120)
    assert good.returncode == 0, good.stdout + good.stderr
    assert json.loads(good.stdout)["verdict"] == "PASS"
    bad = cli("grade", "task-001", "--patch", wrong, "--root", harbor_root, timeout=120)
    assert bad.returncode == 1 and "reward 0" in bad.stdout, bad.stdout + bad.stderr
