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
  143  terminated (SIGTERM, as a CI runner cancelling the job sends it): the same clean stop as
       Ctrl-C (runs and checks in flight killed, temporary folders removed)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
from pathlib import Path

from ci_eval import __version__
from ci_eval.cli_options import ROOT_HELP
from ci_eval.errors import EXIT_BAD_INPUT, UserError
from ci_eval.output import MaskedStream, add_environment_secrets

EXIT_INTERNAL = 3  # an unexpected exception (a bug): see the module docstring
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread: a KeyboardInterrupt, so that every clean-up a
    command does for Ctrl-C (killing what runs, removing its folders) runs for it too."""


def _raise_terminated(_signum, _frame) -> None:
    raise Terminated


@contextlib.contextmanager
def _sigterm_as_interrupt():
    """While a command runs, SIGTERM raises Terminated (the previous handler back after; in a
    thread other than the main one, where handlers cannot be set, nothing changes)."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
DEBUG_ENV = "CI_EVAL_DEBUG"

# (subcommand, module). Each module defines add_parser(subparsers) and run(args) -> int. In the
# order of a user's first hour, then the steps the GitHub Action runs (ACTION_STEPS).
COMMANDS = [
    ("init", "ci_eval.commands.init"),
    ("new-task", "ci_eval.commands.new_task"),
    ("import", "ci_eval.commands.import_tasks"),
    ("validate", "ci_eval.commands.validate"),
    ("verify", "ci_eval.commands.verify"),
    ("generate", "ci_eval.commands.generate"),
    ("list", "ci_eval.commands.list_tasks"),
    ("run", "ci_eval.commands.run"),
    ("report", "ci_eval.commands.report"),
    ("show", "ci_eval.commands.show"),
    ("grade", "ci_eval.commands.grade"),
    ("compare", "ci_eval.commands.compare"),
    ("baseline", "ci_eval.commands.baseline"),
    ("calibrate", "ci_eval.commands.calibrate"),
    ("history", "ci_eval.commands.history"),
    ("gc", "ci_eval.commands.gc"),
    ("restore", "ci_eval.commands.restore"),
    ("schema", "ci_eval.commands.schema"),
    ("plan", "ci_eval.commands.plan"),
    ("merge", "ci_eval.commands.merge"),
    ("gate", "ci_eval.commands.gate"),
    ("comment", "ci_eval.commands.comment"),
    ("propose-baseline", "ci_eval.commands.propose_baseline"),
    ("propose-archive", "ci_eval.commands.propose_archive"),
]
# Commands that run an agent or a task's checks: they need the Linux sandbox (namespaces).
SANDBOXED = ("run", "verify", "grade", "calibrate", "generate")
LINUX_ONLY = ("ci-eval {what} needs Linux: agents and checks run in a sandbox made of Linux "
              "namespaces (this is {platform}); use a Linux machine, a Linux container, WSL 2 or "
              "a Linux CI runner (runs-on: ubuntu-latest)")
ACTION_STEPS = ("plan", "merge", "gate", "comment", "propose-baseline", "propose-archive")
GLOBAL_OPTIONS = ("--root", "--version", "-h", "--help")


def usage_hint(message: str, argv: list[str], commands) -> str:
    """What to add to argparse's message: "did you mean" for a mistyped subcommand, and that a
    subcommand's options follow it (`ci-eval --agent x run` reads x as the subcommand)."""
    import difflib
    import re

    found = re.search(r"invalid choice: '([^']*)'", message)
    if not found:
        return ""
    word = found.group(1)
    hints = []
    close = difflib.get_close_matches(word, list(commands), n=1, cutoff=0.6)
    if close:
        hints.append(f"did you mean {close[0]!r}?")
    before = argv[:argv.index(word)] if word in argv else []
    options = [a for a in before if a.startswith("-") and a.split("=", 1)[0] not in GLOBAL_OPTIONS]
    if options:
        after = argv[argv.index(word) + 1:]
        command = next((a for a in after if a in commands), "COMMAND")
        moved = [a for a in [*before, word] if a.split("=", 1)[0] not in GLOBAL_OPTIONS]
        hints.append(f"options of a subcommand go after it: ci-eval {command} "
                     f"{' '.join(moved)} ... (only --root goes before)")
    return ("; " + "; ".join(hints)) if hints else ""


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors already; keep its message to one line."""

    def error(self, message: str):
        names = [name for name, _ in COMMANDS]
        hint = usage_hint(message, sys.argv[1:], names) if self.prog == "ci-eval" else ""
        if "(choose from" in message and self.prog == "ci-eval":
            message = message.split(" (choose from", 1)[0]
            hint += " (see ci-eval --help)"
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}{hint}\n")


def named_command(argv: list[str]) -> str | None:
    """The subcommand argv names when nothing but --root comes before it; None otherwise (no
    subcommand, --help, --version, an unknown word or option: the whole parser answers those)."""
    names = {name for name, _ in COMMANDS}
    words = iter(argv)
    for word in words:
        if word == "--root":
            next(words, None)
        elif not word.startswith("--root="):
            return word if word in names else None
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """Every subcommand's parser; with argv naming one (named_command), only that one, so that a
    start imports one command module, not all of them."""
    chosen = named_command(argv) if argv is not None else None
    parser = _Parser(
        prog="ci-eval",
        description="Run golden tasks through a coding agent, score them with deterministic "
        "checks, and gate on regressions against a committed baseline.",
    )
    parser.add_argument("--version", action="version", version=f"ci-eval {__version__}")
    parser.add_argument("--root", dest="global_root", default=None, metavar="DIR", help=ROOT_HELP)
    parser.epilog = ("Steps of the GitHub Action (action.yml runs them; rarely typed): "
                     + ", ".join(ACTION_STEPS) + ".")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, module_name in COMMANDS:
        if chosen in (None, name):
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


def platform_problem(command: str | None, platform: str) -> str | None:
    """Why this command cannot work on this platform, before anything is imported or run."""
    if platform.startswith("linux"):
        return None
    if platform.startswith(("win", "cygwin", "msys")):  # results files are locked with fcntl
        return LINUX_ONLY.format(what="", platform=platform).replace("ci-eval  ", "ci-eval ")
    if command in SANDBOXED:
        return LINUX_ONLY.format(what=command, platform=platform)
    return None


def main(argv: list[str] | None = None) -> int:
    early = platform_problem(None, sys.platform)
    if early:  # before the command modules, which need fcntl, are imported
        print(f"ci-eval: error: {early}", file=sys.stderr)
        return EXIT_BAD_INPUT
    add_environment_secrets()
    streams = sys.stdout, sys.stderr
    sys.stdout = MaskedStream(sys.stdout)
    sys.stderr = notes = MaskedStream(sys.stderr, best_effort=True)
    try:
        return _main(argv)
    finally:
        sys.stdout, sys.stderr = streams
        if notes.failed:  # what it still holds can never be written: not an exit code of ours
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the interpreter's exit


def _main(argv: list[str] | None) -> int:
    """main, writing to streams that mask secrets (ci_eval/output.py)."""
    try:
        words = sys.argv[1:] if argv is None else argv
        args = build_parser(words).parse_args(words)  # usage errors: SystemExit(2), passed through
        problem = platform_problem(getattr(args, "command", None), sys.platform)
        if problem:
            raise UserError(f"{problem}; nothing was run")
        resolve_root(args)
        with _sigterm_as_interrupt():
            return int(args.handler(args) or 0)
    except UserError as exc:
        print(f"ci-eval: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Terminated:
        print("ci-eval: terminated (SIGTERM)", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("ci-eval: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
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
