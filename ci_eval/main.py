"""CLI entry point: wires subcommands, turns UserError into a one-line message and exit 2."""

from __future__ import annotations

import argparse
import importlib
import sys

from ci_eval import __version__
from ci_eval.errors import EXIT_BAD_INPUT, UserError

# (subcommand, module). Each module defines add_parser(subparsers) and run(args) -> int.
COMMANDS = [
    ("list", "ci_eval.commands.list_tasks"),
    ("validate", "ci_eval.commands.validate"),
    ("schema", "ci_eval.commands.schema"),
    ("run", "ci_eval.commands.run"),
    ("report", "ci_eval.commands.report"),
    ("verify", "ci_eval.commands.verify"),
    ("compare", "ci_eval.commands.compare"),
    ("baseline", "ci_eval.commands.baseline"),
    ("calibrate", "ci_eval.commands.calibrate"),
]


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its message to one line."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ci-eval",
        description="Run golden tasks through a coding agent, score them with deterministic "
        "checks, and gate on regressions against a committed baseline.",
    )
    parser.add_argument("--version", action="version", version=f"ci-eval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for _name, module_name in COMMANDS:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # subcommand not built yet
            raise
        module.add_parser(sub)
    return parser


def add_root_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        default=".",
        metavar="DIR",
        help="repo root holding tasks/, baseline.json and ci-eval.yaml (default: current directory)",
    )


def add_tasks_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tasks", nargs="*", metavar="TASK",
                        help="task id, task-NNN or NNN (default: all)")


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1 (for -k, -j and the like)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def positive_seconds(text: str) -> float:
    """argparse type: a number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected seconds > 0, got {text}")
    return value


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except UserError as exc:
        print(f"ci-eval: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("ci-eval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
