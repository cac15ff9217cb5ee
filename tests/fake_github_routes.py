"""What tests/fake_github.py's server answers an authenticated request: its route tables.

`answer(call, path)` finds the first route of ROUTES whose method (None: any) and path regex
match; REPO_ROUTES are matched against what follows /repos/{owner}/{name}. A path no route takes
answers 404. A route's handler gets the request as a `Call` and the regex's groups, and gives back
a `Reply`; the JSON shapes are FakeGitHub's. `storage` answers the artifacts' storage host, which
takes no token.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fake_github import FakeGitHub

DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100
MAX_BODY = 65536  # the longest comment body GitHub takes
JSON = "application/json; charset=utf-8"


@dataclass
class Reply:
    status: int
    data: object = None  # sent as JSON; None: an empty body (unless `raw`)
    headers: dict | None = None
    raw: bytes = b""
    content_type: str = JSON


def error(status: int, message: str, headers: dict | None = None) -> Reply:
    """GitHub's JSON error."""
    return Reply(status, {"message": message, "status": str(status)}, headers)


def not_found() -> Reply:
    return error(404, "Not Found")


@dataclass
class Call:
    """An authenticated request, as a route's handler sees it."""
    fake: FakeGitHub
    method: str
    query: dict  # the URL's query, the last value of each name
    payload: dict  # the JSON body ({} when there is none)
    login: str
    installation: bool
    repo: str = ""  # owner/name, under /repos/


Route = tuple[str | None, re.Pattern, Callable[..., Reply]]


def _first(routes: list[Route], call: Call, path: str) -> Reply | None:
    for method, pattern, handler in routes:
        if (method is None or call.method == method) and (m := pattern.fullmatch(path)):
            return handler(call, *m.groups())
    return None


