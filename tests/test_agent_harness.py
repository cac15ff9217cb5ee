"""The agent's harness (agents/harness.py, run/workspace/harness_files.py): declared or defaulted,
refused with one line when it reaches the answers or leaves the repo, laid into every run,
taken back before the diff and the checks, recorded with each run and the baseline, and named
by compare when it changed. Real runs through the CLI with command agents; the real Claude Code
and codex CLIs are in tests/test_real_cli_harness.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ci_eval.agents.config import AgentConfig, preset_agent
from ci_eval.agents.harness import (
    HarnessEntry,
    agent_harness,
    collect_harness,
    parse_harness,
)
from ci_eval.errors import UserError
from ci_eval.verdict.harness_changes import (
    HarnessRecord,
    changes_line,
    changes_note,
    harness_changes,
    harness_digest,
    recorded_harness,
)

# A command agent that solves the task only when the repo's CLAUDE.md rule reached its workspace.
RULE_AGENT = """\
import os
rule = open("CLAUDE.md").read() if os.path.exists("CLAUDE.md") else ""
open("answer.txt", "w").write("42\\n" if "ANSWER-42" in rule else "41\\n")
"""


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _config(root: Path, agent: dict, name: str = "mine") -> None:
    (root / "ci-eval.yaml").write_text(json.dumps({"agents": {name: agent}}) + "\n")


def _records(root: Path, task: str = "task-001-example") -> list[dict]:
    path = root / "results" / f"{task}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- declaring and collecting --------------------------------------------------------------------


@pytest.mark.parametrize("value, needle", [
    ("CLAUDE.md", "expected a list of repo paths"),
    (["/etc/passwd"], "absolute"),
    (["~/.claude"], "absolute"),
    (["../x"], "'..'"),
    (["a/../../x"], "'..'"),
    (["."], "repo root itself"),
    ([""], "expected a relative path"),
    ([3], "expected a relative path"),
    ([{"home": ".claude"}], "expected {path: REPO_PATH}"),
    ([{"path": "x", "other": 1}], "expected {path: REPO_PATH}"),
    ([{"path": "x", "home": "../y"}], "'..'"),
    (["x", "./x"], "listed twice"),
])
def test_a_bad_harness_list_is_refused_naming_the_entry(value, needle):
    with pytest.raises(UserError) as caught:
        parse_harness(value, "ci-eval.yaml", "agents.mine.harness")
    assert needle in str(caught.value) and "agents.mine.harness" in str(caught.value)


def test_entries_are_normalised_and_home_entries_kept_apart():
    entries = parse_harness(["./CLAUDE.md", ".claude/", {"path": "skills", "home": ".claude/skills"}],
                            "ci-eval.yaml", "h")
    assert entries == (HarnessEntry("CLAUDE.md"), HarnessEntry(".claude"),
                       HarnessEntry("skills", ".claude/skills"))


def test_collecting_walks_folders_without_git_or_pycache_and_digests_each_file(tmp_path):
    _write(tmp_path, {"CLAUDE.md": "rule\n", ".claude/settings.json": "{}",
                      ".claude/hooks/x.sh": "#!/bin/sh\n", ".claude/__pycache__/a.pyc": "x",
                      ".claude/.git/HEAD": "x", "skills/s/SKILL.md": "skill"})
    os.chmod(tmp_path / ".claude/hooks/x.sh", 0o755)
    harness = collect_harness(parse_harness(["CLAUDE.md", ".claude", {"path": "skills",
                                                                      "home": ".claude/skills"}],
                                            "c", "h"), tmp_path)
    placed = {(f.key, f.place, f.dest, f.mode) for f in harness.files}
    assert placed == {("CLAUDE.md", "workspace", "CLAUDE.md", 0o644),
                      (".claude/settings.json", "workspace", ".claude/settings.json", 0o644),
                      (".claude/hooks/x.sh", "workspace", ".claude/hooks/x.sh", 0o755),
                      ("skills/s/SKILL.md", "home", ".claude/skills/s/SKILL.md", 0o644)}
    again = collect_harness(harness.entries[::-1], tmp_path)
    assert again.digest == harness.digest  # order of the entries does not matter
    os.chmod(tmp_path / ".claude/hooks/x.sh", 0o644)  # a hook no longer executable is a change
    assert collect_harness(harness.entries, tmp_path).digest != harness.digest


@pytest.mark.parametrize("setup, entry, needle", [
    (lambda r: _write(r, {"tasks/task-001-x/solution/solve.sh": "x"}), "tasks/task-001-x",
     "inside tasks/"),
    (lambda r: _write(r, {"archive/a": "x"}), "archive", "inside archive/"),
    (lambda r: None, "CLAUDE.md", "does not exist"),
    (lambda r: os.symlink("/etc/passwd", r / "CLAUDE.md"), "CLAUDE.md", "absolute path"),
    (lambda r: (_write(r, {".claude/a": "x"}), os.symlink("../../outside", r / ".claude/l")),
     ".claude", "symlink leaving the repo"),
    (lambda r: (_write(r, {".claude/a": "x", "tasks/t/s": "x"}),
                os.symlink("../tasks/t/s", r / ".claude/answers")), ".claude", "symlink into tasks/"),
    (lambda r: (_write(r, {"real/CLAUDE.md": "x"}), os.symlink("real", r / "via")),
     "via/CLAUDE.md", "goes through the symlink via"),
    (lambda r: _write(r, {".git/config": "x"}), ".git/config", "inside a .git folder"),
    (lambda r: os.mkfifo(r / "pipe"), "pipe", "not a regular file"),
])
def test_a_harness_that_reaches_the_answers_or_leaves_the_repo_is_refused(tmp_path, setup, entry,
                                                                         needle):
    setup(tmp_path)
    with pytest.raises(UserError) as caught:
        collect_harness([HarnessEntry(entry)], tmp_path, config_path="ci-eval.yaml",
                        where="agents.mine.harness")
    assert needle in str(caught.value), caught.value
    assert "agents.mine.harness[0]" in str(caught.value) and entry in str(caught.value)


def test_a_link_inside_the_repo_is_kept_as_a_link(tmp_path):
    _write(tmp_path, {".claude/CLAUDE.md": "x"})
    os.symlink(".claude/CLAUDE.md", tmp_path / "CLAUDE.md")
    (found,) = collect_harness([HarnessEntry("CLAUDE.md")], tmp_path).files
    assert found.link == ".claude/CLAUDE.md" and found.size == 0


def test_a_harness_over_its_cap_is_refused(tmp_path, monkeypatch):
    import ci_eval.agents.harness as harness_module

    _write(tmp_path, {f"agent/f{i}.py": "x" for i in range(6)})
    monkeypatch.setattr(harness_module, "MAX_FILES", 5)
    with pytest.raises(UserError, match="over the harness cap"):
        collect_harness([HarnessEntry("agent")], tmp_path)
    deep = tmp_path / "deep"
    deep.joinpath(*["d"] * 70).mkdir(parents=True)
    with pytest.raises(UserError, match="64 folders deep"):
        collect_harness([HarnessEntry("deep")], tmp_path)
    monkeypatch.setattr(harness_module, "MAX_FILES", 100)
    monkeypatch.setattr(harness_module, "MAX_BYTES", 3)
    with pytest.raises(UserError, match="over its cap"):
        collect_harness([HarnessEntry("agent")], tmp_path)


def test_preset_defaults_take_only_what_the_repo_holds(tmp_path):
    _write(tmp_path, {"CLAUDE.md": "x", ".claude/settings.json": "{}", "AGENTS.md": "y",
                      ".aider.conf.yml": "read: [CONVENTIONS.md, docs/style.md]\n",
                      "CONVENTIONS.md": "c", "mini.yaml": "agent: {}", ".goosehints": "g"})
    keys = {name: [f.key for f in agent_harness(preset_agent(name), tmp_path).files]
            for name in ("claude-code", "codex", "gemini", "aider", "goose")}
    assert keys == {"claude-code": [".claude/settings.json", "CLAUDE.md"],
                    "codex": ["AGENTS.md"], "gemini": [],
                    "aider": [".aider.conf.yml", "CONVENTIONS.md"],  # docs/style.md is absent
                    "goose": [".goosehints"]}
    mini = AgentConfig("mini", None, preset="mini-swe-agent", args=("-c", "mini.yaml"))
    assert [f.key for f in agent_harness(mini, tmp_path).files] == ["mini.yaml"]
    assert agent_harness(AgentConfig("cmd", ("true",)), tmp_path).files == ()
    declared_none = AgentConfig("c", None, preset="claude-code", harness=())
    assert agent_harness(declared_none, tmp_path).files == ()


# --- provenance: pure -----------------------------------------------------------------------------


def test_changes_are_named_with_whole_folders_once():
    old = {"CLAUDE.md": "a", ".claude/settings.json": "s", ".claude/skills/sums/SKILL.md": "k",
           ".claude/skills/sums/x.py": "x", ".claude/skills/keep/SKILL.md": "k"}
    new = {"CLAUDE.md": "b", ".claude/settings.json": "s", ".claude/skills/keep/SKILL.md": "k",
           "AGENTS.md": "n"}
    assert harness_changes(old, new) == [".claude/skills/sums/ removed", "AGENTS.md added",
                                         "CLAUDE.md modified"]
    line = changes_line(old, harness_digest(old), new, harness_digest(new))
    assert line == ("harness changed since the baseline: .claude/skills/sums/ removed, "
                    "AGENTS.md added, CLAUDE.md modified")
    assert changes_line(old, harness_digest(old), old, harness_digest(old)) == ""
    assert "digest only" in changes_line(None, "a" * 64, new, "b" * 64)


def test_what_a_baseline_records_and_what_compare_says():
    files = {"CLAUDE.md": "1" * 64}
    digest = harness_digest(files)
    assert recorded_harness({digest}, files) == (HarnessRecord(digest, files), "")
    assert recorded_harness({digest}, {"other": "2" * 64}) == (HarnessRecord(digest), "")
    assert recorded_harness(set(), files) == (None, "")
    record, note = recorded_harness({digest, "f" * 64}, files)
    assert record is None and "2 different harnesses" in note
    assert changes_note(HarnessRecord(digest, files), {digest}, files) == ""
    changed = {"CLAUDE.md": "3" * 64}
    assert changes_note(HarnessRecord(digest, files), {harness_digest(changed)}, changed) == (
        "harness changed since the baseline: CLAUDE.md modified")
    assert changes_note(None, {digest}, files) == ""


# --- through `ci-eval run` ------------------------------------------------------------------------


def test_a_command_agent_runs_from_its_harness_folder_with_its_siblings(repo_root, make_task, cli):
    make_task(repo_root)
    _write(repo_root, {"agent/helpers.py": "def answer():\n    return '42\\n'\n",
                       "agent/main.py": "import os\nfrom helpers import answer\n"
                       "print('dir', os.environ['CI_EVAL_HARNESS_DIR'])\n"
                       "open('answer.txt', 'w').write(answer())\n"
                       "open(os.environ['CI_EVAL_HARNESS_DIR'] + '/agent/helpers.py', 'a')\n"})
    _config(repo_root, {"command": ["python3", "agent/main.py"], "harness": ["agent/"]})
    ran = cli("run", "--agent", "mine", "-k", "1", cwd=repo_root)
    assert ran.returncode == 0, ran.stderr
    assert "harness (declared in ci-eval.yaml; 2 file(s)" in ran.stderr
    assert "agent/helpers.py, agent/main.py" in ran.stderr
    (record,) = _records(repo_root)
    assert record["status"] == "pass", record["reason"]
    if record["isolation"].startswith("agent-sandbox"):
        # the sandbox shows the copy read-only: the write at its end fails (the checks pass)
        assert record["agent_exit_code"] != 0
        assert "ermission" in record["reason"] or "ead-only" in record["reason"]
    assert "agent/" not in record["diff"] and "answer.txt" in record["diff"]
    assert record["harness"] == agent_harness(
        AgentConfig("mine", None, harness=(HarnessEntry("agent"),)), repo_root).digest


def test_the_rule_reaches_the_run_and_harness_none_leaves_it_out(repo_root, make_task, cli):
    make_task(repo_root)
    _write(repo_root, {"CLAUDE.md": "Rule: ANSWER-42\n", "bot.py": RULE_AGENT})
    _config(repo_root, {"command": ["python3", "bot.py"], "harness": ["CLAUDE.md", "bot.py"]})
    ran = cli("run", "--agent", "mine", "-k", "1", cwd=repo_root)
    assert ran.returncode == 0, ran.stderr
    (record,) = _records(repo_root)
    assert record["status"] == "pass" and "CLAUDE.md" not in record["diff"]
    _config(repo_root, {"command": ["python3", "bot.py"], "harness": []})
    ran = cli("run", "--agent", "mine", "-k", "1", "--fresh", cwd=repo_root)
    assert "harness: none" in ran.stderr
    (record,) = _records(repo_root)
    assert record["status"] == "fail"


def test_an_agent_rewriting_its_harness_has_the_edit_discarded_and_shown(repo_root, make_task, cli):
    checks = ('import os\nfrom ci_eval.checks import failed, file_equals, main, passed\n'
              'seen = [p for p in ("CLAUDE.md", ".claude") if os.path.lexists(p)]\n'
              'main(file_equals("answer.txt", "42\\n"),\n'
              '     failed(f"harness in view: {seen}") if seen else passed())\n')
    make_task(repo_root, checks=checks)
    _write(repo_root, {"CLAUDE.md": "Rule: ANSWER-42\n", ".claude/settings.json": "{}",
                       "bot.py": RULE_AGENT + "open('CLAUDE.md', 'w').write('mine now')\n"
                       "import os, shutil\nshutil.rmtree('.claude')\n"
                       "os.symlink('/etc', '.claude')\n"})
    _config(repo_root, {"command": ["python3", "bot.py"],
                        "harness": ["CLAUDE.md", ".claude", "bot.py"]})
    ran = cli("run", "--agent", "mine", "-k", "1", cwd=repo_root)
    assert ran.returncode == 0, ran.stderr
    (record,) = _records(repo_root)
    assert record["status"] == "pass", record["reason"]
    assert ("the agent changed its harness (discarded before the checks): "
            ".claude/settings.json replaced (.claude is no longer a folder), CLAUDE.md modified"
            ) in record["reason"]
    assert "CLAUDE.md" not in record["diff"] and ".claude" not in record["diff"]
    assert os.path.isdir("/etc")  # the link was removed, not followed
    shown = cli("show", "task-001-example", cwd=repo_root)
    assert "CLAUDE.md modified" in shown.stdout and "harness " in shown.stdout


def test_home_entries_go_into_the_runs_own_home(repo_root, make_task, cli):
    make_task(repo_root)
    _write(repo_root, {"agent-home/skills/s/SKILL.md": "ANSWER-42",
                       "bot.py": "import os\nt = open(os.path.expanduser("
                       "'~/.claude/skills/s/SKILL.md')).read()\n"
                       "open('answer.txt', 'w').write('42\\n' if 'ANSWER-42' in t else '')\n"})
    _config(repo_root, {"command": ["python3", "bot.py"],
                        "harness": ["bot.py", {"path": "agent-home/skills",
                                               "home": ".claude/skills"}]})
    ran = cli("run", "--agent", "mine", "-k", "1", cwd=repo_root)
    assert ran.returncode == 0, ran.stderr
    (record,) = _records(repo_root)
    assert record["status"] == "pass", record["reason"]
    assert "(~/.claude/skills/s/SKILL.md)" in ran.stderr


@pytest.mark.parametrize("setup, harness, needles", [
    (lambda r: _write(r, {"tasks/task-001-example/solution/x": "x"}),
     ["tasks/task-001-example"], ["agents.mine.harness[0]", "inside tasks/"]),
    (lambda r: os.symlink("/etc", r / "outside"), ["outside"],
     ["agents.mine.harness[0]", "outside", "leaves the repo"]),
    (lambda r: (_write(r, {".claude/a": "x"}), os.symlink("../../x", r / ".claude/out")),
     [".claude"], ["agents.mine.harness[0]", ".claude/out", "symlink leaving the repo"]),
    (lambda r: _write(r, {"README.md": "x"}), ["README.md"],
     ["repo-state/README.md", "also a harness file"]),
    (lambda r: None, ["nothing-here"], ["agents.mine.harness[0]", "does not exist"]),
])
def test_a_refused_harness_is_one_line_exit_2_before_any_run(repo_root, make_task, cli,
                                                             assert_bad_input, setup, harness,
                                                             needles):
    make_task(repo_root)
    setup(repo_root)
    _config(repo_root, {"command": ["true"], "harness": harness})
    ran = cli("run", "--agent", "mine", "-k", "1", cwd=repo_root)
    assert_bad_input(ran, *needles)
    assert not (repo_root / "results" / "task-001-example.jsonl").exists()
    validated = cli("validate", cwd=repo_root)
    assert validated.returncode == 2 and needles[-1] in validated.stderr


def test_a_home_entry_with_the_hosts_home_is_refused(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root)
    _write(repo_root, {"skills/a": "x"})
    _config(repo_root, {"command": ["true"], "home": "host",
                        "harness": [{"path": "skills", "home": ".claude/skills"}]})
    assert_bad_input(cli("run", "--agent", "mine", "-k", "1", cwd=repo_root), "needs home: run")


def test_removing_the_rule_is_a_regression_that_names_claude_md(repo_root, make_task, cli):
    make_task(repo_root)
    _write(repo_root, {"CLAUDE.md": "Rule: ANSWER-42\n", "bot.py": RULE_AGENT})
    _config(repo_root, {"command": ["python3", "bot.py"], "harness": ["CLAUDE.md", "bot.py"]})
    assert cli("run", "--agent", "mine", "-k", "3", cwd=repo_root).returncode == 0
    updated = cli("baseline", "update", "--all", cwd=repo_root)
    assert updated.returncode == 0, updated.stderr
    baseline = json.loads((repo_root / "baseline.json").read_text())
    assert set(baseline["harness"]["files"]) == {"CLAUDE.md", "bot.py"}
    (repo_root / "CLAUDE.md").write_text("Rule: be brief\n")  # the PR drops the rule
    assert cli("run", "--agent", "mine", "-k", "3", "--fresh", cwd=repo_root).returncode == 0
    compared = cli("compare", cwd=repo_root)
    assert compared.returncode == 1, compared.stdout
    assert "harness changed since the baseline: CLAUDE.md modified" in compared.stdout
    markdown = cli("compare", "--format", "markdown", cwd=repo_root)
    assert "harness changed since the baseline: CLAUDE.md modified" in markdown.stdout


# --- init -------------------------------------------------------------------------------------------


def test_init_writes_the_repos_harness_for_the_preset_and_names_it(tmp_path, cli):
    _write(tmp_path, {"CLAUDE.md": "rule", ".claude/settings.json": "{}", "AGENTS.md": "codex"})
    ran = cli("init", "--agent", "claude-code", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    config = (tmp_path / "ci-eval.yaml").read_text()
    assert "agents:\n  claude-code:\n    preset: claude-code\n    harness:\n      - CLAUDE.md\n" \
           "      - .claude\n" in config
    assert "Your agent is the claude-code tool plus its harness: CLAUDE.md, .claude" in ran.stdout
    assert "AGENTS.md" not in config  # codex's file, not Claude Code's
    assert cli("validate", cwd=tmp_path).returncode == 0


def test_init_without_harness_files_says_where_it_looked(tmp_path, cli):
    ran = cli("init", "--agent", "codex", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "harness:" not in (tmp_path / "ci-eval.yaml").read_text().replace("# harness", "")
    assert "No harness files found (looked for AGENTS.md, AGENTS.override.md, .codex)" in \
        " ".join(ran.stdout.split())


# --- what is recorded: baseline.json and results lines ------------------------------------------


def test_baseline_keeps_the_harness_and_refuses_a_bad_one(tmp_path):
    from ci_eval.verdict.baseline import Baseline, dumps_baseline, parse_baseline

    files = {"CLAUDE.md": "a" * 64, ".claude/settings.json": "b" * 64}
    baseline = Baseline(agent="claude", harness=HarnessRecord(harness_digest(files), files))
    data = json.loads(dumps_baseline(baseline))
    assert data["harness"] == {"digest": harness_digest(files),
                               "files": {".claude/settings.json": "b" * 64, "CLAUDE.md": "a" * 64}}
    assert parse_baseline(data).harness == baseline.harness
    assert "harness" not in json.loads(dumps_baseline(Baseline(agent="x")))
    for bad in ({"digest": "nothex"}, {"files": {}},
                {"digest": "a" * 64, "files": {f"f{i}": "a" * 64 for i in range(201)}}):
        with pytest.raises(UserError, match="harness"):
            parse_baseline({**data, "harness": bad}, "baseline.json")


def test_a_results_line_with_a_bad_harness_digest_is_refused_naming_the_line(tmp_path):
    from ci_eval.results.records import check_record

    record = {"task": "task-001-x", "run": 1, "status": "pass", "passed": True, "agent": "a",
              "harness": "a" * 64}
    path = tmp_path / "task-001-x.jsonl"
    assert check_record(record, path, 1) == record
    assert check_record({**record, "harness": None}, path, 1)
    for bad in ("A" * 64, "a" * 63, 7):
        with pytest.raises(UserError) as caught:
            check_record({**record, "harness": bad}, path, 3)
        assert "task-001-x.jsonl:3: harness: expected a sha256 digest" in str(caught.value)


# --- taking the harness back: what the agent did to it --------------------------------------------


def test_taking_back_names_every_kind_of_change_and_removes_only_the_harness(tmp_path):
    from ci_eval.run.workspace.harness_files import lay_copy, lay_home, lay_workspace, take_back

    repo, workspace = tmp_path / "repo", tmp_path / "ws"
    _write(repo, {"a.md": "a", "b.md": "b", "c.md": "c", "d/e.md": "e", "f.sh": "f",
                  "g.md": "g", "home-skill/s.md": "s"})
    os.chmod(repo / "f.sh", 0o755)
    os.symlink("a.md", repo / "link")
    harness = collect_harness(parse_harness(["a.md", "b.md", "c.md", "d", "f.sh", "g.md", "link",
                                             {"path": "home-skill", "home": ".x/skills"}],
                                            "c", "h"), repo)
    _write(workspace, {"task-file.txt": "mine"})
    lay_workspace(harness, workspace)
    assert (workspace / "link").readlink() == Path("a.md") and os.access(workspace / "f.sh",
                                                                          os.X_OK)
    home = tmp_path / "home"
    _write(home, {".x/skills/s.md": "the preset's"})
    lay_home(harness, home)
    assert (home / ".x/skills/s.md").read_text() == "s"
    copy = lay_copy(harness, tmp_path / "copy")
    assert (copy / "d/e.md").read_text() == "e" and (copy / "d/e.md").stat().st_mode & 0o777 == 0o444
    assert (copy / "f.sh").stat().st_mode & 0o777 == 0o555
    with pytest.raises(Exception, match="already holds a.md"):
        lay_workspace(harness, workspace)
    (workspace / "a.md").write_text("changed")
    (workspace / "b.md").unlink()
    (workspace / "c.md").unlink()
    (workspace / "c.md").mkdir()
    (workspace / "c.md" / "inner").write_text("x")
    os.chmod(workspace / "f.sh", 0o644)
    (workspace / "link").unlink()
    os.symlink("/etc/passwd", workspace / "link")
    (workspace / "d" / "new.md").write_text("the agent's own")
    assert take_back(harness, workspace) == ["a.md modified", "b.md removed",
                                             "c.md replaced by a folder", "f.sh modified",
                                             "link link changed"]
    remaining = sorted(str(p.relative_to(workspace)) for p in workspace.rglob("*"))
    assert remaining == ["d", "d/new.md", "task-file.txt"]  # the agent's new file is its work


# --- a PR that changes nothing the verdict depends on ---------------------------------------------


def test_which_changes_can_change_the_verdict():
    from ci_eval.verdict.relevance import idle_reason, relevant_changes

    watched = ["CLAUDE.md", ".claude", "tasks", "ci-eval.yaml", "baseline.json",
               ".github/workflows"]
    assert relevant_changes(["README.md", "src/x.py", "CLAUDE.md.bak", ".claudex"], watched) == []
    assert relevant_changes(["README.md", ".claude/skills/a/SKILL.md", "tasks/task-001-x/p.md",
                             ".github/workflows/eval.yml", "CLAUDE.md"], watched) == [
        ".claude/skills/a/SKILL.md", ".github/workflows/eval.yml", "CLAUDE.md",
        "tasks/task-001-x/p.md"]
    line = idle_reason([f"doc{i}.md" for i in range(7)])
    assert line.startswith("no agent run: this pull request changes nothing the verdict depends")
    assert line.endswith("it changes doc0.md, doc1.md, doc2.md, doc3.md, doc4.md and 2 more")


def test_what_the_default_agents_verdict_depends_on(tmp_path):
    from ci_eval.agents.harness_of import watched_paths

    assert watched_paths(tmp_path, "baseline.json") is None  # no default agent: run everything
    (tmp_path / "ci-eval.yaml").write_text(json.dumps({"default_agent": "claude", "agents": {
        "claude": {"preset": "claude-code"}}}))
    watched = watched_paths(tmp_path, "baseline.json")
    # the preset's files whether or not the repo holds them: a PR adding CLAUDE.md changes it
    assert {"CLAUDE.md", ".claude", ".mcp.json", "tasks", "ci-eval.yaml", "baseline.json",
            ".github/workflows"} <= set(watched)
    (tmp_path / "ci-eval.yaml").write_text(json.dumps({"default_agent": "mine", "agents": {
        "mine": {"command": ["python3", "bot.py"]}}}))
    assert watched_paths(tmp_path, "baseline.json") is None  # a command agent without harness:
    (tmp_path / "ci-eval.yaml").write_text(json.dumps({"default_agent": "mine", "agents": {
        "mine": {"command": ["python3", "agent/main.py"], "harness": ["agent"]}}}))
    assert "agent" in watched_paths(tmp_path, "baseline.json")


def test_a_link_in_the_tasks_tree_where_the_harness_goes_is_never_followed(tmp_path):
    from ci_eval.run.workspace.build import WorkspaceError
    from ci_eval.run.workspace.harness_files import lay_workspace

    _write(tmp_path / "repo", {".claude/settings.json": "{}"})
    harness = collect_harness([HarnessEntry(".claude")], tmp_path / "repo")
    (tmp_path / "ws").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "ws" / ".claude")
    with pytest.raises(WorkspaceError, match=r"\.claude is a symlink where the harness lays"):
        lay_workspace(harness, tmp_path / "ws")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_run_summaries_record_the_harness_and_the_dashboard_marks_a_change(repo_root, make_task,
                                                                            cli):
    from ci_eval.render.dashboard import dashboard_data
    from ci_eval.results.history import load_history

    make_task(repo_root)
    _write(repo_root, {"CLAUDE.md": "Rule: ANSWER-42\n", "bot.py": RULE_AGENT})
    _config(repo_root, {"command": ["python3", "bot.py"], "harness": ["CLAUDE.md", "bot.py"]})
    for day, rule in (("2026-12-01", "Rule: ANSWER-42\n"), ("2026-12-02", "Rule: ANSWER-42\n"),
                      ("2026-12-03", "Rule: ANSWER-42, briefly\n")):
        (repo_root / "CLAUDE.md").write_text(rule)
        assert cli("run", "--agent", "mine", "-k", "1", "--fresh", cwd=repo_root).returncode == 0
        recorded = cli("history", "record", "--date", day, "--history", "history", cwd=repo_root)
        assert recorded.returncode == 0, recorded.stderr
    summaries = load_history(repo_root / "history")
    assert set(summaries[0].harness["files"]) == {"CLAUDE.md", "bot.py"}
    runs = dashboard_data(summaries)["runs"]
    assert [r["harness_changed"] for r in runs] == [False, False, True]
    assert runs[0]["harness"] == summaries[0].harness["digest"][:12]
