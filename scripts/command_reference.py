#!/usr/bin/env python3
"""Write docs/reference/commands.md: every ci-eval command and option, from the argparse parsers
themselves (ci_eval/main.py build_parser), so the reference cannot drift from the CLI.

    python scripts/command_reference.py            # rewrite the page
    python scripts/command_reference.py --check    # exit 1 if the committed page is stale

The page is built from the parsers' actions (option strings, metavars, defaults, choices, help),
not from argparse's formatted --help, whose layout changes between Python versions: the same
code gives the same page on every Python ci-eval supports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ci_eval.main import build_parser  # noqa: E402

PAGE = REPO / "docs" / "reference" / "commands.md"
HEADER = """# Command reference

Every `ci-eval` command and its options, generated from the CLI's own parsers by
`python scripts/command_reference.py` (a test fails when this page is stale: rerun the script
after changing an option). Exit codes everywhere: 0 ok, 1 regression or failed verification,
2 bad input. `--root DIR` is accepted before the command too (`ci-eval --root DIR run …`).
"""


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """(name, parser) of each subcommand, in the order they were added (aliases left out)."""
    found = []
    for action in parser._actions:  # argparse keeps no public list of its subcommands
        if isinstance(action, argparse._SubParsersAction):
            seen = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    found.append((name, sub))
    return found


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    """subcommand name -> its one-line help (from the subparsers action's choices_actions)."""
    return {choice.dest: choice.help or "" for action in parser._actions
            if isinstance(action, argparse._SubParsersAction)
            for choice in action._choices_actions}


def _escape(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;")


def _expand(action: argparse.Action) -> str:
    text = action.help or ""
    if "%(" in text:
        text = text % {**vars(action), "prog": "ci-eval"}
    return text


def _signature(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest.upper()}`"
    if action.nargs == 0:
        return ", ".join(f"`{o}`" for o in action.option_strings)
    metavar = action.metavar
    if metavar is None:
        metavar = "{" + ",".join(map(str, action.choices)) + "}" if action.choices \
            else action.dest.upper()
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    return ", ".join(f"`{o} {metavar}`" for o in action.option_strings)


def _notes(action: argparse.Action) -> list[str]:
    notes = []
    if action.required and action.option_strings:
        notes.append("required")
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        notes.append("one of " + ", ".join(f"`{c}`" for c in action.choices))
    if action.nargs in ("*", "+", argparse.REMAINDER) or isinstance(action, argparse._AppendAction):
        notes.append("repeatable" if action.option_strings else "any number")
    return notes


def _options_table(parser: argparse.ArgumentParser) -> list[str]:
    rows = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, (argparse._HelpAction,
                                                                   argparse._SubParsersAction)):
            continue
        text = _expand(action)
        notes = _notes(action)
        if notes:
            text = f"{text} ({'; '.join(notes)})" if text else "; ".join(notes)
        rows.append(f"| {_signature(action)} | {_escape(text)} |")
    if not rows:
        return []
    return ["| Argument | Meaning |", "| --- | --- |", *rows, ""]


def _section(path: list[str], parser: argparse.ArgumentParser, summary: str) -> list[str]:
    lines = [f"{'#' * min(len(path) + 1, 4)} `{' '.join(path)}`", ""]
    if summary:
        lines += [_escape(summary[0].upper() + summary[1:]) + ".", ""]
    if parser.description:
        lines += [" ".join(parser.description.split()), ""]
    lines += _options_table(parser)
    if parser.epilog:
        lines += [" ".join(parser.epilog.split()), ""]
    helps = _helps(parser)
    for name, sub in _subparsers(parser):
        lines += _section([*path, name], sub, helps.get(name, ""))
    return lines


def render() -> str:
    parser = build_parser()
    helps = _helps(parser)
    commands = _subparsers(parser)
    lines = [HEADER, "| Command | What it does |", "| --- | --- |"]
    lines += [f"| [`ci-eval {name}`](#ci-eval-{name}) | {_escape(helps.get(name, ''))} |"
              for name, _ in commands]
    lines += ["", "## `ci-eval`", "", " ".join((parser.description or "").split()), ""]
    lines += _options_table(parser)
    for name, sub in commands:
        lines += _section(["ci-eval", name], sub, helps.get(name, ""))
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    options = args.parse_args(argv)
    text = render()
    if options.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else ""
        if current != text:
            print(f"{PAGE.relative_to(REPO)} is stale: run python scripts/command_reference.py",
                  file=sys.stderr)
            return 1
        return 0
    PAGE.parent.mkdir(parents=True, exist_ok=True)
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
