"""A `ci-eval COMMAND` start builds COMMAND's parser alone (ci_eval/main.py named_command); `--help`,
no command or a mistyped one build the whole parser, importing each command module for its
add_parser. So what a command module imports at its top is paid by every start of that command
and by `--help`, each CLI child of this suite included. The stages load inside a command's run():
building the parser imports none of them (gate's --comment choices come from
github/comment_policy.py, not from github/comment.py and the REST client behind it, which cost
every start about 0.07 CPU s); naming the command saved another 40-60 ms CPU a start (2026-12-03)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ci_eval.main import named_command

STAGES = ("ci_eval.run", "ci_eval.render", "ci_eval.verdict", "ci_eval.results", "ci_eval.grading",
          "ci_eval.importers", "ci_eval.github.client", "ci_eval.github.comment")
LOADED = ("import sys\nfrom ci_eval.main import build_parser\nbuild_parser()\n"
          "print('\\n'.join(sorted(sys.modules)))\n")


def test_building_the_parser_imports_no_stage():
    done = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True,
                          check=True, timeout=60)
    modules = done.stdout.split()
    assert "ci_eval.commands.gate" in modules  # every command's parser was built
    stages = [m for m in modules if any(m == s or m.startswith(s + ".") for s in STAGES)]
    assert stages == [], f"imported at the top of a command module (move into its run()): {stages}"


def loaded_by(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code + "\nprint('\\n'.join(sorted(sys.modules)))"],
                          capture_output=True, text=True, check=True, timeout=60)
    return done.stdout.split()


def test_a_start_naming_a_command_imports_that_command_module_alone():
    modules = loaded_by("import sys\nfrom ci_eval.main import build_parser\n"
                        "args = build_parser(['--root', '.', 'list', '--json']).parse_args("
                        "['--root', '.', 'list', '--json'])\nassert args.command == 'list'")
    commands = [m for m in modules if m.startswith("ci_eval.commands.")]
    assert commands == ["ci_eval.commands.list_tasks"]


@pytest.mark.parametrize(("argv", "named"), [
    (["list", "--json"], "list"), (["--root", "x", "run", "-k", "1"], "run"),
    (["--root=x", "gate"], "gate"), (["--root", "list", "run"], "run"),
    ([], None), (["--help"], None), (["--version"], None), (["-h", "list"], None),
    (["lsit"], None), (["--agent", "x", "run"], None), (["--root"], None),
])
def test_the_named_command_is_the_first_word_after_the_global_root(argv, named):
    assert named_command(argv) == named


def test_a_named_command_keeps_the_usage_errors_of_the_whole_parser(cli, assert_bad_input):
    assert_bad_input(cli("list", "--bogus"), "unrecognized arguments: --bogus")
    assert_bad_input(cli("--bogus", "list"), "unrecognized arguments: --bogus")
    assert_bad_input(cli("--agent", "x", "run"), "options of a subcommand go after it")
    assert_bad_input(cli("lsit"), "did you mean 'list'?")
