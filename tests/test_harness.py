"""The run loop for real: workspaces, agents as subprocesses, isolation, checks, results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from harness_helpers import cli, live_pids_with, read_lines, write_task

from ci_eval.run.sandbox import isolation


def test_reference_passes_noop_fails_and_results_have_one_line_per_run(tmp_path):
    write_task(tmp_path)
    proc = cli("run", "--agent", "reference", "-k", "3", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "3/3 valid runs passed" in proc.stdout
    lines = read_lines(tmp_path / "results" / "task-001-greet.jsonl")
    assert sorted(r["run"] for r in lines) == [1, 2, 3]
    assert all(r["status"] == "pass" and r["agent"] == "reference" for r in lines)
    assert lines[0]["diff"].count("+hello") == 1
    assert lines[0]["tokens"] is None  # no usage reported: null, not 0

    proc = cli("run", "-k", "2", "--agent", "noop", "--out", "noop", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = read_lines(tmp_path / "noop" / "task-001-greet.jsonl")
    assert [r["status"] for r in lines] == ["fail", "fail"]
    assert "expected 'hello', found 'bye'" in lines[0]["reason"]


def test_agent_env_prompt_and_usage(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import json, os, pathlib\n"
        "prompt = pathlib.Path(os.environ['CI_EVAL_PROMPT_FILE'])\n"
        "ws = pathlib.Path(os.environ['CI_EVAL_WORKSPACE'])\n"
        "assert ws == pathlib.Path.cwd(), (ws, os.getcwd())\n"
        "assert not prompt.is_relative_to(ws)\n"
        "assert 'SECRET_NOT_ALLOWED' not in os.environ\n"
        "(ws / 'greet.txt').write_text('hello\\n' if 'hello' in prompt.read_text() else 'x')\n"
        "pathlib.Path(os.environ['CI_EVAL_USAGE_FILE']).write_text(json.dumps("
        "{'input_tokens': 100, 'output_tokens': 20, 'cost_usd': 0.5, 'run': os.environ['CI_EVAL_RUN']}))\n"
    )
    env = {**os.environ, "SECRET_NOT_ALLOWED": "x"}
    proc = cli("run", "-k", "2", "--agent-cmd", f"{sys.executable} {agent}", "--json",
               cwd=repo, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = read_lines(repo / "results" / "task-001-greet.jsonl")
    assert [r["status"] for r in lines] == ["pass", "pass"], lines
    assert {r["tokens"] for r in lines} == {120}
    task = json.loads(proc.stdout)["tasks"][0]
    assert task["total_cost_usd"] == 1.0 and task["mean_tokens"] == 120


def _alive(pid: int) -> bool:
    """Running or sleeping; a zombie awaiting its reaper (this sandbox's init) is dead."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize("isolated", [True, False])
def test_timeout_kills_the_agent_and_its_sleeping_child(tmp_path, isolated):
    repo = tmp_path / "repo"
    write_task(repo)
    marker = f"{time.time_ns() % 100000}.{os.getpid()}"
    pidfile = tmp_path / "child.pid"
    agent = tmp_path / "agent.sh"
    agent.write_text(f"sleep 1{marker} &\necho $! > {pidfile}\nsleep 2{marker}\n")
    env = {**os.environ}
    if not isolated:
        env["CI_EVAL_NO_ISOLATION"] = "1"
    proc = cli("run", "-k", "1", "--timeout", "1", "--agent-cmd", f"bash {agent}",
               cwd=repo, env=env)
    lines = read_lines(repo / "results" / "task-001-greet.jsonl")
    assert lines[0]["status"] == "timeout", lines
    assert lines[0]["passed"] is False
    assert "ran out of time" in lines[0]["reason"]
    assert proc.returncode == 0  # a timeout is a valid (failing) run, not an infrastructure error
    assert live_pids_with(marker) == []
    if not isolated:  # pids inside a PID namespace are not the host's
        assert not _alive(int(pidfile.read_text()))


SNOOP_AGENT = r'''
import os, sys, tempfile
root, out, task_name = sys.argv[1], sys.argv[2], sys.argv[3]
secrets = ("checks.py", "solve.sh", "metadata.json", "solution", "negatives")
found, seen = [], 0
def walk(top):
    global seen
    for dirpath, dirnames, filenames in os.walk(top):
        seen += 1
        for name in filenames + dirnames:
            if name in secrets:
                found.append(os.path.join(dirpath, name))
walk(root)
walk(tempfile.gettempdir())
d = os.getcwd()
while d != "/":
    d = os.path.dirname(d)
    for name in os.listdir(d):
        if name in secrets or name == "tasks":
            found.append(os.path.join(d, name))
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            walk(f"/proc/{pid}/root{root}")
            walk(f"/proc/{pid}/cwd")
        except OSError:
            pass
rc = os.system(f"umount {root} 2>/dev/null")
if rc == 0:
    walk(root)
    found.append("umount succeeded")
# /tmp stays readable (other tests' tasks are there): keep what would be this test's
found = [f for f in found if task_name in f or f.startswith(root) or f == "umount succeeded"]
with open(out, "w") as fh:  # in the workspace: the only place whose writes last
    fh.write("\n".join(found) + f"\nSCANNED {seen}\n")
with open("greet.txt", "w") as fh:
    fh.write("hello\n")
'''


@pytest.mark.skipif(not isolation.detect().agent_sandboxed, reason="no mount namespace here")
def test_agent_searching_for_checks_and_solutions_finds_nothing(tmp_path):
    root = tmp_path / "repo"
    name = f"task-001-secret-{os.getpid()}-{time.time_ns() % 10**6}"
    write_task(root, name, negatives={"wrong.sh": "echo no > greet.txt\n"})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "snoop.py").write_text(SNOOP_AGENT)
    proc = cli("run", "-k", "2", "-j", "2", "--agent-cmd",
               f"{sys.executable} {outside / 'snoop.py'} {root} findings.txt {name}", cwd=root)
    assert proc.returncode == 0, proc.stderr
    record = read_lines(root / "results" / f"{name}.jsonl")[0]
    assert not record["diff_truncated"]
    section = record["diff"].split("+++ b/findings.txt\n", 1)[1].split("\ndiff --git", 1)[0]
    lines = [line[1:] for line in section.splitlines() if line.startswith("+")]
    assert int(lines[-1].split()[-1]) > 1  # the search did run
    ours = [line for line in lines[:-1] if name in line or line.startswith(str(root))
            or line == "umount succeeded"]
    assert ours == []
    records = read_lines(root / "results" / f"{name}.jsonl")
    assert [r["status"] for r in records] == ["pass"] * 2
    assert {r["isolation"] for r in records} == {"agent-sandbox,checks-sandbox"}


