#!/usr/bin/env python3
"""Write the generated reference pages of the docs site, from the code itself, so they cannot
drift from it:

  docs/reference/commands.md  every ci-eval command and option, from the argparse parsers
                              (ci_eval/main.py build_parser);
  docs/reference/formats.md   every file format with a JSON schema (ci_eval/tasks/schemas/,
                              what `ci-eval schema NAME` prints): each field, what it expects,
                              whether it is required, and its description;
  docs/reference/config.md    every key of ci-eval.yaml, the same way, from
                              ci-eval.schema.json (`ci-eval schema ci-eval.yaml`).

    python scripts/reference_pages.py            # rewrite the pages
    python scripts/reference_pages.py --check    # exit 1 if a committed page is stale

The command page is built from the parsers' actions (option strings, metavars, choices, help),
not from argparse's formatted --help, whose layout changes between Python versions: the same
code gives the same pages on every Python ci-eval supports.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ci_eval.main import build_parser
from ci_eval.tasks import schema

PAGES = REPO / "docs" / "reference"
HEADER = """# Command reference

Every `ci-eval` command and its options, generated from the CLI's own parsers by
`python scripts/reference_pages.py` (a test fails when this page is stale: rerun the script
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


FORMATS_HEADER = """# File formats

The files ci-eval reads and writes that have a JSON schema, generated from the schemas
themselves (`ci_eval/tasks/schemas/`) by `python scripts/reference_pages.py`. `ci-eval schema
NAME` prints a schema for editors and other tools. Every file is validated against its schema
on read; a problem is one line naming the file and the field, exit 2. `KEY` stands for any key
of a map, `[]` for any item of a list.
"""
MAX_DEPTH = 6


def _deref(node: object, root: dict) -> object:
    """A local "#/$defs/x" reference resolved against the whole schema."""
    ref = node.get("$ref") if isinstance(node, dict) else None
    if not (isinstance(ref, str) and ref.startswith("#/")):
        return node
    target: object = root
    for part in ref[2:].split("/"):
        target = target.get(part) if isinstance(target, dict) else None
    return target if isinstance(target, dict) else node


def _expects(child: dict, root: dict) -> str:
    """What a field expects, a code span when it holds a pattern (markdown would read * _ [)."""
    text = " ".join((schema.describe(child, root) or "").split())
    return f"`{text}`" if any(c in text for c in "*_[\\`") and "`" not in text else _escape(text)


def _field_rows(node: dict, root: dict, path: str, depth: int = 0) -> list[str]:
    node = _deref(node, root)
    rows = []
    if not isinstance(node, dict) or depth > MAX_DEPTH:
        return rows
    required = set(node.get("required", ()))
    for name, child in (node.get("properties") or {}).items():
        rows += _one_row(child, root, f"{path}.{name}" if path else name, name in required, depth)
    extra = node.get("additionalProperties")
    if isinstance(extra, dict):
        rows += _one_row(extra, root, f"{path}.KEY" if path else "KEY", False, depth)
    items = node.get("items")
    if isinstance(items, dict):
        rows += _field_rows(items, root, f"{path}[]", depth + 1)
    for key in ("oneOf", "anyOf"):
        for branch in node.get(key, ()):
            rows += _field_rows(branch, root, path, depth + 1)
    return rows


def _one_row(child: dict, root: dict, path: str, required: bool, depth: int) -> list[str]:
    resolved = _deref(child, root)
    text = resolved.get("description") or child.get("description") or ""
    expects = _expects(child, root).replace("|", "\\|")
    row = (f"| `{path}` | {expects} | {'yes' if required else ''} | "
           f"{_escape(text)} |")
    return [row, *_field_rows(child, root, path, depth + 1)]


CONFIG_SCHEMA = "ci-eval"  # has a page of its own (config.md)
CONFIG_HEADER = """# ci-eval.yaml

Every key of the repository's configuration file, generated from its JSON Schema
(`ci_eval/tasks/schemas/ci-eval.schema.json`) by `python scripts/reference_pages.py`. Editors
that speak the yaml-language-server protocol (VS Code's YAML extension, JetBrains IDEs, Neovim's
yamlls) complete and check the file from the first line `ci-eval init` writes:

```yaml
# yaml-language-server: $schema=https://raw.githubusercontent.com/ci-eval/ci-eval/v1/ci_eval/tasks/schemas/ci-eval.schema.json
```

(the action's repository and ref, as `init --action` names them). Offline, or pinned to the
ci-eval you run: `ci-eval schema ci-eval.yaml -o .ci-eval.schema.json` and
`# yaml-language-server: $schema=./.ci-eval.schema.json`. `ci-eval` checks the file against
the same schema whenever it reads it: a problem is one line naming the file and the key, an
unknown key with a did-you-mean, exit 2. `KEY` stands for any key of a map (an agent's name,
a model's name), `[]` for any item of a list.
"""


def _schema_section(name: str, title: bool = True) -> list[str]:
    root = schema.load_schema(name)
    lines = []
    if title:
        lines += [f"## {name}", "",
                  f"`ci-eval schema {name}` — {_escape(root.get('title', ''))}.", ""]
    if root.get("description"):
        lines += [" ".join(root["description"].split()), ""]
    rows = list(dict.fromkeys(_field_rows(root, root, "")))
    if rows:
        lines += ["| Field | Expects | Required | Meaning |", "| --- | --- | --- | --- |",
                  *rows, ""]
    return lines


def render_formats() -> str:
    lines = [FORMATS_HEADER, "ci-eval.yaml has [a page of its own](config.md).", ""]
    for name in schema.known_schemas():
        if name != CONFIG_SCHEMA:
            lines += _schema_section(name)
    return "\n".join(lines).rstrip() + "\n"


def render_config() -> str:
    return "\n".join([CONFIG_HEADER, *_schema_section(CONFIG_SCHEMA, title=False)]).rstrip() \
        + "\n"


def pages() -> dict[Path, str]:
    return {PAGES / "commands.md": render(), PAGES / "formats.md": render_formats(),
            PAGES / "config.md": render_config()}


def main(argv=None) -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--check", action="store_true", help="exit 1 if a page is stale")
    options = args.parse_args(argv)
    stale = 0
    for page, text in pages().items():
        name = page.relative_to(REPO) if page.is_relative_to(REPO) else page
        if options.check:
            current = page.read_text(encoding="utf-8") if page.is_file() else ""
            if current != text:
                print(f"{name} is stale: run python scripts/reference_pages.py", file=sys.stderr)
                stale = 1
            continue
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(text, encoding="utf-8")
        print(f"wrote {name}")
    return stale


if __name__ == "__main__":
    sys.exit(main())
