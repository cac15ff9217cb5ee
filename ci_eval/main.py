"""CLI entry point: wires subcommands and maps every outcome to an exit code.

Exit codes:
  0  success
  1  the result is bad: a regression, an invalid task, a failed verification (EXIT_FAILED)
  2  bad input or usage: a UserError (every path the user gives or the repo holds is read
     through code that turns its OSError into one, naming the path and field) or an argparse
     usage error
  3  internal error: any other unexpected exception, an OSError nobody expected included,
     printed as one line (naming the path, for an OSError); set CI_EVAL_DEBUG=1 for the
     traceback. Never 1, so a crash is not mistaken for a regression.
  130  interrupted (Ctrl-C)
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from ci_eval import __version__
from ci_eval.commands.options import ROOT_HELP
from ci_eval.errors import EXIT_BAD_INPUT, UserError
from ci_eval.output import MaskedStream, add_environment_secrets

EXIT_INTERNAL = 3  # an unexpected exception (a bug): see the module docstring
DEBUG_ENV = "CI_EVAL_DEBUG"

# (subcommand, module). Each module defines add_parser(subparsers) and run(args) -> int.
COMMANDS = [
    ("list", "ci_eval.commands.list_tasks"),
    ("validate", "ci_eval.commands.validate"),
    ("schema", "ci_eval.commands.schema"),
    ("run", "ci_eval.commands.run"),
    ("report", "ci_eval.commands.report"),
    ("show", "ci_eval.commands.show"),
    ("verify", "ci_eval.commands.verify"),
    ("grade", "ci_eval.commands.grade"),
    ("compare", "ci_eval.commands.compare"),
    ("baseline", "ci_eval.commands.baseline"),
    ("calibrate", "ci_eval.commands.calibrate"),
    ("history", "ci_eval.commands.history"),
    ("gc", "ci_eval.commands.gc"),
    ("restore", "ci_eval.commands.restore"),
    ("new-task", "ci_eval.commands.new_task"),
    ("import", "ci_eval.commands.import_tasks"),
    ("plan", "ci_eval.commands.plan"),
    ("merge", "ci_eval.commands.merge"),
    ("gate", "ci_eval.commands.gate"),
    ("comment", "ci_eval.commands.comment"),
    ("propose-baseline", "ci_eval.commands.propose_baseline"),
    ("propose-archive", "ci_eval.commands.propose_archive"),
    ("init", "ci_eval.commands.init"),
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
    parser.add_argument("--root", dest="global_root", default=None, metavar="DIR", help=ROOT_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for _name, module_name in COMMANDS:
        importlib.import_module(module_name).add_parser(sub)  # a missing module is a bug: loud
    return parser


ROOT_MARKERS = ("ci-eval.yaml", "ci-eval.yml", ".ci-eval.yaml", ".ci-eval.yml", "tasks")


def find_root(start: Path) -> Path | None:
    """The nearest folder from `start` upward holding a ci-eval.yaml or a tasks/ folder; the
    search stops at a git repo's top (a folder holding .git), as git's own does. None: none."""
    for folder in (start, *start.parents):
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return folder
        if (folder / ".git").exists():
            return None
    return None


def resolve_root(args: argparse.Namespace) -> None:
    """args.root from `ci-eval SUBCOMMAND --root`, `ci-eval --root SUBCOMMAND`, or found upward
    (said on stderr when it is not the current folder)."""
    if not hasattr(args, "root"):
        return
    given = args.root or getattr(args, "global_root", None)
    if given is not None or not getattr(args, "discover_root", True):
        args.root = given or "."
        return
    here = Path.cwd()
    found = find_root(here)
    if found is None or found == here:
        args.root = "."
        return
    args.root = str(found)
    print(f"ci-eval: repo root {found}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    add_environment_secrets()
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = MaskedStream(sys.stdout), MaskedStream(sys.stderr)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams


def _main(argv: list[str] | None) -> int:
    """main, writing to streams that mask secrets (ci_eval/output.py)."""
    try:
        args = build_parser().parse_args(argv)  # usage errors: SystemExit(2), passed through
        resolve_root(args)
        return int(args.handler(args) or 0)
    except UserError as exc:
        print(f"ci-eval: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("ci-eval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the last resort: exit 3, never a traceback
        _traceback_if_debugging()
        hint = "" if _debugging() else f"; rerun with {DEBUG_ENV}=1 for the traceback"
        text = _os_error_line(exc) if isinstance(exc, OSError) else _one_line(exc)
        print(f"ci-eval: error: {text} (internal error{hint})", file=sys.stderr)
        return EXIT_INTERNAL


def _os_error_line(exc: OSError) -> str:
    """'PATH: Permission denied' (both paths for a rename or copy), on one line."""
    reason = exc.strerror or _one_line(exc)
    paths = [str(p) for p in (exc.filename, exc.filename2) if p is not None]
    return _collapse(f"{' -> '.join(paths)}: {reason}" if paths else reason)


def _one_line(exc: BaseException, limit: int = 300) -> str:
    text = _collapse(f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _debugging() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def _traceback_if_debugging() -> None:
    if _debugging():
        import traceback

        traceback.print_exc()


if __name__ == "__main__":
    raise SystemExit(main())
