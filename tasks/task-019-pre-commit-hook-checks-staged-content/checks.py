"""The pre-commit hook judges the staged content: keys and >1 MB files refused (file named),
deletions and odd file names fine, unstaged working-tree content ignored.

Each scenario is a real `git commit` in a scratch repository whose core.hooksPath points at a copy
of the workspace's .githooks/. Beyond the reported cases: private keys of other PEM types (EC,
PKCS#8, encrypted PKCS#8, DSA), a key under a non-ASCII name (git quotes it unless -z is used),
and sizes that differ between the index and the working copy in both directions. Also: a key
that arrives by renaming a tracked file (git lists it as R, not A or M), a key indented inside
another file, and a size counted in bytes (600 K two-byte characters are 1.2 MB).
"""

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from ci_eval.checks import failed, main, passed

KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
HARMLESS = "just text\n"
RUNBOOK = "".join(f"{n}. step {n} of the deploy runbook\n" for n in range(1, 41))
OTHER_KEYS = {  # "contains a private key": not only the two kinds reported
    "deploy/ec.pem": KEY.replace("OPENSSH", "EC"),
    "deploy/pkcs8.pem": KEY.replace("OPENSSH ", ""),
    "deploy/backup.pem": KEY.replace("OPENSSH", "ENCRYPTED"),
    "deploy/id_dsa": KEY.replace("OPENSSH", "DSA"),
}
ENV = {
    **os.environ,
    "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "check", "GIT_AUTHOR_EMAIL": "check@example.invalid",
    "GIT_COMMITTER_NAME": "check", "GIT_COMMITTER_EMAIL": "check@example.invalid",
}


class Repo:
    def __init__(self, root: Path, hooks: Path):
        self.root = root
        root.mkdir(parents=True)
        self.git("init", "-q", "--template=", "-b", "main")
        self.git("config", "core.hooksPath", str(hooks))
        self.write("README.md", "base\n")
        self.write("old name.txt", "to be deleted\n")
        self.write("notes/runbook.md", RUNBOOK)
        self.git("add", "-A")
        self.git("commit", "-q", "--no-verify", "-m", "base")

    def git(self, *args: str) -> subprocess.CompletedProcess:
        proc = subprocess.run(["git", *args], cwd=self.root, env=ENV, capture_output=True,
                              text=True, timeout=30, check=False)
        if proc.returncode != 0 and args[0] != "commit":
            raise RuntimeError(f"git {' '.join(args)}: {proc.stderr}")
        return proc

    def write(self, name: str, content) -> None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)

    def reset(self) -> None:
        self.git("reset", "-q", "--hard", "HEAD")
        self.git("clean", "-q", "-fdx")

    def commit(self) -> subprocess.CompletedProcess:
        return self.git("commit", "-q", "-m", "scenario")


