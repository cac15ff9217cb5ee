"""Isolation is typed data end to end: run/sandbox/isolation.Isolation writes its label and
results/notices.parse_isolation reads it back (old results' labels included), the notices of every
report come from the parsed value, never from substrings; the sandbox's view goes to the launcher
as a sandbox_program.View, not as an option list."""

from __future__ import annotations

import itertools
import json

import pytest

from ci_eval.results.notices import (
    ChecksIsolation,
    RecordedIsolation,
    label_notices,
    parse_isolation,
)
from ci_eval.run.sandbox.isolation import Isolation, unsandboxed_checks_argv
from ci_eval.run.sandbox.requests import agent_request
from ci_eval.run.sandbox.sandbox_program import View

NO_AGENT = "agents ran without a sandbox: solutions were readable by the agent"
NO_CHECKS = ("checks ran without a sandbox: agent code they ran could read the harness's files "
             "and environment")
ONLINE = "checks ran with network access"


@pytest.mark.parametrize("agent, checks, user",
                         list(itertools.product([True, False], ChecksIsolation, [True, False])))
def test_every_isolation_reads_back_as_the_value_it_recorded(agent, checks, user):
    isolation = Isolation(agent, checks, user)
    assert parse_isolation(isolation.label) == isolation.recorded == RecordedIsolation(agent,
                                                                                       checks)


@pytest.mark.parametrize("label, expected", [
    # every label a version of ci-eval has written (0f6d1cc had no checks-sandbox yet)
    ("agent-sandbox,checks-sandbox", RecordedIsolation(True, ChecksIsolation.SANDBOX)),
    ("agent-sandbox,checks-offline", RecordedIsolation(True, ChecksIsolation.OFFLINE)),
    ("agent-unisolated,checks-online", RecordedIsolation(False, ChecksIsolation.ONLINE)),
    ("agent-unisolated,checks-sandbox", RecordedIsolation(False, ChecksIsolation.SANDBOX)),
])
def test_recorded_labels_parse(label, expected):
    assert parse_isolation(label) == expected


@pytest.mark.parametrize("label", [
    "", "agent-sandbox", "checks-sandbox,agent-sandbox", "agent-sandbox,checks-sandbox,extra",
    "agent-sandboxed,checks-online", "xagent-unisolated,checks-online", 7, None, ["agent-sandbox"],
])
def test_what_is_not_a_label_parses_to_none(label):
    assert parse_isolation(label) is None


def test_notices_follow_the_parsed_values():
    assert label_notices({"agent-sandbox,checks-sandbox"}) == ()
    assert label_notices({"agent-sandbox,checks-sandbox", "agent-unisolated,checks-online"}) == (
        NO_AGENT, NO_CHECKS, ONLINE)
    assert label_notices({"agent-sandbox,checks-offline"}) == (NO_CHECKS,)
    # a substring is no longer enough: a label that only contains a known word is unreadable
    (notice,) = label_notices({"not-agent-unisolated,checks-online-ish"})
    assert notice.startswith("runs recorded an isolation this version cannot read "
                             "('not-agent-unisolated,checks-online-ish')")


def test_only_checks_without_a_sandbox_get_the_offline_prefix():
    assert unsandboxed_checks_argv(Isolation(True, ChecksIsolation.OFFLINE, False), ["x"]) == [
        "unshare", "--net", "x"]
    assert unsandboxed_checks_argv(Isolation(True, ChecksIsolation.OFFLINE, True), ["x"]) == [
        "unshare", "--user", "--map-root-user", "--net", "x"]
    assert unsandboxed_checks_argv(Isolation(True, ChecksIsolation.ONLINE, True), ["x"]) == ["x"]


def _record(run: int, isolation: str) -> dict:
    return {"agent": "noop", "run": run, "task": "task-001-x", "status": "pass", "passed": True,
            "k": 3, "isolation": isolation}


def test_report_tells_what_old_and_unreadable_labels_mean(repo_root, main_cli):
    """Through the CLI: the notices of a results folder mixing an old unsandboxed label, a
    sandboxed one and a label nobody wrote (an edited results line)."""
    results = repo_root / "results"
    results.mkdir()
    labels = ["agent-sandbox,checks-sandbox", "agent-unisolated,checks-online", "sandboxed!"]
    (results / "task-001-x.jsonl").write_text("".join(
        json.dumps(_record(run, label)) + "\n" for run, label in enumerate(labels, 1)))
    proc = main_cli("report", "-k", "3", cwd=repo_root)
    assert proc.returncode == 0, proc.stderr
    shown = proc.stdout + proc.stderr
    for notice in (NO_AGENT, NO_CHECKS, ONLINE, "cannot read ('sandboxed!')"):
        assert notice in shown, shown


def test_the_sandbox_view_goes_to_the_launcher_as_data(tmp_path):
    """The view a request carries reads back equal from its JSON, and the program's options
    give the same View."""
    request = agent_request(Isolation(True, ChecksIsolation.SANDBOX), ["true"],
                            repo_root=tmp_path / "repo", runs_base=tmp_path,
                            run_dir=tmp_path / "run",
                            hide=(str(tmp_path / "results"),), home="/home/someone")
    view = request.view
    assert View.from_json(json.loads(json.dumps(view.to_json()))) == view
    assert str((tmp_path / "run").resolve()) in view.writable and view.home == "/home/someone"
    argv = [arg for name in ("private", "tmpfs", "hide", "keep", "writable", "mask")
            for path in getattr(view, name) for arg in (f"--{name}", path)]
    argv += ["--home", view.home, "--scratch", view.scratch, "--status-fd", "9", "--", "cmd", "-x"]
    assert View.from_argv(argv) == (view, 9, ["cmd", "-x"])


@pytest.mark.parametrize("data", [
    ["--hide", "/x"],  # the old form: an option list
    {"private": ["/tmp"]},  # fields missing
    {**View().to_json(), "hide": "/x"},  # a string where a list of paths goes
    {**View().to_json(), "home": ["/x"]},
    {**View().to_json(), "extra": []},
])
def test_the_launcher_refuses_what_is_not_a_view(data):
    with pytest.raises(ValueError):
        View.from_json(data)


@pytest.mark.parametrize("placement", ["host", "container"])
@pytest.mark.parametrize("agent_sandboxed", [True, False])
def test_the_docker_runners_labels_read_back_without_a_false_alarm(placement, agent_sandboxed):
    """Issue 37: every docker run's report said its isolation could not be read."""
    from ci_eval.run.runners import isolation_label

    class Docker:
        name = "docker"

    label = isolation_label(Docker(), Isolation(agent_sandboxed, ChecksIsolation.SANDBOX),
                            placement)
    parsed = parse_isolation(label)
    assert parsed is not None and parsed.label == label
    assert parsed.checks is ChecksIsolation.DOCKER
    expected = () if agent_sandboxed or placement == "container" else (NO_AGENT,)
    assert label_notices({label}) == expected


def test_a_report_of_docker_runs_carries_no_isolation_alarm(tmp_path):
    from harness_helpers import cli, write_task

    write_task(tmp_path)
    results = tmp_path / "results"
    results.mkdir()
    record = {"run": 1, "task": "task-001-greet", "status": "pass", "passed": True,
              "agent": "reference", "isolation": "agent-sandbox,checks-docker",
              "wall_seconds": 1.0}
    (results / "task-001-greet.jsonl").write_text(json.dumps(record) + "\n")
    proc = cli("report", "--results", "results", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "cannot read" not in proc.stdout + proc.stderr
    assert "without a sandbox" not in proc.stdout + proc.stderr