def _page(fake: FakeGitHub, items: list, query: dict, base_path: str) -> tuple[list, dict]:
    """One page of `items` (per_page, page) and its Link header, as GitHub paginates."""
    per_page = min(int(query.get("per_page", DEFAULT_PER_PAGE)), MAX_PER_PAGE)
    page = max(1, int(query.get("page", 1)))
    chunk = items[(page - 1) * per_page: page * per_page]
    last = max(1, -(-len(items) // per_page))
    links = []
    extra = "".join(f"&{k}={v}" for k, v in query.items() if k not in ("page", "per_page"))

    def link(n, rel):
        return f'<{fake.url}{base_path}?per_page={per_page}&page={n}{extra}>; rel="{rel}"'

    if page < last:
        links += [link(page + 1, "next"), link(last, "last")]
    if page > 1:
        links += [link(1, "first"), link(page - 1, "prev")]
    return chunk, ({"Link": ", ".join(links)} if links else {})


# --- users and repos ---------------------------------------------------------------------------

def user(call: Call) -> Reply:
    if call.installation:
        return error(403, "Resource not accessible by integration")
    return Reply(200, call.fake.user_json(call.login))


def repo(call: Call) -> Reply:
    return Reply(200, call.fake.repo_json(call.repo))


def repo_routes(call: Call, repo_name: str, rest: str | None) -> Reply:
    return _first(REPO_ROUTES, dataclasses.replace(call, repo=repo_name), rest or "") or \
        not_found()


# --- issues and their comments -----------------------------------------------------------------

def issue(call: Call, number: str) -> Reply:
    if (call.repo, int(number)) not in call.fake.state.issues:
        return not_found()
    return Reply(200, call.fake.issue_json(call.repo, int(number)))


def list_comments(call: Call, number: str) -> Reply:
    fake, n = call.fake, int(number)
    if (call.repo, n) not in fake.state.issues:
        return not_found()
    ids = fake.state.issues[(call.repo, n)]["comments"]
    items = [fake.comment_json(fake.state.comments[i]) for i in ids]
    chunk, headers = _page(fake, items, call.query, f"/repos/{call.repo}/issues/{n}/comments")
    return Reply(200, chunk, headers)


def create_comment(call: Call, number: str) -> Reply:
    fake = call.fake
    if (call.repo, int(number)) not in fake.state.issues:
        return not_found()
    body = call.payload.get("body", "")
    if len(body) > MAX_BODY:
        return error(422, f"Validation Failed: Body is too long (maximum is {MAX_BODY} "
                          "characters)")
    cid = fake.add_comment(call.repo, int(number), call.login, body)
    return Reply(201, fake.comment_json(fake.state.comments[cid]))


def _comment(call: Call, comment_id: str) -> dict | None:
    """The comment, if it is one of this repo's."""
    comment = call.fake.state.comments.get(int(comment_id))
    return None if comment is None or comment["repo"] != call.repo else comment


def show_comment(call: Call, comment_id: str) -> Reply:
    comment = _comment(call, comment_id)
    return not_found() if comment is None else Reply(200, call.fake.comment_json(comment))


def edit_comment(call: Call, comment_id: str) -> Reply:
    comment = _comment(call, comment_id)
    if comment is None:
        return not_found()
    if comment["user"] != call.login:
        return error(403, "You cannot edit another user's comment")
    if len(call.payload.get("body", "")) > MAX_BODY:
        return error(422, "Validation Failed: Body is too long")
    comment["body"] = call.payload.get("body", "")
    call.fake.bodies[comment["id"]].append(comment["body"])
    return Reply(200, call.fake.comment_json(comment))


# --- pull requests -----------------------------------------------------------------------------

def _listed(pull: dict, query: dict) -> bool:
    """Whether GET /pulls with these state / head / base filters lists `pull`."""
    if query.get("state", "open") != "all" and pull["state"] != query.get("state", "open"):
        return False
    if "head" in query:
        owner, _, ref = query["head"].partition(":")
        if pull["head"]["ref"] != ref or pull["head"]["repo"].split("/")[0] != owner:
            return False
    return "base" not in query or pull["base"]["ref"] == query["base"]


def list_pulls(call: Call) -> Reply:
    fake = call.fake
    found = [fake.pull_json(call.repo, p) for (r, _n), p in sorted(fake.state.pulls.items())
             if r == call.repo and _listed(p, call.query)]
    chunk, headers = _page(fake, found, call.query, f"/repos/{call.repo}/pulls")
    return Reply(200, chunk, headers)


def create_pull(call: Call) -> Reply:
    fake, repo_name = call.fake, call.repo
    head, base = call.payload.get("head", ""), call.payload.get("base", "")
    if fake.git_remote and not _branch_exists(fake.git_remote, head):
        return error(422, f"Validation Failed: head {head!r} does not exist")
    if any(p["head"]["ref"] == head and p["state"] == "open"
           for (r, _n), p in fake.state.pulls.items() if r == repo_name):
        return error(422, f"A pull request already exists for {head}.")
    number = max([n for (r, n) in fake.state.issues if r == repo_name] + [0]) + 1
    fake.state.issues[(repo_name, number)] = {"comments": []}
    pull = {"number": number, "state": "open", "title": call.payload.get("title", ""),
            "body": call.payload.get("body", ""), "head": {"ref": head, "repo": repo_name},
            "base": {"ref": base}, "user": call.login}
    fake.state.pulls[(repo_name, number)] = pull
    return Reply(201, fake.pull_json(repo_name, pull))


def not_allowed(call: Call) -> Reply:
    return error(405, "Method Not Allowed")


def show_pull(call: Call, number: str) -> Reply:
    pull = call.fake.state.pulls.get((call.repo, int(number)))
    return not_found() if pull is None else Reply(200, call.fake.pull_json(call.repo, pull))


def list_pull_files(call: Call, number: str) -> Reply:
    pull = call.fake.state.pulls.get((call.repo, int(number)))
    if pull is None or pull.get("files") is None:
        return not_found()
    found = [{"sha": "0" * 40, "filename": name, "status": "modified", "additions": 1,
              "deletions": 0, "changes": 1} for name in pull["files"]]
    chunk, headers = _page(call.fake, found, call.query,
                           f"/repos/{call.repo}/pulls/{number}/files")
    return Reply(200, chunk, headers)


def edit_pull(call: Call, number: str) -> Reply:
    pull = call.fake.state.pulls.get((call.repo, int(number)))
    if pull is None:
        return not_found()
    for key in ("title", "body", "state"):
        if key in call.payload:
            pull[key] = call.payload[key]
    return Reply(200, call.fake.pull_json(call.repo, pull))


# --- git: the remote a pull request's head branch must exist in --------------------------------

def _branch_exists(remote: str, branch: str) -> bool:
    done = subprocess.run(["git", "--git-dir", remote, "rev-parse", "--verify", "--quiet",
                           f"refs/heads/{branch}"], capture_output=True, check=False)
    return done.returncode == 0


# --- GraphQL -----------------------------------------------------------------------------------

def _comment_by_node(fake: FakeGitHub, node_id: str) -> dict | None:
    return next((c for c in fake.state.comments.values() if f"IC_kwDO{c['id']}" == node_id),
                None)


def viewer(call: Call) -> Reply:
    return Reply(200, {"data": {"viewer": {"login": call.login}}})


def minimized(call: Call) -> Reply:
    """node(id:) { ... on IssueComment { isMinimized minimizedReason } }."""
    node_id = str((call.payload.get("variables") or {}).get("id"))
    found = _comment_by_node(call.fake, node_id)
    if found is None:
        return Reply(200, {"data": {"node": None}, "errors": [{
            "type": "NOT_FOUND", "path": ["node"], "locations": [{"line": 1, "column": 20}],
            "message": f"Could not resolve to a node with the global id of '{node_id}'"}]})
    reason = found.get("minimized")
    return Reply(200, {"data": {"node": {"isMinimized": reason is not None,
                                         "minimizedReason": reason}}})


def unminimize(call: Call) -> Reply:
    """unminimizeComment(input: {subjectId}): shows the comment again."""
    variables = call.payload.get("variables") or {}
    found = _comment_by_node(call.fake, str(variables.get("id") or variables.get("subjectId")))
    if found is not None:
        found.pop("minimized", None)
    return Reply(200, {"data": {"unminimizeComment": {"unminimizedComment": {
        "isMinimized": False}}}})


# the first of these words the query holds picks its answer
GRAPHQL = [("unminimizeComment", unminimize), ("viewer", viewer), ("isMinimized", minimized)]


def graphql(call: Call) -> Reply:
    call.fake.graphql.append(call.payload.get("query", ""))
    text = call.payload.get("query", "")
    for word, answer in GRAPHQL:
        if word in text:
            return answer(call)
    return Reply(200, {"errors": [{"message": "unsupported query"}]})


# --- workflow runs, their jobs and artifacts ---------------------------------------------------

def runs(call: Call, workflow: str) -> Reply:
    fake, query = call.fake, call.query
    found = [r for r in fake.state.runs.get(call.repo, []) if r["workflow"] == workflow
             and r["head_branch"] == query.get("branch", r["head_branch"])
             and r["event"] == query.get("event", r["event"])
             and (query.get("status") in (None, r["conclusion"], r["status"]))]
    items = [fake.run_json(call.repo, r) for r in found]
    chunk, headers = _page(fake, items, query,
                           f"/repos/{call.repo}/actions/workflows/{workflow}/runs")
    return Reply(200, {"total_count": len(items), "workflow_runs": chunk}, headers)


def run(call: Call, run_id: str) -> Reply:
    fake, rid = call.fake, int(run_id)
    found = next((r for r in fake.state.runs.get(call.repo, []) if r["id"] == rid), None)
    if found is None and (call.repo, rid) in fake.state.jobs:  # a run known by its jobs only
        found = {"id": rid, "workflow": "eval.yml", "head_branch": "feature",
                 "status": "in_progress", "conclusion": None, "run_number": 1,
                 "event": "pull_request", "head_repo": call.repo,
                 "created_at": "2026-01-01T12:00:00Z"}
    if found is None:
        return not_found()
    return Reply(200, fake.run_json(call.repo, found))


def jobs(call: Call, run_id: str) -> Reply:
    fake, rid = call.fake, int(run_id)
    if not any(r["id"] == rid for r in fake.state.runs.get(call.repo, [])) and \
            (call.repo, rid) not in fake.state.jobs:
        return not_found()
    items = [fake.job_json(call.repo, rid, j) for j in fake.state.jobs.get((call.repo, rid), [])]
    chunk, headers = _page(fake, items, call.query,
                           f"/repos/{call.repo}/actions/runs/{rid}/jobs")
    return Reply(200, {"total_count": len(items), "jobs": chunk}, headers)


def artifacts(call: Call, run_id: str) -> Reply:
    arts = call.fake.state.artifacts.get(int(run_id), [])
    return Reply(200, {"total_count": len(arts),
                       "artifacts": [call.fake.artifact_json(a) for a in arts]})


def artifact_zip(call: Call, artifact_id: str) -> Reply:
    """A 302 to the storage host's signed URL, as GitHub redirects; 410 once it expired."""
    fake, aid = call.fake, int(artifact_id)
    if any(a["id"] == aid and a["expired"] for arts in fake.state.artifacts.values()
           for a in arts):
        return error(410, "Artifact has expired")
    return Reply(302, None, {"Location": f"{fake.url}/_blob/{aid}?sig={signature(aid)}"})


def signature(artifact_id: int) -> str:
    return hashlib.sha256(f"storage-{artifact_id}".encode()).hexdigest()[:16]


def storage(fake: FakeGitHub, path: str, query: dict, headers) -> Reply:
    """The storage host: its own signature, no token; as Azure storage, a 400 to a request that
    carries an Authorization header too."""
    artifact_id = int(path.rsplit("/", 1)[1])
    if query.get("sig") != signature(artifact_id):
        return error(403, "Signature did not match")
    if "Authorization" in headers:
        return error(400, "InvalidAuthenticationInfo: Authentication information is not given "
                          "in the correct format")
    return Reply(200, raw=fake.state.blobs.get(artifact_id, b""), content_type="application/zip")


# --- the tables --------------------------------------------------------------------------------

def _routes(*rows: tuple[str | None, str, Callable[..., Reply]]) -> list[Route]:
    return [(method, re.compile(pattern), handler) for method, pattern, handler in rows]


ROUTES = _routes(
    ("GET", r"/user", user),
    ("POST", r"/graphql", graphql),
    (None, r"/repos/([^/]+/[^/]+)(/.*)?", repo_routes),
)

REPO_ROUTES = _routes(
    ("GET", r"", repo),
    (None, r"/issues/(\d+)", issue),
    ("GET", r"/issues/(\d+)/comments", list_comments),
    ("POST", r"/issues/(\d+)/comments", create_comment),
    ("PATCH", r"/issues/comments/(\d+)", edit_comment),
    (None, r"/issues/comments/(\d+)", show_comment),
    ("GET", r"/pulls", list_pulls),
    ("POST", r"/pulls", create_pull),
    (None, r"/pulls", not_allowed),
    ("GET", r"/pulls/(\d+)/files", list_pull_files),
    ("PATCH", r"/pulls/(\d+)", edit_pull),
    (None, r"/pulls/(\d+)", show_pull),
    (None, r"/actions/workflows/([^/]+)/runs", runs),
    (None, r"/actions/runs/(\d+)", run),
    (None, r"/actions/runs/(\d+)/jobs", jobs),
    (None, r"/actions/runs/(\d+)/artifacts", artifacts),
    (None, r"/actions/artifacts/(\d+)/zip", artifact_zip),
)


def answer(call: Call, path: str) -> Reply:
    return _first(ROUTES, call, path) or not_found()
