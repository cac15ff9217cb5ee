"""The dashboard (`ci-eval history site`): one static, offline HTML page of the recorded runs.

    page = render_site(dashboard_data(summaries, baseline=..., archived=...), read_library())

What the page shows is computed in render/dashboard.py (pure); the page itself is the template
page/dashboard.html (package data), whose script only lays that data out. Offline and inert: the
charting library (uPlot, vendored under render/vendor/uplot/, see its VENDORED.md) and the data
are inlined; a Content-Security-Policy forbids every fetch; the data sits in a JSON script
element with <, > and & escaped, and the page's script writes recorded strings with textContent
(or as the `title` property) only, so no recorded string becomes markup.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources

from ci_eval.render.compare import fmt_rate

UPLOT_VERSION = "1.6.32"
VENDOR = ("vendor", "uplot")
PAGE = ("page", "dashboard.html")
PLACEHOLDER = re.compile(r"\{\{(TITLE|CSP|UPLOT_CSS|UPLOT_JS|DATA)\}\}")
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data:")


@dataclass(frozen=True)
class Library:
    script: str
    css: str


def read_library() -> Library:
    """The vendored uPlot (package data of ci_eval.render)."""
    folder = resources.files("ci_eval.render").joinpath("/".join(VENDOR))  # 3.10: one part
    return Library(folder.joinpath("uPlot.iife.min.js").read_text(encoding="utf-8"),
                   folder.joinpath("uPlot.min.css").read_text(encoding="utf-8"))


def _script_json(data: dict) -> str:
    """JSON that cannot end its <script> element or open markup."""
    text = json.dumps(data, ensure_ascii=True, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def read_page() -> str:
    """The page template (package data of ci_eval.render: page/dashboard.html)."""
    return resources.files("ci_eval.render").joinpath("/".join(PAGE)).read_text(encoding="utf-8")


def render_site(data: dict, library: Library, *, title: str = "ci-eval dashboard") -> str:
    """The page: the template with the title, the policy, the library and the data put in, in
    one pass (nothing put in is searched for placeholders again)."""
    safe_title = (title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    parts = {"TITLE": safe_title, "CSP": CSP,
             "UPLOT_CSS": library.css.replace("</", "<\\/"),
             "UPLOT_JS": library.script.replace("</script", "<\\/script"),
             "DATA": _script_json({**data, "uplot_version": UPLOT_VERSION})}
    return PLACEHOLDER.sub(lambda m: parts[m.group(1)], read_page())


def site_counts(data: dict) -> dict[str, int]:
    """What `history site` reports about the page it wrote: runs, tasks, worse since the
    baseline, drifted on main (its latest run), flaky, archived."""
    return {"runs": len(data["runs"]), "tasks": len(data["tasks"]),
            "worse": sum(1 for t in data["tasks"] if t["change"]["verdict"] == "worse"),
            "drifted": sum(1 for d in data["drift"] if d["latest"]["drifted"]),
            "flaky": len(data["flaky"]), "archived": len(data["archived"])}


def site_line(counts: dict[str, int]) -> str:
    return (f"{counts['runs']} run(s), {counts['tasks']} task(s), {counts['worse']} worse since "
            f"the baseline, {counts['drifted']} drifted on main, {counts['flaky']} flaky, "
            f"{counts['archived']} archived")


def drift_refresh_lines(due, after: int, recorded_runs: int) -> list[str]:
    """What `history drift` prints: the tasks drifted on main long enough for a refresh."""
    lines = [f"{len(due)} task(s) drifted on main in each of their last {after}+ recorded runs "
             f"(of {recorded_runs}): " + ("a baseline refresh is due" if due else "none")]
    lines += [f"  {d.task}: main {fmt_rate(d.passes, d.runs)} over {d.streak} runs, baseline "
              f"{fmt_rate(d.baseline_passes, d.baseline_runs)}" for d in due]
    return lines
