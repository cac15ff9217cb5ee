"""The HOME agents and checks run with (run/sandbox/home.py): `home:` in ci-eval.yaml, the agent's own
HOME with a preset's login file and home files, and what stays visible of the host's HOME."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ci_eval.agents.config import AgentConfig
from ci_eval.agents.config_file import parse_config
from ci_eval.agents.presets import PRESETS
from ci_eval.errors import UserError
from ci_eval.run.sandbox import home as home_mod
from ci_eval.run.sandbox.views import hidden_host_home, host_home_kept


@pytest.mark.parametrize("spec, field", [
    ({"agents": {"a": {"command": "true", "home": "hots"}}}, "agents.a.home"),
    ({"agents": {"a": {"preset": "codex", "home": True}}}, "agents.a.home"),
    ({"checks": {"home": ["host"]}}, "checks.home"),
])
def test_a_bad_home_value_is_one_line_naming_file_and_field(spec, field):
    with pytest.raises(UserError) as caught:
        parse_config(spec, "ci-eval.yaml")
    message = str(caught.value)
    assert message.startswith(f"ci-eval.yaml: {field}: expected one of run, host, got"), message
    assert "\n" not in message


def test_home_defaults_to_the_runs_own_and_host_opts_in():
    config = parse_config({"agents": {"a": {"command": "true"}, "b": {"preset": "gemini",
                                                                       "home": "host"}},
                           "checks": {"home": "host"}})
    assert config.agents["a"].home == "run" and config.agents["b"].home == "host"
    assert config.checks_home == "host" and parse_config({}).checks_home == "run"


def test_a_bad_home_value_stops_run_with_exit_2(repo_root, make_task, cli, assert_bad_input):
    make_task(repo_root)
    (repo_root / "ci-eval.yaml").write_text("agents:\n  a:\n    command: 'true'\n    home: /root\n")
    ran = cli("run", "--agent", "a", "-k", "1", cwd=repo_root)
    assert_bad_input(ran, "ci-eval.yaml", "agents.a.home", "expected one of run, host")


def test_the_login_file_is_copied_only_when_it_is_the_key(tmp_path):
    host = tmp_path / "host"
    (host / ".claude").mkdir(parents=True)
    (host / ".claude" / ".credentials.json").write_text('{"claudeAiOauth": {}}\n')
    agent = AgentConfig(name="c", command=None, preset="claude-code")
    env = home_mod.agent_home(agent, tmp_path / "own", {"HOME": str(host)})
    assert env == {"HOME": str(tmp_path / "own")}
    copied = tmp_path / "own" / ".claude" / ".credentials.json"
    assert copied.read_text() == '{"claudeAiOauth": {}}\n'
    assert copied.stat().st_mode & 0o777 == 0o600
    keyed = home_mod.agent_home(agent, tmp_path / "keyed",
                                {"HOME": str(host), "ANTHROPIC_API_KEY": "sk-x"})
    assert keyed == {"HOME": str(tmp_path / "keyed")}
    assert list((tmp_path / "keyed").iterdir()) == []  # a key: nothing of the host's


def test_codex_home_moves_into_the_agents_own_home(tmp_path):
    moved = tmp_path / "codex-home"
    moved.mkdir()
    (moved / "auth.json").write_text('{"tokens": {}}')
    agent = AgentConfig(name="x", command=None, preset="codex")
    env = home_mod.agent_home(agent, tmp_path / "own", {"CODEX_HOME": str(moved)})
    assert env == {"HOME": str(tmp_path / "own"), "CODEX_HOME": str(tmp_path / "own" / ".codex")}
    assert (tmp_path / "own" / ".codex" / "auth.json").read_text() == '{"tokens": {}}'
    # With a key (no login copied) the folder CODEX_HOME names still exists: codex 0.171 exits
    # 1 "CODEX_HOME points to …, but that path does not exist" otherwise.
    keyed = home_mod.agent_home(agent, tmp_path / "keyed", {"OPENAI_API_KEY": "sk-x"})
    assert Path(keyed["CODEX_HOME"]).is_dir() and not any(Path(keyed["CODEX_HOME"]).iterdir())


def test_home_host_changes_nothing(tmp_path):
    agent = AgentConfig(name="c", command=None, preset="claude-code", home="host")
    assert home_mod.agent_home(agent, tmp_path / "own", {"HOME": "/x"}) == {}
    assert not (tmp_path / "own").exists()


def test_a_presets_home_files_are_written_into_its_home(tmp_path, monkeypatch):
    gemini = PRESETS["gemini"]
    monkeypatch.setattr(type(gemini), "home_files", lambda self, model: {
        ".gemini/settings.json": f'{{"model": "{model}"}}'})
    agent = AgentConfig(name="g", command=None, preset="gemini", model="gemini-2.5-pro")
    home_mod.agent_home(agent, tmp_path / "own", {"GEMINI_API_KEY": "k" * 10})
    assert (tmp_path / "own" / ".gemini" / "settings.json").read_text() == \
        '{"model": "gemini-2.5-pro"}'


@pytest.mark.parametrize("bad", ["/etc/passwd", "../up", "a/../../b", ""])
def test_a_home_file_outside_home_is_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="relative path without"):
        home_mod.own_home(tmp_path / "own", {bad: "x"})


def test_what_stays_visible_of_a_hidden_host_home(tmp_path, monkeypatch):
    home = tmp_path / "h"
    for folder in (".local/bin", ".cargo/bin", ".pyenv/shims", ".pyenv/plugins/x/shims", "bin"):
        (home / folder).mkdir(parents=True)
    path = os.pathsep.join([str(home / ".local/bin"), str(home / ".cargo/bin"),
                            str(home / ".pyenv/shims"), str(home / "bin"), str(home),
                            "/usr/bin", "relative/bin"])
    assert host_home_kept(str(home), path) == [
        str(home / ".local"), str(home / ".cargo"), str(home / ".pyenv"), str(home / "bin")]
    monkeypatch.setenv("HOME", str(home))
    assert hidden_host_home(["/tmp"]) == str(home)
    assert hidden_host_home([str(home / "tmp")]) is None  # TMPDIR inside HOME
    for shared in ("/tmp", "/"):
        monkeypatch.setenv("HOME", shared)
        assert hidden_host_home(["/tmp", "/var/tmp"]) is None
    monkeypatch.setenv("HOME", "/tmp/x")
    assert hidden_host_home(["/tmp"]) == os.path.realpath("/tmp/x")  # covered inside /tmp
