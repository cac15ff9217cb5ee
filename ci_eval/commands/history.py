"""`ci-eval history record|show|site|fetch`: one run summary per CI run, the trend of the last
ones, the dashboard page (render/site.py), and the summaries of earlier CI runs."""

from __future__ import annotations

import argparse

from ci_eval.cli_options import (
    add_baseline_argument,
    add_history_argument,
    add_json_argument,
    add_repo_argument,
    add_results_argument,
    add_root_argument,
    bounded_int,
    history_dir,
    positive_int,
)

MAX_FETCH_RUNS = 500


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "history",
        help="record a run summary into the history folder, or show the trend of the last runs",
        description="The run history: one summary file per CI run (per task: valid runs, "
        "passes, errors, status; commit, date, agent, ci-eval version). Entropy GC (`ci-eval "
        "gc`) reads it. See docs/lifecycle.md.",
    )
    sub = parser.add_subparsers(dest="history_command", metavar="ACTION")
    sub.required = True

    record = sub.add_parser(
        "record",
        help="write the summary of a results folder as a new file in the history folder",
        description="Summarize --results (one CI run) into a new file DATE-NNN-COMMIT.json in "
        "--history; an existing file is never overwritten. Exit 0, 2 on bad input.",
    )
    add_root_argument(record)
    add_results_argument(record)
    add_history_argument(record)
    record.add_argument("--date", metavar="YYYY-MM-DD", help="the run's date (default: today, UTC)")
    record.add_argument("--commit", metavar="SHA",
                        help="the commit evaluated (default: $GITHUB_SHA, else the root's git "
                        "HEAD, else none)")
    add_json_argument(record, "print the written summary as JSON")
    record.set_defaults(handler=run_record)

    show = sub.add_parser(
        "show",
        help="per task, the last runs as a sparkline and pass counts",
        description="Per task, the last --limit recorded runs, oldest first: a sparkline of pass "
        "rates (▁ 0 … █ 1, · not run, ? no valid run) and the counts (5/5 5/5 4/5). Every file "
        "in the folder must be a valid summary. Exit 0, 2 on bad input.",
    )
    add_root_argument(show)
    add_history_argument(show)
    show.add_argument("--limit", type=positive_int, default=10, metavar="N",
                      help="runs shown per task (default 10)")
    add_json_argument(show, "print JSON")
    show.set_defaults(handler=run_show)

    site = sub.add_parser(
        "site",
        help="write the dashboard: a static, offline HTML page of the recorded runs",
        description="Write OUT/index.html from the run summaries in --history, built to find "
        "what got worse: the tasks that changed most since the baseline first, a tasks x runs "
        "grid with the baseline and harness changes marked, per-task cost and wall trends, "
        "flaky tasks judged against their own rate, and the archived tasks (archive/ under "
        "--root). One self-contained file: the charting library (uPlot, vendored) and the data "
        "are inlined, and it loads nothing from the network. Every file in the history folder "
        "must be a valid summary. Exit 0, 2 on bad input. See docs/gate.md.",
    )
    add_root_argument(site)
    add_history_argument(site)
    add_baseline_argument(site, "baseline file the runs are compared with, relative to --root "
                          "(default baseline.json; when that is absent, each task is compared "
                          "with its own earlier runs; a named file must exist)")
    site.add_argument("--out", required=True, metavar="DIR",
                      help="folder to write index.html into (created if missing; relative to "
                      "the current folder)")
    site.add_argument("--title", default="ci-eval dashboard", help="the page's title")
    add_json_argument(site, "print what was written as JSON")
    site.set_defaults(handler=run_site)

    drift = sub.add_parser(
        "drift",
        help="the tasks drifted on the default branch for N recorded runs in a row",
        description="Read the run summaries of the default branch in --history and name the "
        "tasks that fell below their baseline (drifted) in each of their last N recorded runs, "
        "N being ci-eval.yaml's gate.drift_refresh_after (default 3): their baseline is due a "
        "refresh. The scheduled baseline workflow runs just those tasks and opens a refresh "
        "pull request; nothing updates baseline.json by itself. --github-output writes the "
        "output `tasks` (space-separated, empty: none). Exit 0, 2 on bad input. See "
        "docs/lifecycle.md.",
    )
    add_root_argument(drift)
    add_history_argument(drift)
    drift.add_argument("--github-output", action="store_true",
                       help="also write the output `tasks` to $GITHUB_OUTPUT")
    add_json_argument(drift, "print JSON")
    drift.set_defaults(handler=run_drift)

    fetch = sub.add_parser(
        "fetch",
        help="download the run summaries of the last successful eval runs on GitHub",
        description="Download the ci-eval-history artifacts (the run summaries report mode "
        "uploads on the default branch) of the last --limit successful runs of --workflow on "
        "the default branch, through the GitHub REST API (GITHUB_TOKEN with actions: read, "
        "GITHUB_API_URL), and write each, validated, as a new file in --out (created if "
        "missing; summaries already there are not written twice). Runs without the artifact "
        "and expired artifacts are skipped with a note. A hostile or broken archive or summary "
        "stops the fetch, naming the run, before anything is written. Exit 0, 2 on bad input "
        "or when GitHub refuses.",
    )
    fetch.add_argument("--out", required=True, metavar="DIR",
                       help="history folder to write into (relative to the current folder)")
    fetch.add_argument("--limit", type=bounded_int(MAX_FETCH_RUNS), default=10, metavar="N",
                       help="successful runs to look at, newest first (default 10, the GC's "
                       f"window; at most {MAX_FETCH_RUNS})")
    fetch.add_argument("--workflow", default="eval.yml", metavar="FILE",
                       help="file name (or id) of the eval workflow (default eval.yml)")
    fetch.add_argument("--branch", metavar="BRANCH",
                       help="branch whose runs count (default: the repository's default branch)")
    add_repo_argument(fetch)
    add_json_argument(fetch, "print what was fetched as JSON")
    fetch.set_defaults(handler=run_fetch)


