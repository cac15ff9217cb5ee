"""The options several subcommands share, and argparse value types. One place each: a command
module imports them from here, never from ci_eval.main (which loads the commands) nor from another
command. For the CLI only: main and commands/ import it (docs/architecture.md)."""

from __future__ import annotations

import argparse
import datetime
import math
from pathlib import Path

from ci_eval.tasks.model import MAX_TIMEOUT_SECONDS

ROOT_HELP = ("repo root holding tasks/, baseline.json and ci-eval.yaml (default: the nearest "
             "folder upward from here that holds tasks/ or ci-eval.yaml, like git finds its repo)")


def add_root_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", default=None, metavar="DIR", help=ROOT_HELP)


def add_results_argument(parser: argparse.ArgumentParser, *, shards: bool = False) -> None:
    """--results; shards=True: a command that merges RESULTS/shard-*/ first (gate,
    propose-baseline)."""
    what = "folder holding shard-*/ folders, or results" if shards else "results folder"
    parser.add_argument("--results", default="results", metavar="DIR",
                        help=f"{what}, relative to --root (default results/)")


def add_requested_runs_argument(parser: argparse.ArgumentParser,
                                fewer: str = "is inconclusive") -> None:
    """-k of the commands that judge recorded runs: what a task with fewer valid runs gets."""
    parser.add_argument("-k", type=positive_int, default=None, metavar="N",
                        help="valid runs asked of every task, overriding what `ci-eval run` "
                        f"recorded; a task with fewer {fewer} (default: each task's own k, or "
                        "confirmation stage, recorded with its runs)")


def add_agent_mismatch_argument(parser: argparse.ArgumentParser, *, records: bool = False) -> None:
    """--allow-agent-mismatch: compare (records=False) or record into the baseline (True)
    results of another agent than the baseline's."""
    parser.add_argument("--allow-agent-mismatch", action="store_true",
                        help="record results of another agent than the baseline's (the "
                        "baseline's agent becomes theirs)" if records else
                        "compare results recorded with another agent than the baseline's")


def add_output_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", metavar="FILE",
                        help="write to FILE instead of stdout (its folder is created)")


def add_footer_commit_argument(parser: argparse.ArgumentParser) -> None:
    """--commit of a report (github.context.footer_commit picks the default)."""
    parser.add_argument("--commit", metavar="SHA",
                        help="commit shown in the report footer (default: $GITHUB_SHA, else "
                        "git's HEAD)")


def add_today_argument(parser: argparse.ArgumentParser,
                       help_text: str = "today's date (default: UTC)") -> None:
    """--today, read with verdict.gc.parse_day (args.today: None means today, UTC)."""
    parser.add_argument("--today", metavar="YYYY-MM-DD", help=help_text)


def add_recorded_date_argument(parser: argparse.ArgumentParser) -> None:
    """--date of a baseline write (baseline update, propose-baseline); None: utc_today()."""
    parser.add_argument("--date", type=iso_date, metavar="YYYY-MM-DD",
                        help="recorded date (default: today, UTC)")


DEFAULT_HISTORY = ".ci-eval/history"  # = results.history.DEFAULT_HISTORY_DIR (tests/test_history.py)


def add_history_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--history", metavar="DIR",
                        help=f"history folder of run summaries (`ci-eval history record` or "
                        f"`history fetch --out`), relative to --root (default {DEFAULT_HISTORY}/; "
                        "a missing default folder is an empty history, a missing given one an "
                        "error)")


def history_dir(args: argparse.Namespace) -> Path:
    return Path(args.root) / (args.history or DEFAULT_HISTORY)


def add_pull_request_arguments(parser: argparse.ArgumentParser) -> None:
    """Where a command that opens a pull request pushes and what the PR targets."""
    parser.add_argument("--base", metavar="BRANCH",
                        help="branch the PR targets (default: $GITHUB_REF_NAME, else the "
                        "checked-out branch)")
    parser.add_argument("--remote", metavar="URL",
                        help="where to push (default: $GITHUB_SERVER_URL/$GITHUB_REPOSITORY.git "
                        "in Actions, else origin)")
    add_repo_argument(parser)


def add_repo_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repo", metavar="OWNER/NAME", help="default: $GITHUB_REPOSITORY")


def add_comment_target_arguments(parser: argparse.ArgumentParser) -> None:
    """--pr, --repo, --author, --comment-key: which pull request's ci-eval comment (comment,
    gate)."""
    parser.add_argument("--pr", type=positive_int, metavar="N",
                        help="pull request number (default: the event's pull request)")
    add_repo_argument(parser)
    parser.add_argument("--author", metavar="LOGIN",
                        help="whose comment is ours (default: the token's identity, from GET "
                        "/user, or GraphQL viewer for installation tokens)")
    parser.add_argument("--comment-key", metavar="KEY",
                        help="a comment of its own per KEY (letters, digits, . _ -), for two "
                        "ci-eval workflows on one pull request (default: the one comment)")


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


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (amounts of money)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text}")
    return value


MAX_RUNS_PER_TASK = 1000  # -k: beyond this a results folder is no longer a CI artefact


MAX_JOBS = 256


def bounded_int(maximum: int):
    """argparse type: a whole number from 1 to `maximum`."""

    def parse(text: str) -> int:
        value = positive_int(text)
        if value > maximum:
            raise argparse.ArgumentTypeError(f"expected a whole number 1-{maximum}, got {value}")
        return value

    return parse


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0 and at most MAX_TIMEOUT_SECONDS (24 h)."""
    expected = f"expected seconds > 0 and <= {MAX_TIMEOUT_SECONDS:g}"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{expected}, got {text!r}") from None
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_SECONDS):
        raise argparse.ArgumentTypeError(f"{expected}, got {text}")
    return value


def add_runner_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runner", choices=("local", "docker"), default=None,
                        help="where tasks run: local (the namespace sandbox) or docker (each "
                        "task's image, built before anything runs; docs/docker.md). Default: "
                        "the task's metadata.json runner, else ci-eval.yaml runner, else local")


def add_json_argument(parser: argparse.ArgumentParser, help_text: str = "print JSON") -> None:
    """--json: machine-readable output instead of the text for people (args.json)."""
    parser.add_argument("--json", action="store_true", help=help_text)


def add_json_format_alias(parser: argparse.ArgumentParser) -> None:
    """--json for a command that also has --format: the same as --format json."""
    parser.add_argument("--json", action="store_const", const="json", dest="format",
                        help="same as --format json")


def add_baseline_argument(parser: argparse.ArgumentParser,
                          help_text: str = "baseline file, relative to --root "
                          "(default baseline.json)") -> None:
    parser.add_argument("--baseline", metavar="FILE", help=help_text)


def iso_date(text: str) -> str:
    """argparse type: a date YYYY-MM-DD, normalised."""
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None


def utc_today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()
