"""The docs site (mkdocs.yml): it builds with `mkdocs build --strict` (a broken link between
pages, a broken anchor, a link to a repository file that does not exist, or a page left out of
the nav each fail the build, as the controls below show), and the generated command reference
(docs/reference/commands.md) is the one the CLI's parsers give today."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HAS_MKDOCS = importlib.util.find_spec("mkdocs") is not None
needs_mkdocs = pytest.mark.skipif(
    not HAS_MKDOCS, reason="LOUD SKIP: mkdocs is not installed (pip install -e '.[test]'): the "
    "docs site is not built")


def build(root: Path, out: Path) -> subprocess.CompletedProcess:
    """No -q: it raises mkdocs' log level above WARNING, and --strict counts only the warnings
    that are logged (a quiet strict build passes with broken links; the controls catch that)."""
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "-f", str(root / "mkdocs.yml"), "-d", str(out)],
                          capture_output=True, text=True, timeout=300, check=False, cwd=root)


@pytest.fixture
def copy(tmp_path):
    """The site's sources in a temp folder: mkdocs.yml, docs/, the hook, tasks/README.md."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    (root / "tasks").mkdir()
    shutil.copy(REPO / "mkdocs.yml", root)
    shutil.copy(REPO / "scripts" / "mkdocs_repo_links.py", root / "scripts")
    shutil.copy(REPO / "tasks" / "README.md", root / "tasks")
    shutil.copytree(REPO / "docs", root / "docs")
    return root


@needs_mkdocs
def test_the_site_builds_strict(tmp_path):
    done = build(REPO, tmp_path / "site")
    assert done.returncode == 0, done.stderr[-3000:]
    index = (tmp_path / "site" / "index.html").read_text()
    # a link out of docs/ goes to the file on GitHub
    assert 'href="https://github.com/ci-eval/ci-eval/blob/main/tasks/README.md"' in index
    assert (tmp_path / "site" / "reference" / "commands" / "index.html").is_file()
    assert not (REPO / "site").exists()


@needs_mkdocs
def test_a_broken_link_fails_the_build(copy, tmp_path):
    """Each kind of broken link is named (one build: strict mode reports every warning)."""
    page = copy / "docs" / "checks-lint.md"
    page.write_text(page.read_text() + "\nSee [a](no-such-page.md), [b](gate.md#no-such-section)"
                    " and [c](../ci_eval/no_such_module.py).\n")
    done = build(copy, tmp_path / "site")
    assert done.returncode != 0, done.stderr[-3000:]
    for named in ("no-such-page.md", "no-such-section", "no_such_module.py"):
        assert named in done.stderr, done.stderr[-3000:]


@needs_mkdocs
def test_a_page_left_out_of_the_nav_fails_the_build(copy, tmp_path):
    (copy / "docs" / "orphan.md").write_text("# Orphan\n")
    done = build(copy, tmp_path / "site")
    assert done.returncode != 0 and "orphan.md" in done.stderr, done.stderr[-3000:]
    (copy / "docs" / "orphan.md").unlink()
    assert build(copy, tmp_path / "site2").returncode == 0


def test_links_in_code_are_left_alone_and_repo_files_are_rewritten():
    spec = importlib.util.spec_from_file_location("repo_links",
                                                  REPO / "scripts" / "mkdocs_repo_links.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)

    class Page:
        class file:
            src_uri = "guide.md"

    config = {"docs_dir": str(REPO / "docs"), "config_file_path": str(REPO / "mkdocs.yml"),
              "repo_url": "https://github.com/o/r"}
    text = ("[t](../tasks/README.md#layout) `[c](../nope.md)` [p](gate.md) [w](https://x.y/z)\n"
            "```\n[f](../nope.md)\n```\n[d](../ci_eval/render)\n")
    out = hook.on_page_markdown(text, Page, config, None)
    assert out == ("[t](https://github.com/o/r/blob/main/tasks/README.md#layout) "
                   "`[c](../nope.md)` [p](gate.md) [w](https://x.y/z)\n"
                   "```\n[f](../nope.md)\n```\n[d](https://github.com/o/r/tree/main/ci_eval/render)\n")


def test_the_command_reference_is_current():
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "reference_pages.py"),
                           "--check"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr + (
        "\ndocs/reference/commands.md is stale: run python scripts/reference_pages.py")


def test_the_staleness_check_can_fail(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("reference_pages",
                                                  REPO / "scripts" / "reference_pages.py")
    reference = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reference)
    pages = tmp_path / "docs" / "reference"
    shutil.copytree(REPO / "docs" / "reference", pages)
    monkeypatch.setattr(reference, "REPO", tmp_path)
    monkeypatch.setattr(reference, "PAGES", pages)
    assert reference.main(["--check"]) == 0
    for name, old, new in (("commands.md", "`--max-runs N`", "`--max-runs M`"),
                           ("formats.md", "| `tasks.KEY.passes` |", "| `tasks.KEY.passed` |")):
        text = (pages / name).read_text()
        assert old in text
        (pages / name).write_text(text.replace(old, new))
        assert reference.main(["--check"]) == 1
        assert f"{name} is stale" in capsys.readouterr().err
        (pages / name).write_text(text)
    # every command and subcommand has its section, every schema its table
    commands = (REPO / "docs" / "reference" / "commands.md").read_text()
    for heading in ("### `ci-eval run`", "#### `ci-eval history site`",
                    "#### `ci-eval baseline update`", "`--baseline FILE`",
                    "### `ci-eval propose-archive`"):
        assert heading in commands
    formats = (REPO / "docs" / "reference" / "formats.md").read_text()
    for name in ("baseline", "failure-log", "metadata", "rubric", "run-summary"):
        assert f"## {name}\n" in formats
