"""Class 5: paths the agent controls (usage file, workspace, run folder, cleanup).

Defences: ci_eval/run/untrusted.read_capped (no link followed, no FIFO or device opened for a
blocking read, capped), strict_json limits; the workspace folder's identity checked before the
diff; checks helpers that never follow a link in the workspace; cleanup that follows no link
and copes with any depth.
"""

from __future__ import annotations

import os
import stat

import pytest

from .conftest import needs_sandbox

SOLVE = "echo hello > greet.txt\n"

USAGE_TRICKS = {
    "task-001-usage-fifo": ('mkfifo "$CI_EVAL_USAGE_FILE"', "usage.json: is not a regular file"),
    "task-002-usage-dev-zero": ('ln -s /dev/zero "$CI_EVAL_USAGE_FILE"', "is a symlink (not followed)"),
    "task-003-usage-digits": (
        ("python3 -c 'import sys; sys.stdout.write(\"{\\\"tokens\\\": \" + \"9\" * 5001 + \"}\")' "
         '> "$CI_EVAL_USAGE_FILE"'), "usage file is not valid JSON"),
    "task-004-usage-nesting": (  # 100k deep: over the size cap before any parsing
        ("python3 -c 'import sys; sys.stdout.write(\"[\" * 100000 + \"]\" * 100000)' "
         '> "$CI_EVAL_USAGE_FILE"'), "200000 bytes, more than the 65536-byte cap"),
    "task-007-usage-nesting-capped": (  # 32k deep, under the cap: the parser's depth limit
        ("python3 -c 'import sys; sys.stdout.write(\"[\" * 32000 + \"]\" * 32000)' "
         '> "$CI_EVAL_USAGE_FILE"'), "usage file is not valid JSON (ignored: nested too deeply)"),
    "task-005-usage-huge": ('head -c 50000000 /dev/zero | tr "\\0" " " > "$CI_EVAL_USAGE_FILE"',
                            "more than the 65536-byte cap"),
    "task-006-usage-host-link": ('ln -s {canary} "$CI_EVAL_USAGE_FILE"', "is a symlink"),
}


@pytest.fixture(scope="module")
def usage(module_arena):
    arena = module_arena
    for name in USAGE_TRICKS:
        arena.task(name)
    cases = "\n".join(f"{name}) {trick.replace('{canary}', str(arena.tmp_canary))} ;;"
                      for name, (trick, _) in USAGE_TRICKS.items())
    agent = arena.agent(f'{SOLVE}case "$CI_EVAL_TASK_ID" in\n{cases}\nesac\n')
    result = arena.run("run", "-k", "1", "-j", "2", "--agent-cmd", agent, *USAGE_TRICKS,
                       timeout=90, check_canaries=False)
    return result, arena, agent


@needs_sandbox
def test_a_hostile_usage_file_neither_hangs_nor_crashes_the_invocation(usage):
    result, arena, _ = usage
    assert result.returncode == 0, result.detail()
    assert result.seconds < 60, result.seconds
    assert result.max_rss_kib < 400 * 1024, result.max_rss_kib
    arena.check_canaries(result)


@needs_sandbox
@pytest.mark.parametrize("task", sorted(USAGE_TRICKS))
def test_a_hostile_usage_file_is_a_note_on_an_otherwise_ordinary_run(usage, task):
    result, arena, _ = usage
    record = result.by_task()[task]
    assert record["status"] == "pass", record  # it solved: the usage file changes nothing else
    assert USAGE_TRICKS[task][1] in record["reason"], record["reason"]
    assert record["tokens"] is None and record["cost_usd"] is None
    assert arena.marker not in record["reason"]  # the linked canary's content is not read


@needs_sandbox
def test_resume_and_report_read_those_runs_back(usage):
    _, arena, agent = usage
    report = arena.run("report", "--format", "json")
    assert report.returncode == 0, report.detail()
    resumed = arena.run("run", "-k", "2", "-j", "2", "--resume", "--agent-cmd", agent,
                        *USAGE_TRICKS, timeout=90)
    assert resumed.returncode == 0, resumed.detail()
    assert len(resumed.records()) == 2 * len(USAGE_TRICKS)


# --- cleanup -------------------------------------------------------------------------------------


