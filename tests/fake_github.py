"""A loopback GitHub REST API for tests: a threaded HTTP server on 127.0.0.1 with its state in memory.

    with FakeGitHub() as fake:                      # or the `fake_github` fixture
        fake.add_token("t0k", "alice")              # a personal token: GET /user answers alice
        fake.add_token("ghs_1", "github-actions[bot]", installation=True)  # GET /user is 403
        fake.add_pull("acme/widgets", 7)
        gh = github.Github(base_url=fake.url, auth=github.Auth.Token("t0k"))
        fake.fail("POST", r"/issues/7/comments$", 502)          # the next matching request fails
        fake.fail("GET", r"/comments", 429, headers={"Retry-After": "3"})
        fake.deny("POST", r"/pulls$", "GitHub Actions is not permitted to create ...")  # always

It serves what ci-eval uses and PyGithub sends: GET /user, POST /graphql (viewer.login, and a
comment's isMinimized / minimizedReason by node id; `minimize`, and the unminimizeComment
mutation that would undo it), a repo,
its issues and their comments (paginated with Link headers, per_page honoured up to 100),
comment PATCH, pulls (list with state/head/base filters, create, PATCH), workflow runs of a
workflow (branch/event/status filters; `add_run`), a run by id and its jobs (paginated, as
GitHub's jobs API answers; `add_jobs`), a run's artifacts (`add_artifact`; expired
ones answer 410) and an artifact's zip: a 302 to a signed second path of this server, as GitHub
redirects to a short-lived storage URL, which -- as Azure storage does -- answers 400 to a
request that carries an Authorization header. Every `url` in an answer
is built from the server's own address, since PyGithub asserts that it follows only those.
A pull request can only be opened for a head branch that exists in `git_remote` (a bare repo
path), as GitHub requires. `requests` records (method, path, headers) of every request;
`graphql` every GraphQL query sent; `bodies[comment_id]` every body a comment had, oldest first.
`with_pull_request_7(fake)` (the `github_pr_7` fixture) is the usual setup: the workflow's token
and pull request 7 of acme/widgets. What each API path answers is in tests/fake_github_routes.py.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest
from fake_github_routes import Call, Reply, answer, error, storage


@dataclass
class Rule:
    method: str
    pattern: re.Pattern
    status: int
    headers: dict
    message: str
    times: int | None  # None: forever
    page: str | None = None  # answer this text/html page instead of GitHub's JSON error


@dataclass
class State:
    tokens: dict = field(default_factory=dict)  # token -> (login, installation?)
    users: dict = field(default_factory=dict)  # login -> id
    issues: dict = field(default_factory=dict)  # (repo, number) -> {"comments": [ids]}
    comments: dict = field(default_factory=dict)  # id -> comment dict (without urls)
    pulls: dict = field(default_factory=dict)  # (repo, number) -> pull dict
    runs: dict = field(default_factory=dict)  # repo -> [run dicts]
    artifacts: dict = field(default_factory=dict)  # run id -> [artifact dicts]
    blobs: dict = field(default_factory=dict)  # artifact id -> zip bytes
    jobs: dict = field(default_factory=dict)  # (repo, run id) -> [job dicts]
    next_id: int = 1000


class FakeGitHub:
    def __init__(self, git_remote: str | None = None):
        self.state = State()
        self.rules: list[Rule] = []
        self.requests: list[tuple[str, str, dict]] = []
        self.graphql: list[str] = []  # every GraphQL query (or mutation) sent
        self.bodies: dict[int, list[str]] = {}  # comment id -> every body it had, oldest first
        self.git_remote = git_remote
        self.lock = threading.RLock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- setting up ----------------------------------------------------------------------------

    def _id(self) -> int:
        with self.lock:
            self.state.next_id += 1
            return self.state.next_id

    def add_token(self, token: str, login: str, *, installation: bool = False) -> None:
        with self.lock:
            self.state.tokens[token] = (login, installation)
            self.state.users.setdefault(login, self._id())

    def add_pull(self, repo: str, number: int, *, head: str = "feature", base: str = "main",
                 head_repo: str | None = None, body: str = "",
                 files: list[str] | None = None) -> None:
        """files: the paths GET /pulls/N/files lists (None: that route answers 404)."""
        with self.lock:
            self.state.issues[(repo, number)] = {"comments": []}
            self.state.pulls[(repo, number)] = {
                "number": number, "state": "open", "title": f"PR {number}", "body": body,
                "head": {"ref": head, "repo": head_repo or repo}, "base": {"ref": base},
                "user": "alice", "files": files}

    def add_comment(self, repo: str, number: int, login: str, body: str) -> int:
        with self.lock:
            self.state.users.setdefault(login, self._id())
            comment_id = self._id()
            self.state.comments[comment_id] = {"id": comment_id, "user": login, "body": body,
                                               "repo": repo, "issue": number}
            self.bodies[comment_id] = [body]
            self.state.issues.setdefault((repo, number), {"comments": []})["comments"].append(
                comment_id)
            return comment_id

    def add_run(self, repo: str, *, workflow: str, branch: str, conclusion: str = "success",
                artifacts: dict[str, bytes] | None = None, expired: bool = False,
                event: str = "push", head_repo: str | None = None,
                created_at: str | None = None) -> int:
        """A finished workflow run (the newest so far) with artifacts {name: zip bytes}."""
        with self.lock:
            run_id = self._id()
            number = len(self.state.runs.get(repo, [])) + 1
            self.state.runs.setdefault(repo, []).insert(0, {
                "id": run_id, "workflow": workflow, "head_branch": branch, "status": "completed",
                "conclusion": conclusion, "run_number": number, "event": event,
                "head_repo": head_repo or repo,
                "created_at": created_at or f"2026-01-{min(number, 28):02d}T12:00:00Z"})
            self.state.artifacts[run_id] = []
            for name, blob in (artifacts or {}).items():
                self.add_artifact(run_id, name, blob, expired=expired)
            return run_id

    def add_jobs(self, repo: str, run_id: int, jobs: list[tuple[str, str | None]]) -> list[str]:
        """The jobs of workflow run `run_id` ([(name, conclusion)], in order): served at
        /actions/runs/{run_id}/jobs (and the run itself, if add_run did not make it); their
        html_urls, as GitHub builds them (.../actions/runs/{run_id}/job/{job_id})."""
        with self.lock:
            listed = self.state.jobs.setdefault((repo, run_id), [])
            urls = []
            for name, conclusion in jobs:
                job_id = self._id()
                listed.append({"id": job_id, "name": name, "conclusion": conclusion})
                urls.append(f"{self.url}/{repo}/actions/runs/{run_id}/job/{job_id}")
            return urls

    def add_artifact(self, run_id: int, name: str, blob: bytes, *, expired: bool = False,
                     size: int | None = None) -> int:
        """An artifact of a run; `size` overrides the size_in_bytes the listing claims."""
        with self.lock:
            repo = next(r for r, runs in self.state.runs.items()
                        if any(run["id"] == run_id for run in runs))
            artifact_id = self._id()
            self.state.artifacts.setdefault(run_id, []).append(
                {"id": artifact_id, "name": name, "expired": expired, "repo": repo,
                 "size_in_bytes": len(blob) if size is None else size})
            self.state.blobs[artifact_id] = blob
            return artifact_id

    def minimize(self, comment_id: int, reason: str = "outdated") -> None:
        """Hide a comment, as "Hide" on GitHub does (GraphQL minimizeComment); the REST answers
        do not change, GraphQL IssueComment.isMinimized / minimizedReason do."""
        with self.lock:
            self.state.comments[comment_id]["minimized"] = reason

    def fail(self, method: str, path_regex: str, status: int, *, headers: dict | None = None,
             message: str = "Server Error", times: int | None = 1,
             page: str | None = None) -> None:
        """The next `times` requests matching answer `status` (None: every one), with GitHub's
        JSON error, or with `page` as text/html (a proxy's or a captive portal's page)."""
        with self.lock:
            self.rules.append(Rule(method, re.compile(path_regex), status, headers or {},
                                   message, times, page))

    def deny(self, method: str, path_regex: str, message: str = "Resource not accessible by "
             "integration") -> None:
        self.fail(method, path_regex, 403, message=message, times=None)

    # --- reading back ----------------------------------------------------------------------------

    def comments_on(self, repo: str, number: int) -> list[dict]:
        with self.lock:
            ids = self.state.issues.get((repo, number), {"comments": []})["comments"]
            return [dict(self.state.comments[i]) for i in ids]

    def pulls_of(self, repo: str) -> list[dict]:
        with self.lock:
            return [dict(p) for (r, _), p in sorted(self.state.pulls.items()) if r == repo]

    def calls(self, method: str, path_regex: str) -> list[str]:
        return [p for m, p, _ in self.requests if m == method and re.search(path_regex, p)]

    # --- JSON shapes ------------------------------------------------------------------------------

    def user_json(self, login: str) -> dict:
        return {"login": login, "id": self.state.users.get(login, 1),
                "type": "Bot" if login.endswith("[bot]") else "User",
                "url": f"{self.url}/users/{login}"}

    def comment_json(self, c: dict) -> dict:
        repo = c["repo"]
        return {"id": c["id"], "node_id": f"IC_kwDO{c['id']}", "body": c["body"],
                "user": self.user_json(c["user"]),
                "url": f"{self.url}/repos/{repo}/issues/comments/{c['id']}",
                "html_url": f"{self.url}/{repo}/pull/{c['issue']}#issuecomment-{c['id']}",
                "issue_url": f"{self.url}/repos/{repo}/issues/{c['issue']}",
                "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}

    def pull_json(self, repo: str, p: dict) -> dict:
        n = p["number"]
        return {"number": n, "id": n, "state": p["state"], "title": p["title"], "body": p["body"],
                "url": f"{self.url}/repos/{repo}/pulls/{n}",
                "html_url": f"{self.url}/{repo}/pull/{n}",
                "issue_url": f"{self.url}/repos/{repo}/issues/{n}",
                "user": self.user_json(p["user"]),
                "head": {"ref": p["head"]["ref"], "label": f"{p['head']['repo'].split('/')[0]}:"
                         f"{p['head']['ref']}", "repo": self.repo_json(p["head"]["repo"])},
                "base": {"ref": p["base"]["ref"], "repo": self.repo_json(repo)}}

    def repo_json(self, repo: str) -> dict:
        owner, name = repo.split("/", 1)
        return {"full_name": repo, "name": name, "id": abs(hash(repo)) % 10**6,
                "owner": self.user_json(owner), "url": f"{self.url}/repos/{repo}",
                "html_url": f"{self.url}/{repo}", "default_branch": "main"}

    def issue_json(self, repo: str, number: int) -> dict:
        return {"number": number, "id": number, "title": f"PR {number}",
                "url": f"{self.url}/repos/{repo}/issues/{number}",
                "html_url": f"{self.url}/{repo}/pull/{number}",
                "comments_url": f"{self.url}/repos/{repo}/issues/{number}/comments"}

    def run_json(self, repo: str, r: dict) -> dict:
        base = f"{self.url}/repos/{repo}/actions/runs/{r['id']}"
        return {"id": r["id"], "name": r["workflow"], "head_branch": r["head_branch"],
                "status": r["status"], "conclusion": r["conclusion"],
                "run_number": r["run_number"], "run_attempt": 1, "event": r["event"],
                "created_at": r["created_at"], "updated_at": r["created_at"],
                "head_sha": "0" * 40, "head_repository": self.repo_json(r["head_repo"]),
                "url": base, "html_url": f"{self.url}/{repo}/actions/runs/{r['id']}",
                "artifacts_url": f"{base}/artifacts", "jobs_url": f"{base}/jobs"}

    def job_json(self, repo: str, run_id: int, j: dict) -> dict:
        base = f"{self.url}/repos/{repo}/actions"
        return {"id": j["id"], "run_id": run_id, "run_url": f"{base}/runs/{run_id}",
                "run_attempt": 1, "node_id": f"CR_{j['id']}", "head_sha": "0" * 40,
                "head_branch": "feature", "url": f"{base}/jobs/{j['id']}",
                "html_url": f"{self.url}/{repo}/actions/runs/{run_id}/job/{j['id']}",
                "status": "completed" if j["conclusion"] else "in_progress",
                "conclusion": j["conclusion"], "created_at": "2026-01-01T12:00:00Z",
                "started_at": "2026-01-01T12:00:00Z",
                "completed_at": "2026-01-01T12:01:00Z" if j["conclusion"] else None,
                "name": j["name"], "steps": [], "labels": ["ubuntu-latest"],
                "check_run_url": f"{self.url}/repos/{repo}/check-runs/{j['id']}",
                "runner_id": 1, "runner_name": "GitHub Actions 1", "runner_group_id": 1,
                "runner_group_name": "GitHub Actions", "workflow_name": "ci-eval"}

    def artifact_json(self, a: dict) -> dict:
        return {"id": a["id"], "name": a["name"], "expired": a["expired"],
                "size_in_bytes": a["size_in_bytes"],
                "url": f"{self.url}/repos/{a['repo']}/actions/artifacts/{a['id']}",
                "archive_download_url":
                    f"{self.url}/repos/{a['repo']}/actions/artifacts/{a['id']}/zip"}


# --- the HTTP front door: injected failures, the storage host, the token, the JSON body ---------

def _injected(fake: FakeGitHub, method: str, path: str) -> Reply | None:
    """The answer of the first live `fail` / `deny` rule that matches, which it uses up."""
    for rule in fake.rules:
        if rule.method == method and rule.pattern.search(path) and rule.times != 0:
            if rule.times is not None:
                rule.times -= 1
            if rule.page is not None:
                return Reply(rule.status, headers=rule.headers, raw=rule.page.encode(),
                             content_type="text/html; charset=utf-8")
            return error(rule.status, rule.message, rule.headers)
    return None


class Handler(BaseHTTPRequestHandler):
    """A request is recorded in `fake.requests`, then meets, in this order: the `fail` / `deny`
    rules, the storage host (/_blob/...: no token), the token (401), the JSON body (400), and
    last, under `fake.lock`, the route tables of fake_github_routes."""

    protocol_version = "HTTP/1.1"
    fake: FakeGitHub  # set by handler_class

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PATCH(self):
        self._dispatch("PATCH")

    def _send(self, reply: Reply) -> None:
        body = reply.raw if reply.raw else (
            b"" if reply.data is None else json.dumps(reply.data).encode())
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (reply.headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _dispatch(self, method: str) -> None:
        fake = self.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parsed = urlparse(self.path)
        path, query = parsed.path, {k: v[-1] for k, v in parse_qs(parsed.query).items()}
        fake.requests.append((method, self.path, dict(self.headers)))
        with fake.lock:
            injected = _injected(fake, method, path)
            if injected is not None:
                return self._send(injected)
        if path.startswith("/_blob/"):
            return self._send(storage(fake, path, query, self.headers))
        auth = self.headers.get("Authorization", "")
        token = auth.split(" ", 1)[1] if " " in auth else ""
        who = fake.state.tokens.get(token)
        if who is None:
            return self._send(error(401, "Bad credentials"))
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError:
            return self._send(error(400, "Problems parsing JSON"))
        with fake.lock:
            return self._send(answer(Call(fake, method, query, payload, *who), path))


def handler_class(fake: FakeGitHub) -> type[Handler]:
    """The request handler class of `fake`'s server."""
    return type("Handler", (Handler,), {"fake": fake})


@pytest.fixture
def fake_github():
    with FakeGitHub() as fake:
        yield fake


def with_pull_request_7(fake: FakeGitHub, token: str = "ghs_bot") -> FakeGitHub:
    """`fake` with the workflow's token (github-actions[bot], an installation token: GET /user
    is 403) and pull request 7 of acme/widgets, with no comments yet."""
    fake.add_token(token, "github-actions[bot]", installation=True)
    fake.add_pull("acme/widgets", 7)
    return fake


@pytest.fixture
def github_pr_7(fake_github):
    """The fake with the workflow's token and pull request 7 (with_pull_request_7)."""
    return with_pull_request_7(fake_github)
