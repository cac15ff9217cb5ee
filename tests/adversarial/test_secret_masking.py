"""Issue #18, class 5: secrets outside the agent log.

A key in an agent's `env:` was masked in its log, but once the agent wrote it into a file it
appeared raw in the record's `reason` and `diff` and in the stderr progress line. Defence: one
masking point (ci_eval/output.py: mask, masked, MaskedStream): the values of the secrets the
process knows (environment variables named like secrets, the agent's `env:` secrets) are
replaced by *** in every string ci-eval writes: records (every field), logs, files, the step
summary and outputs, the PR comment, stdout and stderr. The arena's canaries (conftest.py) look
for the key in every file under the arena and in both streams.
"""

from __future__ import annotations

from .conftest import needs_sandbox

LEAK = '''key="$MY_API_KEY"
printf '%s\\n' "$key" > greet.txt                  # the checks quote it: the reason
printf 'token = "%s"\\n' "$key" > config.py        # the diff
for i in $(seq 1 20000); do printf '%s\\n' "$key"; done > pad.txt   # past the diff's 64 KiB cap
echo "using $key"                                 # the log
printf '{"tokens": 5, "model": "%s"}' "$key" > "$CI_EVAL_USAGE_FILE"
exit 1                                            # the agent's last line in the reason
'''


def _config(arena, agent: str) -> None:
    (arena.repo / "ci-eval.yaml").write_text(
        "agents:\n"
        f"  leaky:\n    command: {agent}\n    env: [MY_API_KEY]\n"
        f"  plain:\n    command: {agent}\n    env: [MY_SETTING]\n")


@needs_sandbox
def test_a_key_the_agent_writes_into_files_is_masked_everywhere(arena):
    key = "sk-live-" + arena.marker + "a1b2c3d4e5f6"
    arena.secrets["MY_API_KEY"] = key  # the canaries now look for it everywhere
    arena.task()
    _config(arena, arena.agent(LEAK))
    result = arena.run("run", "-k", "1", "--agent", "leaky")
    record = result.record()
    assert record["status"] == "fail", record
    assert "found '***'" in record["reason"] and "agent exited 1 (using ***)" in record["reason"]
    assert '+token = "***"' in record["diff"] and "+***\n" in record["diff"]
    assert record["diff_truncated"] is True
    assert "using ***" in (result.out / "logs" / "task-001-greet" / "1.log").read_text()
    # the progress line: the reason's start, cut to fit a terminal, masked
    assert "run 1: fail (" in result.stderr and "agent exited 1 (using ***)" in result.stderr

    comment = arena.run("compare", "--format", "markdown", "--allow-agent-mismatch")
    assert "found '***'" in comment.stdout, comment.stdout
    summary = arena.base / "summary.md"
    gate = arena.run("gate", "--no-comment", "--no-history", "--allow-agent-mismatch",
                     env={"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_ACTIONS": "true"})
    assert gate.returncode in (0, 1), gate.detail()
    assert "found '***'" in summary.read_text()
    # arena.run checked every file under the arena and both streams for the key


@needs_sandbox
def test_the_honest_twin_a_value_that_is_no_secret_is_recorded_as_written(arena):
    """The same agent given a setting whose name is not a secret's: its value is data, kept."""
    value = "plain-setting-" + arena.marker
    arena.task()
    _config(arena, arena.agent(LEAK.replace("MY_API_KEY", "MY_SETTING")))
    record = arena.run("run", "-k", "1", "--agent", "plain", env={"MY_SETTING": value}).record()
    assert f"found '{value}'" in record["reason"] and f'+token = "{value}"' in record["diff"]


def test_masking_reaches_fragments_at_a_cut_and_every_string_of_a_record():
    from ci_eval import output

    secret = "sk-test-0123456789abcdef"
    output.add_secrets([secret, "short"])  # too short to mask: ordinary words stay
    try:
        assert output.mask(f"a {secret} b short") == "a *** b short"
        assert output.mask("... " + secret[:10], cut_end=True) == "... ***"
        assert output.mask(secret[-7:] + " rest", cut_start=True) == "*** rest"
        assert output.mask("ends sk-", cut_end=True) == "ends sk-"  # 3 characters: kept
        assert output.masked({"reason": secret, "diff": [f"+{secret}"], secret: 1}) == {
            "reason": "***", "diff": ["+***"], "***": 1}
    finally:
        output._secrets.discard(secret)