@needs_sandbox
def test_cleanup_follows_no_link_the_agent_planted(arena):
    """Links in the run folder's overlays (release_scratch chmods work/work folders) and in the
    workspace (removed with the run folder) lead to host folders: they stay as they were."""
    precious = arena.base / "precious"
    (precious / "work" / "work").mkdir(parents=True)
    (precious / "keep.txt").write_text("keep\n")
    os.chmod(precious / "work" / "work", 0o755)
    os.chmod(precious / "work", 0o751)
    arena.canaries[precious / "keep.txt"] = b"keep\n"
    for path in (precious / "work" / "work", precious / "work", precious):
        arena.modes[path] = os.lstat(path).st_mode
    arena.task()
    agent = arena.agent(f"""run=$(dirname "$CI_EVAL_WORKSPACE")
mkdir -p "$run/overlays/evil/work" "$run/overlays/deeper"
ln -s {precious} "$run/overlays/linked"
ln -s {precious}/work "$run/overlays/evil/work/work"
ln -s {precious}/work "$run/overlays/deeper/work"
ln -s {precious} link-in-workspace
ln -s {precious} "$run/link-in-run-folder"
ln -s {precious}/keep.txt keep.txt
""")
    result = arena.run("run", "-k", "1", "--agent-cmd", agent)
    assert result.returncode == 0, result.detail()
    assert result.record()["status"] == "fail"
    assert (precious / "keep.txt").read_text() == "keep\n"


@needs_sandbox
def test_a_very_deep_folder_in_the_workspace_is_cleaned_up(arena):
    """1200 nested folders: shutil.rmtree recursed once per level (RecursionError), the run
    ended with exit 3 and left its runs folder behind, and every later `ci-eval run` on the
    machine then exited 3 while removing it."""
    arena.task()
    deep = arena.file("deep.py", """import os
fd = os.open(".", os.O_RDONLY)
for _ in range(1200):
    os.mkdir("d", dir_fd=fd)
    child = os.open("d", os.O_RDONLY, dir_fd=fd)
    os.close(fd)
    fd = child
open("greet.txt", "w").write("hello\\n")
""")
    result = arena.run("run", "-k", "1", "--agent-cmd", arena.agent(f"python3 {deep}\n"))
    assert result.returncode == 0, result.detail()
    assert result.record()["status"] == "pass", result.record()
    later = arena.run("run", "-k", "1", "--agent", "noop", "--out", "later", out="later")
    assert later.returncode == 0, later.detail()


# --- the workspace and what the checks read ------------------------------------------------------


@needs_sandbox
def test_tests_replaced_by_a_link_to_an_outside_folder(arena):
    """The checks restore tests/ and copy a hidden test in: through the link they would write
    outside the workspace (and leave the hidden test where a later agent reads it)."""
    outside = arena.base / "outside-tests"
    outside.mkdir()
    (outside / "test_calc.py").write_text("def test_add():\n    pass\n")
    arena.canaries[outside / "test_calc.py"] = (outside / "test_calc.py").read_bytes()
    hidden = "from calc import add\n\n\ndef test_hidden():\n    assert add(3, 4) == 7\n"
    checks = ('from ci_eval.checks import add_hidden_tests, main, run_tests\n'
              'hidden = add_hidden_tests("test_hidden.py")\n'
              'main(lambda: run_tests(fail_to_pass=[hidden + "::test_hidden", '
              '"tests/test_calc.py::test_add"], restore=["tests/test_calc.py"]))\n')
    arena.calc_task(checks=checks, extra={"hidden_tests/test_hidden.py": hidden})
    agent = arena.agent(f"rm -rf tests && ln -s {outside} tests\n")
    result = arena.run("run", "-k", "1", "--agent-cmd", agent)
    record = result.record()
    assert record["status"] == "fail", record
    assert sorted(p.name for p in outside.iterdir()) == ["test_calc.py"]
    assert "test_hidden" not in record["diff"]


