"""The team's harness through the real Claude Code and codex CLIs (pinned in tests/real_clis.py)
against the loopback fake model (tests/fake_models) in its marker mode: the fake answers with
the right edit only when a rule of the repo's CLAUDE.md / AGENTS.md is in the request. So a pass
means the harness reached the model; `harness: []` fails; a PR that drops the rule is a
regression that `compare` explains by naming CLAUDE.md; a PostToolUse hook of
.claude/settings.json runs in the sandbox; no harness file is in the recorded diff.

Skipped (loudly; a failure with CI_EVAL_NO_SKIPS=1) where npm is missing, as tests/test_real_clis.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import fake_models
import pytest
import real_clis

from ci_eval.run.sandbox import isolation

KEY = "sk-fake-0123456789abcdef"
MARKER = "HARNESS-RULE-7F3A"
AGENT_TIMEOUT = 240
HOOK = '#!/bin/sh\necho "hook ran in $CLAUDE_PROJECT_DIR" >> "$CLAUDE_PROJECT_DIR/hook-ran.txt"\n'
SETTINGS = {"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/mark.sh'}]}]}}


@pytest.fixture(scope="module")
def cli_bins() -> dict[str, str]:
    why = real_clis.missing()
    if why:
        pytest.skip(f"real agent CLIs not installable here: {why}")
    return real_clis.install()


def _repo(root: Path, files: dict[str, str]) -> Path:
    real_clis.write_answer_task(root, AGENT_TIMEOUT)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _config(root: Path, preset: str, model: str, url: str, harness=None) -> None:
    entry = {"preset": preset, "model": model, "base_url": url}
    if harness is not None:
        entry["harness"] = harness
    (root / "ci-eval.yaml").write_text(json.dumps({"agents": {"team": entry}}) + "\n")


def _records(root: Path) -> list[dict]:
    path = root / "results" / "task-001-answer.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _run(cli, root: Path, bins: dict, program: str, key: str, *args: str):
    env = {"PATH": f"{bins[program]}{os.pathsep}{os.environ['PATH']}", key: KEY}
    return cli("run", "--agent", "team", "--max-attempts", "1", "--fresh", *args, cwd=root,
               env=env, timeout=AGENT_TIMEOUT * 2 + 120)


def test_claude_code_gets_claude_md_and_its_hook_and_a_dropped_rule_is_named(cli_bins, tmp_path,
                                                                             cli):
    root = _repo(tmp_path / "repo", {
        "CLAUDE.md": f"# Team rules\n\n- {MARKER}: answers are written as digits.\n",
        ".claude/settings.json": json.dumps(SETTINGS), ".claude/hooks/mark.sh": HOOK})
    os.chmod(root / ".claude/hooks/mark.sh", 0o755)
    with fake_models.FakeModelServer("solve", marker=MARKER) as fake:
        _config(root, "claude-code", "claude-sonnet-4-5", fake.url)
        ran = _run(cli, root, cli_bins, "claude", "ANTHROPIC_API_KEY", "-k", "3", "-j", "3")
        assert ran.returncode == 0, ran.stderr[-2000:]
        assert ("the claude-code preset's defaults; 3 file(s)" in ran.stderr
                and ".claude/hooks/mark.sh, .claude/settings.json, CLAUDE.md" in ran.stderr)
        records = _records(root)
        assert [r["status"] for r in records] == ["pass"] * 3, [r["reason"] for r in records]
        sandboxed = isolation.detect().agent_sandboxed
        for record in records:
            assert "hook-ran.txt" in record["diff"]  # the PostToolUse hook ran after the Bash call
            assert record["isolation"].startswith("agent-sandbox") == sandboxed  # in the sandbox
            assert "CLAUDE.md" not in record["diff"] and ".claude/" not in record["diff"]
        assert cli("baseline", "update", "--all", cwd=root).returncode == 0

        # The same repo without its harness: the rule never reaches the model.
        _config(root, "claude-code", "claude-sonnet-4-5", fake.url, harness=[])
        ran = _run(cli, root, cli_bins, "claude", "ANTHROPIC_API_KEY", "-k", "1")
        assert "harness: none" in ran.stderr
        (record,) = _records(root)
        assert record["status"] == "fail" and "hook-ran.txt" not in record["diff"]

        # A PR that drops the rule from CLAUDE.md: a regression, explained by the file.
        _config(root, "claude-code", "claude-sonnet-4-5", fake.url)
        (root / "CLAUDE.md").write_text("# Team rules\n\n- Be brief.\n")
        ran = _run(cli, root, cli_bins, "claude", "ANTHROPIC_API_KEY", "-k", "3", "-j", "3")
        assert [r["status"] for r in _records(root)] == ["fail"] * 3
    compared = cli("compare", "--format", "markdown", cwd=root)
    assert compared.returncode == 1, compared.stdout
    assert "harness changed since the baseline: CLAUDE.md modified" in compared.stdout


def test_codex_gets_agents_md(cli_bins, tmp_path, cli):
    root = _repo(tmp_path / "repo", {"AGENTS.md": f"# Agents\n\n{MARKER}: digits only.\n"})
    with fake_models.FakeModelServer("solve", marker=MARKER) as fake:
        _config(root, "codex", "gpt-5-codex", f"{fake.url}/v1")
        ran = _run(cli, root, cli_bins, "codex", "OPENAI_API_KEY", "-k", "1")
        assert "the codex preset's defaults; 1 file(s)" in ran.stderr, ran.stderr[-2000:]
        (record,) = _records(root)
        assert record["status"] == "pass", record["reason"]
        assert "AGENTS.md" not in record["diff"]
        _config(root, "codex", "gpt-5-codex", f"{fake.url}/v1", harness=[])
        _run(cli, root, cli_bins, "codex", "OPENAI_API_KEY", "-k", "1")
        (record,) = _records(root)
        assert record["status"] == "fail", record["reason"]


@pytest.mark.parametrize("preset, program, model, key, suffix, files", [
    ("gemini", "gemini", "gemini-2.5-pro", "GEMINI_API_KEY", "",
     {"GEMINI.md": f"# Rules\n\n{MARKER}: digits only.\n"}),
    # aider sends the files its .aider.conf.yml `read:` names (read-only) with the request
    ("aider", "aider", "anthropic/claude-sonnet-4-20250514", "ANTHROPIC_API_KEY", "",
     {".aider.conf.yml": "read: [CONVENTIONS.md]\n",
      "CONVENTIONS.md": f"# Conventions\n\n{MARKER}: digits only.\n"}),
    ("qwen-code", "qwen", "qwen3-coder-plus", "OPENAI_API_KEY", "/v1",
     {"QWEN.md": f"# Rules\n\n{MARKER}: digits only.\n"}),
    ("qwen-code", "qwen", "qwen3-coder-plus", "OPENAI_API_KEY", "/v1",
     {"AGENTS.md": f"# Agents\n\n{MARKER}: digits only.\n"}),
    ("opencode", "opencode", "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "/v1",
     {"AGENTS.md": f"# Agents\n\n{MARKER}: digits only.\n"}),
    # OpenHands loads AGENTS.md as a skill into its system prompt
    ("openhands", "openhands", "openai/gpt-4o", "LLM_API_KEY", "/v1",
     {"AGENTS.md": f"# Agents\n\n{MARKER}: digits only.\n"}),
])
def test_each_preset_gets_its_project_files(cli_bins, tmp_path, cli, preset, program, model,
                                            key, suffix, files):
    if program not in cli_bins:  # a pip CLI whose Python this machine lacks (real_clis)
        pytest.skip(f"LOUD SKIP: {program} not installed: no Python "
                    f"{real_clis.PIP_PYTHONS.get(program)} here")
    root = _repo(tmp_path / "repo", files)
    with fake_models.FakeModelServer("solve", marker=MARKER) as fake:
        _config(root, preset, model, f"{fake.url}{suffix}")
        ran = _run(cli, root, cli_bins, program, key, "-k", "1")
        assert f"the {preset} preset's defaults; {len(files)} file(s)" in ran.stderr, \
            ran.stderr[-2000:]
        (record,) = _records(root)
        assert record["status"] == "pass", record["reason"]
        assert not any(name in record["diff"] for name in files)
        _config(root, preset, model, f"{fake.url}{suffix}", harness=[])
        _run(cli, root, cli_bins, program, key, "-k", "1")
        (record,) = _records(root)
        assert record["status"] == "fail", record["reason"]


@pytest.mark.parametrize("preset, program, model, key, suffix, files", [
    # Cline puts AGENTS.md and .clinerules (a file or a folder of rules) into its system prompt
    ("cline", "cline", "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "/v1",
     {".clinerules/answers.md": f"# Rules\n\n{MARKER}: digits only.\n"}),
    ("cline", "cline", "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "/v1",
     {"AGENTS.md": f"# Agents\n\n{MARKER}: digits only.\n"}),
    # Copilot CLI reads .github/copilot-instructions.md (and AGENTS.md, CLAUDE.md, GEMINI.md)
    ("copilot", "copilot", "claude-sonnet-4-5", "COPILOT_PROVIDER_API_KEY", "",
     {".github/copilot-instructions.md": f"# Instructions\n\n{MARKER}: digits only.\n"}),
])
def test_cline_and_copilot_get_their_project_files(cli_bins, tmp_path, cli, preset, program,
                                                   model, key, suffix, files):
    test_each_preset_gets_its_project_files(cli_bins, tmp_path, cli, preset, program, model,
                                            key, suffix, files)
