"""The dashboard (`ci-eval history site`): one static, offline HTML page of the recorded runs.

    page = render_site(site_data(summaries, archived), library=read_library())

What it shows, from the run summaries of a history folder (results/history.py), oldest first:
  - the suite's pass rate and each task's, per CI run;
  - cost per CI run (USD, all tasks) and wall time per agent run (s), where the runs recorded it;
  - flaky tasks: over the whole window, pass@k against pass^k (k: the runs asked per CI run),
    the tasks that both pass and fail, the widest gap first;
  - archived tasks (archive/ and the lines of archive/ARCHIVE-LOG.md naming them).
Offline and inert: the charting library (uPlot, vendored under render/vendor/uplot/, see its
VENDORED.md) and the data are inlined; a Content-Security-Policy forbids every fetch; the data
sits in a JSON script element with <, > and & escaped, and the page's script writes text with
textContent only, so no recorded string becomes markup.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from ci_eval.results import stats
from ci_eval.results.history import RunSummary, tasks_in

UPLOT_VERSION = "1.6.32"
VENDOR = ("vendor", "uplot")
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data:")


@dataclass(frozen=True)
class Library:
    script: str
    css: str


def read_library() -> Library:
    """The vendored uPlot (package data of ci_eval.render)."""
    folder = resources.files("ci_eval.render").joinpath(*VENDOR)
    return Library(folder.joinpath("uPlot.iife.min.js").read_text(encoding="utf-8"),
                   folder.joinpath("uPlot.min.css").read_text(encoding="utf-8"))


def _rate(passes: int, runs: int) -> float | None:
    return round(passes / runs, 4) if runs else None


def _total(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def flaky_tasks(summaries: Sequence[RunSummary]) -> list[dict]:
    """Tasks that both passed and failed over the window: pooled runs n, passes c, k (the most
    common number of runs asked per CI run), pass@k and pass^k; the widest gap first."""
    rows = []
    for task in tasks_in(summaries):
        records = [s.tasks[task] for s in summaries if task in s.tasks]
        n = sum(r.runs for r in records)
        c = sum(r.passes for r in records)
        if not 0 < c < n:
            continue
        k = min(n, Counter(r.requested for r in records).most_common(1)[0][0])
        at_k, hat_k = stats.pass_at_k(n, c, k), stats.pass_hat_k(n, c, k)
        rows.append({"task": task, "runs": n, "passes": c, "k": k,
                     "pass_rate": round(c / n, 4), "pass_at_k": round(at_k, 4),
                     "pass_hat_k": round(hat_k, 4), "gap": round(at_k - hat_k, 4)})
    return sorted(rows, key=lambda row: (-row["gap"], row["task"]))


def site_data(summaries: Sequence[RunSummary], archived: Sequence[dict] = ()) -> dict:
    """Everything the page draws, as plain JSON-able data (pure)."""
    tasks = tasks_in(summaries)
    runs = []
    before = None  # the harness digest of the last run that recorded one
    for s in summaries:
        digest = (s.harness or {}).get("digest")
        records = list(s.tasks.values())
        valid = sum(r.runs for r in records)
        attempts = valid + sum(r.errors for r in records)
        wall = _total([r.wall_seconds for r in records])
        runs.append({
            "date": s.date, "recorded_at": s.recorded_at, "commit": s.commit, "agent": s.agent,
            "url": (s.ci_run or {}).get("url"), "source": s.source,
            "passes": sum(r.passes for r in records), "runs": valid,
            "pass_rate": _rate(sum(r.passes for r in records), valid),
            "cost_usd": _total([r.cost_usd for r in records]),
            "tokens": _total([r.tokens for r in records]),
            "wall_per_run": round(wall / attempts, 3) if wall is not None and attempts else None,
            "harness": digest[:12] if digest else None,
            "harness_changed": bool(digest and before and digest != before),
        })
        before = digest or before
    per_task = {task: [_rate(s.tasks[task].passes, s.tasks[task].runs) if task in s.tasks
                       else None for s in summaries] for task in tasks}
    return {"runs": runs, "tasks": per_task, "flaky": flaky_tasks(summaries),
            "archived": list(archived), "uplot_version": UPLOT_VERSION}


def _script_json(data: dict) -> str:
    """JSON that cannot end its <script> element or open markup."""
    text = json.dumps(data, ensure_ascii=True, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_site(data: dict, library: Library, *, title: str = "ci-eval dashboard") -> str:
    safe_title = (title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    return (PAGE.replace("{{TITLE}}", safe_title)
            .replace("{{CSP}}", CSP)
            .replace("{{UPLOT_CSS}}", library.css.replace("</", "<\\/"))
            .replace("{{UPLOT_JS}}", library.script.replace("</script", "<\\/script"))
            .replace("{{DATA}}", _script_json(data)))


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{TITLE}}</title>
<style>{{UPLOT_CSS}}</style>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1f2328; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.note { color: #59636e; } .chart { margin: 8px 0 4px; }
table { border-collapse: collapse; margin: 6px 0; } td, th { border: 1px solid #d1d9e0;
padding: 3px 8px; text-align: left; } th { background: #f6f8fa; } td.num { text-align: right; }
code { font: 12px ui-monospace, monospace; }
</style>
</head>
<body>
<h1>{{TITLE}}</h1>
<p class="note" id="summary"></p>
<h2>Pass rate per CI run</h2>
<p class="note">The suite (all tasks' valid runs pooled, bold) and each task; hover for values.</p>
<div class="chart" id="pass-chart"></div>
<h2>Cost and wall time per CI run</h2>
<div class="chart" id="cost-chart"></div>
<div class="chart" id="wall-chart"></div>
<h2>Flaky tasks (pass^k against pass@k)</h2>
<p class="note">Tasks that both passed and failed over these runs. pass@k: the chance that at
least one of k runs passes; pass^k: that all k pass (unbiased, over the pooled runs).</p>
<div id="flaky"></div>
<h2>Archived tasks</h2>
<div id="archived"></div>
<h2>Runs</h2>
<div id="runs"></div>
<script>{{UPLOT_JS}}</script>
<script type="application/json" id="ci-eval-data">{{DATA}}</script>
<script>
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("ci-eval-data").textContent);
  const runs = data.runs;
  const el = (tag, text, cls) => { const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls; return node; };
  const table = (parent, headers, rows) => {
    const t = el("table"), head = el("tr");
    headers.forEach((h) => head.appendChild(el("th", h))); t.appendChild(head);
    rows.forEach((cells) => { const tr = el("tr");
      cells.forEach((c) => tr.appendChild(el("td", c[0], c[1] ? "num" : ""))); t.appendChild(tr); });
    parent.appendChild(t); };
  const pct = (v) => (v === null || v === undefined) ? "—" : (100 * v).toFixed(1) + "%";
  const first = runs.length ? runs[0].date : "", last = runs.length ? runs[runs.length - 1].date : "";
  document.getElementById("summary").textContent = runs.length
    ? runs.length + " CI run(s), " + first + " … " + last + "; " + Object.keys(data.tasks).length
      + " task(s); charts by uPlot " + data.uplot_version
    : "No run summaries recorded yet.";
  const width = Math.max(480, Math.min(1100, document.body.clientWidth - 40));
  const xs = runs.map((r) => Date.parse(r.recorded_at) / 1000);
  const palette = (i, n) => "hsl(" + Math.round(360 * i / Math.max(1, n)) + ",65%,45%)";
  if (runs.length) {
    const names = Object.keys(data.tasks);
    const series = [{}, { label: "suite", stroke: "#1f2328", width: 3,
      value: (u, v) => pct(v) }];
    names.forEach((name, i) => series.push({ label: name, stroke: palette(i, names.length),
      width: 1, value: (u, v) => pct(v) }));
    const rows = [xs, runs.map((r) => r.pass_rate)].concat(names.map((n) => data.tasks[n]));
    new uPlot({ width: width, height: 320, series: series, scales: { y: { range: [0, 1] } },
      axes: [{}, { values: (u, ticks) => ticks.map((t) => Math.round(100 * t) + "%") }] },
      rows, document.getElementById("pass-chart"));
    new uPlot({ width: width, height: 220, series: [{}, { label: "cost per CI run (USD)",
      stroke: "#b35900", width: 2, fill: "rgba(179,89,0,0.08)",
      value: (u, v) => v === null ? "—" : "$" + v.toFixed(4) }],
      axes: [{}, { values: (u, ticks) => ticks.map((t) => "$" + t) }] },
      [xs, runs.map((r) => r.cost_usd)], document.getElementById("cost-chart"));
    new uPlot({ width: width, height: 220, series: [{}, { label: "wall per agent run (s)",
      stroke: "#0a6e8a", width: 2, value: (u, v) => v === null ? "—" : v.toFixed(1) + " s" }] },
      [xs, runs.map((r) => r.wall_per_run)], document.getElementById("wall-chart"));
  }
  const flaky = document.getElementById("flaky");
  if (data.flaky.length) {
    table(flaky, ["Task", "Runs", "Pass rate", "k", "pass@k", "pass^k", "gap"],
      data.flaky.map((f) => [[f.task], [f.runs, 1], [pct(f.pass_rate), 1], [f.k, 1],
        [pct(f.pass_at_k), 1], [pct(f.pass_hat_k), 1], [pct(f.gap), 1]]));
  } else { flaky.appendChild(el("p", "No task both passed and failed in these runs.", "note")); }
  const archived = document.getElementById("archived");
  if (data.archived.length) {
    table(archived, ["Task", "Archive log"], data.archived.map((a) => [[a.task], [a.log || "—"]]));
  } else { archived.appendChild(el("p", "No archived tasks.", "note")); }
  const list = document.getElementById("runs");
  table(list, ["Date", "Commit", "Agent", "Harness", "Pass rate", "Cost (USD)", "Wall / run",
    "Summary"],
    runs.slice().reverse().map((r) => [[r.date], [r.commit ? r.commit.slice(0, 12) : "—"],
      [r.agent || "—"], [r.harness ? r.harness + (r.harness_changed ? " (changed)" : "") : "—"],
      [pct(r.pass_rate) + " (" + r.passes + "/" + r.runs + ")", 1],
      [r.cost_usd === null ? "—" : r.cost_usd.toFixed(4), 1],
      [r.wall_per_run === null ? "—" : r.wall_per_run.toFixed(1) + " s", 1], [r.source || "—"]]));
  document.body.setAttribute("data-rendered", String(document.querySelectorAll("canvas").length));
})();
</script>
</body>
</html>
"""