@needs_sandbox
@pytest.mark.parametrize("how", ["link", "folder", "removed"])
def test_the_workspace_folder_swapped_for_another(arena, how):
    """A solved copy put where the workspace was: the harness would diff and score where the
    agent points. It is that run's fail; so is a workspace moved away with nothing in its place
    (it once ended the whole invocation with an internal error)."""
    arena.task()
    swap = {"link": 'ln -s "$elsewhere" "$ws"', "folder": 'mv "$elsewhere" "$ws"',
            "removed": ":"}[how]
    agent = arena.agent(f"""ws="$CI_EVAL_WORKSPACE"
elsewhere="$(dirname "$ws")/elsewhere"
cp -a "$ws" "$elsewhere" && echo hello > "$elsewhere/greet.txt"
mv "$ws" "$(dirname "$ws")/original"
{swap}
""")
    result = arena.run("run", "-k", "1", "--agent-cmd", agent)
    record = result.record()
    assert record["status"] == "fail", record
    assert "replaced its workspace folder" in record["reason"], record["reason"]


@needs_sandbox
def test_a_compared_file_linked_to_a_hidden_or_host_file_is_never_quoted(arena):
    """greet.txt as a link to the task's solution (masked from the checks), to a host file the
    checks could read, or as a hard link (refused across mounts): a fail whose reason quotes
    nothing of the target."""
    names = ["task-001-link-solution", "task-002-link-host", "task-003-hard-link",
             "task-004-fifo"]
    for name in names:
        arena.task(name)
    solution = arena.repo / "tasks" / "task-001-link-solution" / "solution" / "solve.sh"
    agent = arena.agent(f"""rm -f greet.txt
case "$CI_EVAL_TASK_ID" in
task-001-link-solution) ln -s {solution} greet.txt ;;
task-002-link-host) ln -s {arena.tmp_canary} greet.txt ;;
task-003-hard-link) ln {arena.tmp_canary} greet.txt 2> hard-link.txt || echo refused >> hard-link.txt ;;
task-004-fifo) mkfifo greet.txt ;;
esac
""")
    result = arena.run("run", "-k", "1", "-j", "2", "--agent-cmd", agent, *names, timeout=90)
    records = result.by_task()
    for name in names:
        record = records[name]
        assert record["status"] == "fail", record
        assert arena.marker not in record["reason"] and "canary" not in record["reason"], record
    assert "is a symlink (not followed)" in records["task-001-link-solution"]["reason"]
    assert "is a symlink (not followed)" in records["task-002-link-host"]["reason"]
    assert "refused" in records["task-003-hard-link"]["diff"]
    assert "not a regular file" in records["task-004-fifo"]["reason"]


@needs_sandbox
def test_file_names_no_text_tool_expects_are_recorded(arena):
    """Non-UTF-8 bytes, a newline, a forged diff header in file names; a binary file."""
    arena.task()
    agent = arena.agent(r"""echo hello > greet.txt
printf 'x\n' > "$(printf 'bad-\377-name')"
printf 'y\n' > "$(printf 'new\nline')"
printf 'z\n' > 'diff --git a b'
head -c 4096 /dev/urandom > blob.bin
""")
    result = arena.run("run", "-k", "1", "--agent-cmd", agent)
    assert result.returncode == 0, result.detail()
    record = result.record()
    assert record["status"] == "pass", record
    assert "Binary files /dev/null and b/blob.bin differ" in record["diff"]
    assert "bad-" in record["diff"] and "line" in record["diff"]
    report = arena.run("report")
    assert report.returncode == 0, report.detail()


def test_cleanup_helpers_do_not_follow_links_directly(tmp_path):
    """The same rules without a CLI around them: remove_tree on a tree holding a link to a host
    folder, and release_scratch on overlays whose work/work is a link."""
    from ci_eval.run.sandbox.views import SCRATCH, release_scratch
    from ci_eval.run.workspace.build import remove_tree

    host = tmp_path / "host"
    (host / "work").mkdir(parents=True)
    os.chmod(host / "work", 0o755)
    run = tmp_path / "run"
    (run / SCRATCH / "a" / "work").mkdir(parents=True)
    os.symlink(host / "work", run / SCRATCH / "a" / "work" / "work")
    os.symlink(host, run / "link")
    release_scratch(run)
    remove_tree(run)
    assert not run.exists()
    assert stat.S_IMODE(os.lstat(host / "work").st_mode) == 0o755
