"""Class 8 and odds and ends: PATH tricks, the agent looking for secrets and solutions, runs
looking at each other. (The fake sandbox failure is in test_anomalies.py, the full disk and the
corrupt middle line in test_results_integrity.py.)

Defences: ci_eval/run/sandbox/environment.py (an allow-listed environment, a PATH of absolute entries
only), the agent's sandbox (its own PID namespace; the repo root, runs and results hidden).
"""

from __future__ import annotations

import os

from .conftest import needs_sandbox

FAKE = "#!/bin/sh\nexit 0\n"


@needs_sandbox
def test_a_path_with_empty_and_relative_entries_runs_no_program_of_the_workspace(arena):
    """The harness's PATH starts with ':' and holds '.' and 'bin': in the workspace (the cwd of
    agent and checks) the agent leaves a bash, git and python3 that exit 0."""
    checks = ('from ci_eval.checks import main, shell_exit_zero\n'
              'main(shell_exit_zero("git --version >/dev/null && python3 -c \'import sys\' '
              '&& grep -qx hello greet.txt"))\n')
    arena.task(checks=checks)
    fake = arena.file("fake.sh", FAKE)
    agent = arena.agent(f"mkdir -p bin && for p in bash git python3 sh; do "
                        f"cp {fake} $p; cp {fake} bin/$p; chmod +x $p bin/$p; done\n")
    path = os.pathsep.join(["", os.environ["PATH"], ".", "bin", ""])
    result = arena.run("run", "-k", "1", "--agent-cmd", agent, env={"PATH": path})
    assert result.returncode == 0, result.detail()
    record = result.record()
    assert record["status"] == "fail", record
    assert "exited 1" in record["reason"], record["reason"]
    honest = arena.run("run", "-k", "1", "--out", "honest", "--agent", "reference",
                       env={"PATH": path}, out="honest")
    assert honest.record()["status"] == "pass", honest.record()


@needs_sandbox
def test_the_agent_finds_no_secret_of_the_harness(arena):
    """Its environment, its PID namespace's /proc, whatever it can read of the machine's:
    the harness's CI_EVAL_CANARY_SECRET, GITHUB_TOKEN and ANTHROPIC_API_KEY are nowhere."""
    arena.task()
    agent = arena.agent("""{
env
cat /proc/self/environ /proc/1/environ /proc/$PPID/environ | tr '\\0' '\\n'
for f in /proc/[0-9]*/environ /proc/[0-9]*/task/*/environ; do tr '\\0' '\\n' < "$f"; done
ls /proc | grep -c '^[0-9]'
tr '\\0' ' ' < /proc/1/cmdline
} > loot.txt 2>&1
true
""")
    result = arena.run("run", "-k", "1", "--agent-cmd", agent)
    record = result.record()
    assert record["status"] == "fail"
    assert "loot.txt" in record["diff"] and "CI_EVAL_WORKSPACE=" in record["diff"]
    # the canaries (checked by arena.run) found no secret in the diff; and few processes:
    count = [line for line in record["diff"].splitlines() if line[1:].isdigit()]
    assert count and int(count[0][1:]) < 10, count


@needs_sandbox
def test_the_agent_finds_no_solution_on_disk(arena):
    """grep through /tmp (where the repo is), HOME and the run's own surroundings for the
    solution canary's prefix: only the agent's own script matches."""
    arena.task()
    agent = arena.agent(f"""{{
timeout 20 grep -rIh SOLUTION-CANARY- {arena.base.parent} 2>/dev/null | head -50
grep -sIh SOLUTION-CANARY- /tmp/* "$HOME"/* | head -50
ls -la "$(dirname "$CI_EVAL_WORKSPACE")/.." 2>&1
ls "$(dirname "$CI_EVAL_WORKSPACE")/../templates" 2>&1
}} > found.txt
true
""")
    result = arena.run("run", "-k", "1", "--agent-cmd", agent, timeout=90)
    record = result.record()
    assert record["status"] == "fail"
    assert "found.txt" in record["diff"]
    assert arena.solution_canary not in record["diff"]
    listed = {line[1:] for line in record["diff"].splitlines() if line.startswith("+")}
    assert "templates" not in listed and not any(n.startswith("task-001-greet-r") for n in listed)


@needs_sandbox
def test_runs_in_flight_cannot_see_each_other(arena):
    """-j 2: each run writes a token into its workspace, waits, and looks for the other's. The search
    reads only files named token.txt: /tmp holds other tests' arenas, one with two 8 GiB sparse
    files, and reading those once made this test hang in CI."""
    arena.task()
    agent = arena.agent(f"""echo "token-$CI_EVAL_RUN-{arena.marker}" > token.txt
sleep 1
runs="$(dirname "$(dirname "$CI_EVAL_WORKSPACE")")"
{{ ls "$runs"; timeout 30 grep -rh --include=token.txt "token-" "$runs" /tmp 2>/dev/null ; }} > seen.txt 2>&1
true
""")
    result = arena.run("run", "-k", "2", "-j", "2", "--agent-cmd", agent)
    records = result.records()
    assert len(records) == 2
    for record in records:
        seen = record["diff"].split("b/seen.txt", 1)[1]
        other = 3 - record["run"]
        assert f"token-{record['run']}-{arena.marker}" in seen, f"the search did not run: {seen}"
        assert f"token-{other}-{arena.marker}" not in seen, seen