def scenarios(repo: Repo):
    """(description, should_commit, name_to_report) after preparing the repo for each scenario."""

    def stage(name, content):
        repo.write(name, content)
        repo.git("add", "--", name)

    def key_staged():
        stage("deploy/id_ed25519", KEY)
    yield "a staged private key", key_staged, False, "id_ed25519"

    def key_by_rename():
        (repo.root / "deploy").mkdir(exist_ok=True)
        repo.git("mv", "notes/runbook.md", "deploy/id_rsa")
        stage("deploy/id_rsa", RUNBOOK + KEY.replace("OPENSSH", "RSA"))  # mostly the same lines
    yield ("a tracked file renamed to deploy/id_rsa with a key added (git lists it as a rename)",
           key_by_rename, False, "id_rsa")

    def key_inside_a_file():
        stage("config/deploy.yaml", "service: api\nssh_key: |\n" + "".join(
            f"  {line}\n" for line in KEY.splitlines()))
    yield "a key inside a YAML file, indented", key_inside_a_file, False, "deploy.yaml"

    def big_in_bytes_not_characters():
        stage("docs/glossary.md", "\u00e9" * (600 * 1024))  # 600 K characters, 1.2 MB
    yield ("a staged 1.2 MB text file of 600 K two-byte characters", big_in_bytes_not_characters,
           False, "glossary.md")

    def key_staged_then_cleaned():
        stage("deploy/id_ed25519", KEY)
        repo.write("deploy/id_ed25519", HARMLESS)  # working tree clean, index still has the key
    yield "a staged key whose working copy was overwritten", key_staged_then_cleaned, False, "id_ed25519"

    def key_with_space():
        stage("keys/prod key.pem", KEY.replace("OPENSSH", "RSA"))
    yield "a staged key named 'prod key.pem'", key_with_space, False, "prod key.pem"

    def other_key_types():
        for name, content in OTHER_KEYS.items():
            stage(name, content)
    yield "staged EC, PKCS#8, encrypted and DSA keys", other_key_types, False, tuple(OTHER_KEYS)

    def odd_name_and_shrunk_copy():
        stage("clés/prod.key", KEY)
        stage("assets/huge.bin", b"\1" * (2 * 1024 * 1024))
        repo.write("assets/huge.bin", b"")  # the index still holds 2 MB
    yield ("a key named 'clés/prod.key' and a staged 2 MB file whose working copy was emptied",
           odd_name_and_shrunk_copy, False, ("prod.key", "huge.bin"))

    def big_file():
        stage("assets/dump.bin", b"\0" * (1024 * 1024 + 512 * 1024))
    yield "a staged 1.5 MB file", big_file, False, "dump.bin"

    def harmless_with_unstaged_key():
        stage("notes.txt", HARMLESS)
        repo.write("README.md", KEY)  # modified but NOT staged: not part of the commit
        stage("CHANGES.md", HARMLESS)
        repo.write("CHANGES.md", "x" * (2 * 1024 * 1024))  # only the working copy is big
    yield "a harmless commit while an unstaged file holds a key", harmless_with_unstaged_key, True, None

    def space_name():
        stage("docs/design notes.md", "# notes\n")
    yield "a file named 'design notes.md'", space_name, True, None

    def deletion():
        repo.git("rm", "-q", "--", "old name.txt")
    yield "a commit that deletes a file", deletion, True, None

    def medium_file():
        stage("assets/logo.png", b"\x89PNG" + b"\1" * (900 * 1024))
    yield "a 900 KB file", medium_file, True, None


def names(name) -> tuple:
    return name if isinstance(name, tuple) else (name,)


def check_hook():
    hook = Path(".githooks/pre-commit")
    if not hook.is_file():
        return failed(".githooks/pre-commit is missing")
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        hooks = Path(tmp) / "hooks"
        shutil.copytree(".githooks", hooks)
        for entry in hooks.iterdir():
            entry.chmod(entry.stat().st_mode | stat.S_IXUSR)
        repo = Repo(Path(tmp) / "repo", hooks)
        for description, prepare, should_commit, name in scenarios(repo):
            repo.reset()
            prepare()
            head = repo.git("rev-parse", "HEAD").stdout
            proc = repo.commit()
            committed = repo.git("rev-parse", "HEAD").stdout != head
            output = proc.stdout + proc.stderr
            if should_commit and not committed:
                problems.append(f"{description}: commit refused: {output.strip()[-200:]!r}")
            elif not should_commit and committed:
                problems.append(f"{description}: commit went through")
            elif not should_commit and any(n not in output for n in names(name)):
                missing = [n for n in names(name) if n not in output]
                problems.append(f"{description}: refused without naming {missing}: "
                                f"{output.strip()[-200:]!r}")
            elif not should_commit and "Traceback" in output:
                problems.append(f"{description}: refused by a crash, not a verdict")
            if problems:
                break  # each scenario is a real commit: the first wrong verdict is the reason
    if problems:
        return failed("; ".join(problems))
    return passed("the hook judges exactly the staged content")


main(check_hook)
