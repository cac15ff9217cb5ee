"""Untracked: .env, __pycache__/, dist/, logs; ignored by a .gitignore; .env kept; .env.example tracked.

"Can't get committed again by anyone on the team" means the rules travel with the repo: only
.gitignore files that are in the index count, with the content staged there (a .gitignore left
untracked, or hidden through .git/info/exclude or a core.excludesFile set in .git/config, protects
one clone only). The rules must also cover folders that do not exist yet (a new package's
__pycache__/), not only the folders that hold junk today.
"""

import subprocess
import tempfile
from pathlib import Path

from ci_eval.checks import failed, main, passed, task_dir

ORIGINAL_ENV = (task_dir() / "repo-state" / ".env").read_bytes()
MUST_BE_IGNORED = [
    ".env",
    "shop/__pycache__/settings.cpython-311.pyc",
    "shop/payments/__pycache__/stripe.cpython-312.pyc",
    "tests/__pycache__/test_settings.cpython-311-pytest-8.3.2.pyc",
    # folders that do not exist yet: a rule per folder of today's junk misses them
    "__pycache__/conftest.cpython-312-pytest-8.3.2.pyc",
    "api/__pycache__/client.cpython-312.pyc",
    "dist/shop-0.4.0.tar.gz",
    "dist/shop-0.5.0-py3-none-any.whl",
    "debug.log",
    "logs/worker.log",
]
MUST_NOT_BE_IGNORED = [".env.example", "shop/settings.py", "tests/test_settings.py", "README.md",
                       "shop/payments/stripe.py", "logs/README.md"]
MUST_STAY_TRACKED = [".env.example", "shop/__init__.py", "shop/settings.py",
                     "tests/test_settings.py", "README.md"]


def git(*args: str, cwd: str | Path = ".") -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30,
                          check=False)


def check_tracking():
    listed = git("ls-files", "-z")
    if listed.returncode != 0:
        return failed(f"git ls-files failed: {listed.stderr.strip()}")
    tracked = set(filter(None, listed.stdout.split("\0")))
    bad = sorted(
        p for p in tracked
        if p == ".env" or "__pycache__/" in p or p.endswith((".pyc", ".log"))
        or p.startswith("dist/")
    )
    if bad:
        return failed(f"still tracked by git (in the index): {bad}")
    lost = [p for p in MUST_STAY_TRACKED if p not in tracked]
    if lost:
        return failed(f"no longer tracked, but they belong in the repo: {lost}")
    return passed("junk untracked, sources still tracked")


def check_local_env_kept():
    env = Path(".env")
    if not env.is_file():
        return failed("the local .env file was deleted from disk")
    if env.read_bytes() != ORIGINAL_ENV:
        return failed("the local .env file was changed")
    return passed("local .env kept as it was")


def check_ignore_rules():
    """The committable ignore rules (.gitignore files in the index), not local-only ones, must
    cover the junk."""
    listed = git("ls-files", "-z")
    tracked = [p for p in listed.stdout.split("\0") if p and Path(p).name == ".gitignore"]
    if not tracked:
        untracked = [p for p in Path(".").rglob(".gitignore") if ".git" not in p.parts[:-1]]
        hint = f" ({', '.join(map(str, untracked))} exists but is not added)" if untracked else ""
        return failed("no .gitignore in the repo: nothing stops the team from committing these "
                      f"files again{hint}")
    with tempfile.TemporaryDirectory() as tmp:
        git("init", "-q", "--template=", tmp)
        for source in tracked:
            staged = subprocess.run(["git", "cat-file", "blob", f":{source}"], capture_output=True,
                                    timeout=30, check=False)
            if staged.returncode != 0:
                return failed(f"cannot read the staged {source}: {staged.stderr.decode()[:200]}")
            target = Path(tmp) / source
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(staged.stdout)
        paths = MUST_BE_IGNORED + MUST_NOT_BE_IGNORED
        proc = subprocess.run(
            ["git", "-c", "core.excludesFile=/dev/null", "check-ignore", "--no-index", "--stdin"],
            cwd=tmp, input="\n".join(paths) + "\n", capture_output=True, text=True, timeout=30,
            check=False,
        )
        if proc.returncode not in (0, 1):
            return failed(f"git check-ignore failed: {proc.stderr.strip()}")
        ignored = set(proc.stdout.splitlines())
    not_ignored = [p for p in MUST_BE_IGNORED if p not in ignored]
    wrongly = [p for p in MUST_NOT_BE_IGNORED if p in ignored]
    if not_ignored:
        return failed(f".gitignore does not ignore {not_ignored}")
    if wrongly:
        return failed(f".gitignore also ignores files that belong in the repo: {wrongly}")
    return passed(".gitignore covers the junk and nothing else")


main(check_tracking, check_local_env_kept, check_ignore_rules)
