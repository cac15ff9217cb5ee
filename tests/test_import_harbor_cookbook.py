"""`ci-eval import harbor` on real Harbor tasks (issue 36 items 3-6): seven recipes of
harbor-framework's cookbook, vendored unchanged with their licence (tests/fixtures/harbor-cookbook/
SOURCE.md). The multi-step recipe is skipped with its reason and the six others imported; every
key and file the import does not carry over is named; execute bits are kept.

Their test.sh installs curl and uv at verification time, which ci-eval's checks container has
no network for: the import says so; with CI_EVAL_VERIFIER_TOOLS four of them verify as imported
(tests/test_docker_harbor_cookbook.py; docs/docker.md "Harbor tasks")."""

from __future__ import annotations

import json
from pathlib import Path

from ci_eval.run.docker.harbor import parse_reward, passed

COOKBOOK = Path(__file__).parent / "fixtures" / "harbor-cookbook"


def test_the_cookbook_imports_and_names_what_it_drops(cli, repo_root):
    result = cli("import", "harbor", COOKBOOK, "--into", repo_root, "--json",
                 "--today", "2026-12-03")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    imported = {item["source_id"]: item for item in report["imported"]}
    assert sorted(imported) == ["dns-blacklisting", "mcp-tools", "multi-container",
                                "multi-reward", "simple-task", "skills"]
    [skipped] = report["skipped"]
    assert skipped["source_id"] == "multi-step" and "[[steps]]" in skipped["reason"]

    def warned(source_id: str, text: str) -> bool:
        return any(text in w for w in imported[source_id]["warnings"])

    for source_id in imported:
        assert warned(source_id, "tests/test.sh installs tools when it runs"), source_id
    assert warned("mcp-tools", "[environment].mcp_servers 'mcp-server' (streamable-http) not "
                  "given to the agent")
    assert warned("mcp-tools", "its server is the sidecar mcp-server (started")
    assert not warned("mcp-tools", "compose sidecars are not started")
    assert warned("mcp-tools", "sidecars' images may switch users")
    assert warned("skills", "[environment].skills_dir '/skills' not supported")
    assert not warned("dns-blacklisting", "ENTRYPOINT")  # started, scripts exec'd: as Harbor
    assert not warned("simple-task", "not supported")
    folder = repo_root / "tasks" / imported["mcp-tools"]["task"]
    assert (folder / "solution" / "solve.sh").stat().st_mode & 0o777 == 0o755
    assert (folder / "tests" / "test_outputs.py").stat().st_mode & 0o111 == 0
    metadata = json.loads((folder / "metadata.json").read_text())
    assert metadata["docker"]["memory_mb"] == 2048 and metadata["runner"] == "docker"
    [sidecar] = metadata["docker"]["services"]  # its compose file's mcp-server, as Harbor starts it
    assert sidecar["name"] == "mcp-server" and sidecar["build"] == {
        "context": "environment/mcp-server", "dockerfile": "Dockerfile"}
    assert sidecar["healthcheck"]["test"][0] == "python" and sidecar["healthcheck"]["retries"] == 15
    validated = cli("validate", cwd=repo_root)
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_the_multi_reward_recipe_s_rewards_read_as_harbor_writes_them():
    """multi-reward's test.sh writes {'correctness': c, 'performance': p} (no "reward" key)."""
    assert "json.dump({'correctness'" in (COOKBOOK / "multi-reward" / "tests" / "test.sh").read_text()
    both, one = b'{"correctness": 1, "performance": 1}', b'{"correctness": 1, "performance": 0}'
    assert passed(parse_reward(None, both)[0]) and not passed(parse_reward(None, one)[0])


def test_a_lone_folder_that_cannot_be_imported_is_the_error(cli, repo_root):
    result = cli("import", "harbor", COOKBOOK / "multi-step", "--into", repo_root)
    assert result.returncode == 2 and "[[steps]]" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and list((repo_root / "tasks").iterdir()) == []
