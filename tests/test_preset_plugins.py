"""Presets from outside the package: a distribution registers one under the entry point group
`ci_eval.presets` and `ci-eval run --agent NAME` runs it; a broken, mistyped or duplicate entry
point stops the command with one line naming it (agents/presets.py)."""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from ci_eval.agents import claude_code
from ci_eval.agents.installs import NO_INSTALL
from ci_eval.agents.presets import ENTRY_POINT_GROUP, load_presets
from ci_eval.errors import UserError
from ci_eval.run.agent.api_proxy import allowed_hosts

PLUGIN = '''
import json
from ci_eval.agents.installs import Install
from ci_eval.agents.preset import AgentReport, Preset, count


class EchoAgent(Preset):
    name = "echo-agent"
    program = "echo-agent"
    key_env = ("ECHO_AGENT_KEY",)
    install = Install("pip", "echo-agent", "1.2.3", "echo-agent", ("ECHO_AGENT_KEY",))
    api_hosts = ("api.echo.example",)

    def argv(self, prompt_text, prompt_file, workspace, run_dir, model, extra_args):
        return [self.program, prompt_file, *extra_args]

    def read(self, output, exit_code, files):
        usage = json.loads(output.strip().splitlines()[-1])
        return AgentReport(tokens=count(usage["tokens"]), outcome={"said": usage["said"]})


PRESET = EchoAgent()
'''

# The tool: writes the task's answer into its working directory, prints its usage as JSON.
TOOL = '''#!/bin/sh
printf '42\\n' > answer.txt
echo '{"tokens": 1234, "said": "done"}'
'''


def install_plugin(folder: Path, entry_points: str, module: str = PLUGIN) -> Path:
    """A distribution on a sys.path folder: the module and its .dist-info, as pip leaves them."""
    (folder / "echo_agent_preset.py").write_text(module)
    info = folder / "echo_agent_preset-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echo-agent-preset\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{entry_points}\n")
    return folder


@pytest.fixture
def plugin_env(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "echo-agent"
    tool.write_text(TOOL)
    tool.chmod(0o755)

    def env(entry_points: str = "echo-agent = echo_agent_preset:PRESET", **extra) -> dict:
        if not any(site.iterdir()):
            install_plugin(site, entry_points)
        return {"PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]),
                                               str(site)]),
                "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", **extra}
    return env


def test_a_preset_from_an_entry_point_runs_a_task(repo_root, make_task, cli, plugin_env):
    make_task(repo_root)
    ran = cli("run", "--agent", "echo-agent", "-k", "1", cwd=repo_root,
              env=plugin_env(ECHO_AGENT_KEY="k-123"))
    assert ran.returncode == 0, ran.stderr
    [line] = (repo_root / "results" / "task-001-example.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["status"] == "pass", record["reason"]
    assert record["tokens"] == 1234 and record["agent_outcome"] == {"said": "done"}


def test_a_plugin_presets_key_is_required_like_a_built_in_ones(repo_root, make_task, cli,
                                                               plugin_env, assert_bad_input):
    make_task(repo_root)
    ran = cli("run", "--agent", "echo-agent", "-k", "1", cwd=repo_root, env=plugin_env())
    assert_bad_input(ran, "ECHO_AGENT_KEY")


def test_init_writes_a_plugin_presets_pinned_install(repo_root, cli, plugin_env):
    import subprocess

    subprocess.run(["git", "init", "-q", str(repo_root)], check=True)
    done = cli("init", "--agent", "echo-agent", cwd=repo_root, env=plugin_env())
    assert done.returncode == 0, done.stderr
    text = (repo_root / ".github" / "workflows" / "eval.yml").read_text()
    assert "AGENT_VERSION: 1.2.3" in text.replace('"', "") and "ECHO_AGENT_KEY" in text


@pytest.mark.parametrize("entry, message", [
    ("echo-agent = echo_agent_preset:MISSING",
     "cannot be loaded (AttributeError"),
    ("echo-agent = no_such_module:PRESET",
     "cannot be loaded (ModuleNotFoundError"),
    ("echo-agent = echo_agent_preset:EchoAgent",
     "expected a Preset instance (ci_eval.agents.preset), got ABCMeta"),
    ("other-name = echo_agent_preset:PRESET",
     "the object is the preset 'echo-agent', not 'other-name'"),
])
def test_a_broken_entry_point_is_one_line_naming_it(repo_root, make_task, cli, plugin_env,
                                                    assert_bad_input, entry, message):
    make_task(repo_root)
    ran = cli("run", "--agent", "codex", "-k", "1", cwd=repo_root, env=plugin_env(entry))
    name, value = (part.strip() for part in entry.split("="))
    assert_bad_input(ran, f"entry point {name!r} = {value!r} of the group ci_eval.presets "
                     "(distribution echo-agent-preset): " + message)


def _point(name: str, value: str) -> EntryPoint:
    return EntryPoint(name, value, ENTRY_POINT_GROUP)


def test_a_plugin_may_not_take_a_built_in_name(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(install_plugin(tmp_path, "")))
    module = PLUGIN.replace('name = "echo-agent"', 'name = "claude-code"')
    (tmp_path / "echo_agent_preset.py").write_text(module)
    sys.modules.pop("echo_agent_preset", None)
    try:
        with pytest.raises(UserError, match="the preset name 'claude-code' is already taken"):
            load_presets([claude_code.PRESET], [_point("claude-code", "echo_agent_preset:PRESET")])
    finally:
        sys.modules.pop("echo_agent_preset", None)


def test_two_plugins_may_not_take_one_name(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(install_plugin(tmp_path, "")))
    sys.modules.pop("echo_agent_preset", None)
    try:
        point = _point("echo-agent", "echo_agent_preset:PRESET")
        loaded = load_presets([], [point])
        assert loaded["echo-agent"].install.version == "1.2.3"
        assert allowed_hosts(None, None, ()) == frozenset()
        with pytest.raises(UserError, match="'echo-agent' is already taken"):
            load_presets([], [point, point])
    finally:
        sys.modules.pop("echo_agent_preset", None)


@pytest.mark.parametrize("old, new, message", [
    ('program = "echo-agent"', 'program = ""', "expected `program`"),
    ('api_hosts = ("api.echo.example",)', 'api_hosts = "api.echo.example"',
     "expected `api_hosts` to be a tuple of strings"),
    ('install = Install("pip", "echo-agent", "1.2.3", "echo-agent", ("ECHO_AGENT_KEY",))',
     'install = {"kind": "pip"}', "expected `install` to be an"),
])
def test_a_plugin_preset_with_a_malformed_field_is_refused(tmp_path, monkeypatch, old, new,
                                                           message):
    monkeypatch.syspath_prepend(str(install_plugin(tmp_path, "", PLUGIN.replace(old, new))))
    sys.modules.pop("echo_agent_preset", None)
    try:
        with pytest.raises(UserError, match=message):
            load_presets([], [_point("echo-agent", "echo_agent_preset:PRESET")])
    finally:
        sys.modules.pop("echo_agent_preset", None)


def test_the_built_in_presets_declare_their_install_and_api_hosts():
    from ci_eval.agents.presets import PRESETS, builtin_presets

    assert len(builtin_presets()) == 11
    for builtin in builtin_presets():
        preset = PRESETS[builtin.name]
        assert preset.install is not NO_INSTALL and preset.api_hosts, preset.name
        assert allowed_hosts(preset.name, None, ()) == frozenset(preset.api_hosts)