def run_record(args: argparse.Namespace) -> int:
    import datetime as dt
    import json
    import os
    from pathlib import Path

    from ci_eval.agents.harness_of import harness_files_of
    from ci_eval.github.context import summary_commit
    from ci_eval.results import history
    from ci_eval.results.stream import agent_of, require_runs
    from ci_eval.verdict.gc import parse_day
    from ci_eval.verdict.run_summary import summary_of_results

    root = Path(args.root)
    day = parse_day(args.date, field="--date")
    loaded = require_runs(root / args.results)
    agent = agent_of(loaded)
    summary = summary_of_results(
        loaded, k=None, day=day, now=dt.datetime.now(dt.timezone.utc),
        commit=summary_commit(args.commit, root), agent=agent,
        harness_files=harness_files_of(root)(agent) if agent else None,
        ci_run=history.ci_run_from_env(os.environ))
    path = history.write_summary(history_dir(args), summary)
    if args.json:
        print(json.dumps({"path": str(path), "summary": summary.to_json()}, indent=2,
                         ensure_ascii=False))
        return 0
    print(f"wrote {path}: {len(summary.tasks)} task(s): {history.status_tally(summary)}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    import json

    from ci_eval.render import trend
    from ci_eval.render.terminal import simple_table
    from ci_eval.results.history import load_history

    folder = history_dir(args)
    summaries = load_history(folder, missing_ok=args.history is None)
    recent = summaries[-args.limit:]
    rows = trend.trend_rows(summaries, args.limit)
    if args.json:
        print(json.dumps({
            "history": str(folder),
            "recorded_runs": len(summaries),
            "shown": [{"file": s.source, "date": s.date, "recorded_at": s.recorded_at,
                       "commit": s.commit, "agent": s.agent} for s in recent],
            "tasks": rows,
        }, indent=2, ensure_ascii=False))
        return 0
    print(f"{folder}: {trend.window_note(summaries, args.limit)}")
    if rows:
        table = [[r["task"], r["sparkline"], r["counts"], r["last_status"] or "—"] for r in rows]
        print(simple_table(table, ["Task", "Trend", "Runs (oldest first)", "Last"]))
    return 0


def run_site(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ci_eval.agents.config_file import load_config
    from ci_eval.output import ensure_dir, write_atomic
    from ci_eval.render.dashboard import dashboard_data
    from ci_eval.render.site import read_library, render_site, site_counts, site_line
    from ci_eval.results.history import load_history
    from ci_eval.verdict.archive import archived_tasks
    from ci_eval.verdict.baseline import existing_baseline, load_baseline

    folder = history_dir(args)
    summaries = load_history(folder, missing_ok=args.history is None)
    path = existing_baseline(Path(args.root), args.baseline)
    baseline = load_baseline(path) if path else None
    data = dashboard_data(summaries, baseline=baseline, archived=archived_tasks(Path(args.root)),
                          refresh_after=load_config(Path(args.root)).gate.drift_refresh_after)
    out = ensure_dir(Path(args.out), field="--out")
    page = out / "index.html"
    write_atomic(page, render_site(data, read_library(), title=args.title), field="--out")
    counts = site_counts(data)
    if args.json:
        print(json.dumps({"path": str(page), **counts,
                          "baseline": str(path) if baseline else None}, indent=2))
        return 0
    print(f"wrote {page}: {site_line(counts)}")
    return 0


def run_drift(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from ci_eval.agents.config_file import load_config
    from ci_eval.github import actions
    from ci_eval.results.history import load_history
    from ci_eval.render.site import drift_refresh_lines
    from ci_eval.verdict.main_drift import refresh_due

    after = load_config(Path(args.root)).gate.drift_refresh_after
    summaries = load_history(history_dir(args), missing_ok=args.history is None)
    due = refresh_due(summaries, after)
    if args.github_output:
        actions.set_outputs({"tasks": " ".join(d.task for d in due)})
    print(json.dumps({"after": after, "recorded_runs": len(summaries),
                      "tasks": [d.to_json() for d in due]}, indent=2) if args.json
          else "\n".join(drift_refresh_lines(due, after, len(summaries))))
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    import json
    import os
    from pathlib import Path

    from ci_eval.errors import UserError
    from ci_eval.github import client
    from ci_eval.github.history_artifacts import fetch_history

    repository = args.repo or os.environ.get("GITHUB_REPOSITORY")
    if not repository or repository.count("/") != 1:
        raise UserError("no repository (set GITHUB_REPOSITORY or pass --repo OWNER/NAME)"
                        if not repository else f"expected OWNER/NAME, got {repository!r}",
                        field="--repo")
    workflow = args.workflow.rsplit("/", 1)[-1]  # .github/workflows/eval.yml -> eval.yml
    report = fetch_history(client.make_client(), repository, out=Path(args.out),
                           workflow=workflow, branch=args.branch, limit=args.limit)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
        return 0
    print(f"{report.out}: fetched {report.count('fetched')} run summary(ies) from "
          f"{len(report.notes)} successful run(s) of {report.workflow} on {report.branch}"
          f" ({report.count('already')} already there, {report.count('skipped')} skipped)")
    return 0