def test_agent_rewriting_workspace_cannot_change_which_checks_run(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    agent = tmp_path / "cheat.sh"
    agent.write_text(
        "echo 'import sys; sys.exit(0)' > checks.py\n"
        "mkdir -p ci_eval && echo 'raise SystemExit(0)' > ci_eval/__init__.py\n"
        "mkdir -p ci_eval/checks && echo 'raise SystemExit(0)' > ci_eval/checks/__init__.py\n"
        "echo 'import sys; sys.exit(0)' > sitecustomize.py\n"
    )
    proc = cli("run", "-k", "1", "--agent-cmd", f"bash {agent}", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    record = read_lines(repo / "results" / "task-001-greet.jsonl")[0]
    assert record["status"] == "fail", record
    assert "checks.py" in record["diff"]  # the agent did write them


READS_AGENT_OUTPUT = "open('greet.txt').read()\n"


@pytest.mark.parametrize("body, expected", [
    (READS_AGENT_OUTPUT + "raise RuntimeError('checks blew up')\n",
     "CRASH: RuntimeError: checks blew up (checks.py:2)"),
    ("import time\ntime.sleep(60)\n", "checks timed out after 1s"),
    (READS_AGENT_OUTPUT + "import sys\nsys.exit(4)\n", "checks.py exited 4"),
    ("import os\nos._exit(0)\n", "checks ended without a verdict (exit 0)"),
    # unsandboxed: inside its PID namespace the checks process is init, which SIGKILL from
    # within cannot kill
    ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
     "checks ended without a verdict (killed by signal 9)"),
])
def test_checks_that_crash_hang_or_die_after_agent_code_ran_fail_the_run(tmp_path, body,
                                                                         expected):
    """What happens while the agent's work is judged is the agent's result: a fail with the
    reason, never an error that is retried and left out of the pass rate."""
    write_task(tmp_path, checks=body, metadata={"timeout_seconds": {"checks": 1}})
    env = {**os.environ, "CI_EVAL_NO_ISOLATION": "1"} if "SIGKILL" in body else None
    proc = cli("run", "-k", "1", "--max-attempts", "2", "--agent", "noop", cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # a valid (failing) run
    record = read_lines(tmp_path / "results" / "task-001-greet.jsonl")[0]
    assert record["status"] == "fail" and record["passed"] is False
    assert expected in record["reason"]
    assert record["attempt"] == 1 and record["retried_errors"] == []


def test_a_bare_assert_in_checks_is_a_fail_with_its_message(tmp_path):
    write_task(tmp_path, checks="x = 2\nassert x == 3, f'x was {x}'\n")
    proc = cli("run", "-k", "1", "--agent", "noop", cwd=tmp_path)
    record = read_lines(tmp_path / "results" / "task-001-greet.jsonl")[0]
    assert record["status"] == "fail", proc.stderr
    assert record["reason"] == "FAIL: AssertionError: x was 2 (checks.py:2)"


def test_missing_required_command_stops_the_run_before_any_agent_run(tmp_path):
    write_task(tmp_path, metadata={"requires": ["ci-eval-no-such-tool"]})
    proc = cli("run", "--agent", "reference", "-k", "2", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "requires ci-eval-no-such-tool" in proc.stderr and "no run started" in proc.stderr
    assert not (tmp_path / "results" / "task-001-greet.jsonl").exists()


def test_missing_agent_command_stops_the_run_before_any_agent_run(tmp_path):
    write_task(tmp_path)
    proc = cli("run", "-k", "1", "--agent-cmd", "ci-eval-no-such-agent --flag", cwd=tmp_path)
    assert proc.returncode == 2
    assert "'ci-eval-no-such-agent' is not on PATH; no run started" in proc.stderr
    assert not (tmp_path / "results" / "task-001-greet.jsonl").exists()


def test_setup_sh_and_patches_build_the_workspace(tmp_path):
    task = write_task(tmp_path, files={"base.txt": "one\n"},
                      checks='from ci_eval.checks import file_equals, main\n'
                             'main(file_equals("base.txt", "one\\ntwo\\n"), file_equals("made.txt", "hello\\n"))\n',
                      solution="echo hello > made.txt\n")
    (task / "repo-state" / "setup.sh").write_text("echo made-by-setup > setup-ran.txt\n")
    (task / "repo-state" / "0001-two.patch").write_text(
        "--- a/base.txt\n+++ b/base.txt\n@@ -1 +1,2 @@\n one\n+two\n")
    proc = cli("run", "--agent", "reference", "-k", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    record = read_lines(tmp_path / "results" / "task-001-greet.jsonl")[0]
    assert record["status"] == "pass", record
    assert "setup-ran" not in record["diff"] and "two" not in record["diff"]  # part of the initial state


def test_kill_9_then_resume_records_each_run_exactly_once(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    write_task(repo, "task-002-greet-again")
    agent = tmp_path / "slow.sh"
    agent.write_text("sleep 0.3\necho hello > greet.txt\n")
    args = [sys.executable, "-m", "ci_eval", "run", "-k", "6", "-j", "2", "--agent-cmd", f"bash {agent}"]
    proc = subprocess.Popen(args, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = repo / "results" / "task-001-greet.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_text().splitlines()) >= 2:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with results.open("a") as handle:  # what a crash in the middle of a write leaves
        handle.write('{"run": 6, "task": "task-001-gr')
    resumed = cli("run", "-k", "6", "-j", "2", "--resume", "--agent-cmd", f"bash {agent}", cwd=repo)
    assert resumed.returncode == 0, resumed.stderr
    assert "dropped a torn last line" in resumed.stderr
    for task in ("task-001-greet", "task-002-greet-again"):
        runs = [r["run"] for r in read_lines(repo / "results" / f"{task}.jsonl")]
        assert sorted(runs) == [1, 2, 3, 4, 5, 6], (task, runs)
    # the killed run's temp folder was removed by the next run
    assert not list(Path(tempfile.gettempdir()).glob(f"ci-eval-run-{proc.pid}-*"))


def test_existing_results_need_resume_or_fresh(tmp_path):
    write_task(tmp_path)
    assert cli("run", "--agent", "reference", "-k", "1", cwd=tmp_path).returncode == 0
    again = cli("run", "--agent", "reference", "-k", "1", cwd=tmp_path)
    assert again.returncode == 2
    assert "--resume" in again.stderr and "Traceback" not in again.stderr
    fresh = cli("run", "--agent", "reference", "-k", "2", "--fresh", cwd=tmp_path)
    assert fresh.returncode == 0
    assert len(read_lines(tmp_path / "results" / "task-001-greet.jsonl")) == 2


@pytest.mark.parametrize("args, message", [
    (["run", "--agent", "reference", "-k", "0"], "-k: expected a whole number >= 1, got 0"),
    (["run", "--agent", "reference", "-k", "many"], "-k: expected a whole number >= 1, got 'many'"),
    (["run", "--agent", "reference", "-j", "-3"], "expected a whole number >= 1"),
    (["run", "--agent", "reference", "--timeout", "0"], "expected seconds > 0"),
    (["run", "--agent", "reference", "task-999"], "unknown task 'task-999'"),
    (["run", "--agent", "nobody"], "unknown agent 'nobody'"),
    (["run", "--agent-cmd", ""], "expected a command"),
    (["run", "--agent", "reference", "--root", "does-not-exist"], "does-not-exist"),
    (["report", "--results", "nowhere"], "nowhere: results folder not found"),
    (["report", "--format", "yaml"], "invalid choice: 'yaml'"),
    (["verify", "nope"], "unknown task 'nope'"),
    (["run", "--agent", "reference", "--confirm-against", "missing.json"], "missing.json"),
])
def test_bad_cli_values_exit_2_with_one_line(tmp_path, args, message):
    write_task(tmp_path)
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 or "usage:" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_report_rejects_a_foreign_line_and_renders_junit(tmp_path):
    write_task(tmp_path)
    assert cli("run", "--agent", "reference", "-k", "2", cwd=tmp_path).returncode == 0
    junit = cli("report", "--format", "junit", "--output", "out.xml", cwd=tmp_path)
    assert junit.returncode == 0 and "<testcase" in (tmp_path / "out.xml").read_text()
    with (tmp_path / "results" / "task-001-greet.jsonl").open("a") as handle:
        handle.write(json.dumps({"run": 3, "task": "task-042-other", "status": "pass",
                                 "passed": True, "agent": "reference"}) + "\n")
    proc = cli("report", cwd=tmp_path)
    assert proc.returncode == 2
    assert "task-001-greet.jsonl:3: task:" in proc.stderr


def test_verify_accepts_a_valid_task_and_rejects_checks_that_already_pass(tmp_path):
    write_task(tmp_path, negatives={"hallo.sh": "echo hallo > greet.txt\n"})
    ok = cli("verify", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "ok      task-001-greet: 3 states" in ok.stdout
    write_task(tmp_path, "task-002-already-passes", files={"greet.txt": "hello\n"})
    bad = cli("verify", "--json", cwd=tmp_path)
    assert bad.returncode == 1
    report = json.loads(bad.stdout)
    invalid = [t for t in report["tasks"] if not t["valid"]]
    assert [t["task"] for t in invalid] == ["task-002-already-passes"]
    assert "untouched repo-state: checks pass, expected fail" in invalid[0]["problems"]


def test_verify_flags_negative_that_passes_and_nondeterministic_checks(tmp_path):
    write_task(tmp_path, negatives={"actually-right.sh": "echo hello > greet.txt\n"})
    # each check run has a fresh workspace: pass in the first of a state's two, fail in the other
    flaky = ("import os, sys\n"
             "sys.exit(0 if os.environ['CI_EVAL_WORKSPACE'].endswith('-0') else 1)\n")
    write_task(tmp_path, "task-002-flaky", checks=flaky)
    proc = cli("verify", "-j", "1", cwd=tmp_path)
    assert proc.returncode == 1
    assert "negatives/actually-right.sh: checks pass, expected fail" in proc.stdout
    assert "nondeterministic checks" in proc.stdout


def test_confirm_against_reruns_a_breaching_task_in_stages(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    write_task(repo, "task-002-steady")
    from ci_eval.tasks.load import load_tasks

    hashes = {t.id: t.prompt_hash for t in load_tasks(repo)}
    entry = {"passes": 5, "runs": 5, "pass_rate": 1.0, "avg_tokens": None,
             "avg_wall_seconds": None, "recorded": "2026-11-01", "aspirational": False}
    baseline = {"schema_version": 1, "agent": "cmd:bash " + str(tmp_path / "agent.sh"),
                "tasks": {tid: {**entry, "prompt_hash": h,
                                "snapshots": [{"recorded": "2026-11-01", "passes": 5, "runs": 5}]}
                          for tid, h in hashes.items()}}
    (repo / "baseline.json").write_text(json.dumps(baseline))
    agent = tmp_path / "agent.sh"  # task-001 fails its runs 1 and 2; task-002 always passes
    agent.write_text('case "$CI_EVAL_TASK_ID-$CI_EVAL_RUN" in task-001-greet-[12]) ;; '
                     '*) echo hello > greet.txt ;; esac\n')
    proc = cli("run", "-k", "5", "-j", "4", "--agent-cmd", f"bash {agent}",
               "--confirm-against", "baseline.json", "--confirm-stages", "5,10,15", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    breached = read_lines(repo / "results" / "task-001-greet.jsonl")
    steady = read_lines(repo / "results" / "task-002-steady.jsonl")
    # 3/5 breaches 1.0 - 0.30; 8/10 is too close to call; 13/15 is the last stage
    assert sorted(r["run"] for r in breached) == list(range(1, 16))
    assert len(steady) == 5  # 5/5 is clear of the line
    assert "confirming with 10 runs" in proc.stderr and "confirming with 15 runs" in proc.stderr


def test_named_agent_from_config_sees_only_allowed_secrets_and_usage_setting(tmp_path):
    repo = tmp_path / "repo"
    write_task(repo)
    agent = tmp_path / "agent.sh"
    agent.write_text(
        'if [ "$ALLOWED_KEY" = yes ] && [ -z "${OTHER_KEY:-}" ]; then echo hello > greet.txt; fi\n'
        'echo \'{"tokens": 7, "cost_usd": 0.25}\' > "$CI_EVAL_USAGE_FILE"\n')
    (repo / "ci-eval.yaml").write_text(
        "default_agent: counted\n"
        "agents:\n"
        f"  counted:\n    command: bash {agent}\n    env: [ALLOWED_KEY]\n"
        f"  uncounted:\n    command: bash {agent}\n    env: [ALLOWED_KEY]\n    usage: none\n")
    env = {**os.environ, "ALLOWED_KEY": "yes", "OTHER_KEY": "leak"}
    assert cli("run", "-k", "1", cwd=repo, env=env).returncode == 0  # the default_agent
    assert cli("run", "-k", "1", "--agent", "uncounted", "--out", "u", cwd=repo,
               env=env).returncode == 0
    counted = read_lines(repo / "results" / "task-001-greet.jsonl")[0]
    uncounted = read_lines(repo / "u" / "task-001-greet.jsonl")[0]
    assert counted["status"] == "pass" and counted["agent"] == "counted"
    assert (counted["tokens"], counted["cost_usd"]) == (7, 0.25)
    assert uncounted["status"] == "pass" and uncounted["tokens"] is None


TESTED_TASK_CHECKS = (
    "from ci_eval.checks import main, run_tests\n"
    "main(lambda: run_tests(fail_to_pass=['tests/test_calc.py::test_add'],"
    " restore=['tests/test_calc.py', 'conftest.py']))\n"
)
CHEATS = {
    "pytest.py": (
        "import sys\n"
        "for arg in sys.argv[1:]:\n"
        "    if '::' in arg:\n"
        "        print('PASSED', arg)\n"
        "sys.exit(0)\n"),
    "conftest.py": (
        "import pytest\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    report = outcome.get_result()\n"
        "    report.outcome = 'passed'\n"),
    "tests/conftest.py": (
        "import pytest\n"
        "@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n"
        "    outcome.get_result().outcome = 'passed'\n"),
    "pytest.ini": "[pytest]\naddopts = -p no:python\n",
}


def _write_tested_task(repo: Path) -> None:
    write_task(repo, checks=TESTED_TASK_CHECKS, files={
        "calc.py": "def add(a, b):\n    return a - b\n",
        "tests/test_calc.py": "from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n",
    }, solution="sed -i 's/a - b/a + b/' calc.py\n")


@pytest.mark.parametrize("cheat", sorted(CHEATS))
def test_agent_cannot_fake_test_outcomes_from_the_workspace(tmp_path, cheat):
    repo = tmp_path / "repo"
    _write_tested_task(repo)
    cheat_file = tmp_path / "cheat.txt"
    cheat_file.write_text(CHEATS[cheat])
    agent = tmp_path / "cheat.sh"
    agent.write_text(f"mkdir -p $(dirname {cheat}) && cp {cheat_file} {cheat}\n")
    proc = cli("run", "-k", "1", "--agent-cmd", f"bash {agent}", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    record = read_lines(repo / "results" / "task-001-greet.jsonl")[0]
    assert record["status"] == "fail", record
    assert cheat in record["diff"]


def test_the_honest_fix_passes_the_checks_the_cheats_fail(tmp_path):
    """The same task and checks as the cheats above (one run for all of them: the fix is the
    same for each)."""
    repo = tmp_path / "repo"
    _write_tested_task(repo)
    assert cli("run", "--agent", "reference", "-k", "1", "--out", "ref", cwd=repo).returncode == 0
    assert read_lines(repo / "ref" / "task-001-greet.jsonl")[0]["status"] == "pass"


def test_checks_see_only_the_variables_ci_eval_yaml_allows_in_run_and_verify(tmp_path):
    checks = ("import os, sys\n"
              "from ci_eval.checks import file_equals, main\n"
              "assert os.environ.get('CHECKS_TOKEN') == 'ok' and 'OTHER_TOKEN' not in os.environ\n"
              "main(file_equals('greet.txt', 'hello\\n'))\n")
    write_task(tmp_path, checks=checks)
    env = {**os.environ, "CHECKS_TOKEN": "ok", "OTHER_TOKEN": "leak"}
    assert cli("verify", cwd=tmp_path, env=env).returncode == 1  # not allowed yet: checks crash
    (tmp_path / "ci-eval.yaml").write_text("checks:\n  env: [CHECKS_TOKEN]\n")
    verified = cli("verify", cwd=tmp_path, env=env)
    assert verified.returncode == 0, verified.stdout
    assert cli("run", "--agent", "reference", "-k", "1", cwd=tmp_path, env=env).returncode == 0
    assert read_lines(tmp_path / "results" / "task-001-greet.jsonl")[0]["status"] == "pass"
