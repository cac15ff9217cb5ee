"""The token push of the baseline and archive PRs: git sends CI_EVAL_PR_TOKEN's header, never the
one a checkout with persist-credentials left in .git/config, and GIT_CONFIG_* entries already
in the environment survive. Real git against a loopback HTTP server that records the headers."""

from __future__ import annotations

import base64
import http.server
import subprocess
import threading

import pytest

from ci_eval.errors import UserError
from ci_eval.github import pulls


class Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_GET(self):
        Recorder.seen.append(self.headers.get("Authorization", ""))
        self.send_response(404)
        self.end_headers()

    do_POST = do_GET

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    Recorder.seen = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def basic(token: str) -> str:
    return "basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()


def test_the_pr_token_wins_over_a_persisted_checkout_header(tmp_path, server, monkeypatch):
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "--quiet", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@x",
                    "commit", "--quiet", "--allow-empty", "-m", "x"], check=True)
    # what actions/checkout writes with persist-credentials: true (its default)
    subprocess.run(["git", "-C", str(repo), "config", "--local",
                    f"http.{server}/.extraheader", f"AUTHORIZATION: {basic('ghs_checkout')}"],
                   check=True)
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")  # a setting of the user's own, kept
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "http.userAgent")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "users-own-agent")
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    with pytest.raises(UserError, match="git push failed"):
        pulls.push(repo, head, "ci-eval/baseline-refresh", remote=f"{server}/acme/widgets.git",
                   token="ghp_pr_token")
    assert Recorder.seen and set(Recorder.seen) == {basic("ghp_pr_token")}, Recorder.seen


def test_token_config_appends_after_the_entries_already_set():
    env = pulls.token_config("https://github.com/acme/widgets.git", "t",
                             {"GIT_CONFIG_COUNT": "2"})
    assert env["GIT_CONFIG_COUNT"] == "5"
    assert "GIT_CONFIG_KEY_0" not in env and "GIT_CONFIG_KEY_1" not in env
    assert [env[f"GIT_CONFIG_KEY_{i}"] for i in (2, 3, 4)] == [
        "http.extraheader", "http.https://github.com/.extraheader",
        "http.https://github.com/.extraheader"]
    assert [env[f"GIT_CONFIG_VALUE_{i}"] for i in (2, 3)] == ["", ""]
    assert env["GIT_CONFIG_VALUE_4"] == f"AUTHORIZATION: {basic('t')}"
