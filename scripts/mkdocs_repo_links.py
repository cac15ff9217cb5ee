"""mkdocs hook (mkdocs.yml `hooks:`): a relative link from a docs page to a file of the
repository outside docs/ (`../tasks/README.md`, `../ci_eval/render/site.py`) works on GitHub but
has no page on the site; it is rewritten to that file on GitHub (repo_url/blob/main/PATH). A
link to a repository file that does not exist is a warning, so `mkdocs build --strict` fails on
it as it does on a broken link between pages. Fenced code blocks and code spans are left alone.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path, PurePosixPath

log = logging.getLogger("mkdocs.plugins.ci_eval_repo_links")
BRANCH = "main"
_FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)
_LINK = re.compile(r"(!?\[[^\]\n]*\]\()([^)\s#]+)(#[^)\s]*)?(\))")
_CODE_SPAN = re.compile(r"(`+)[^`]*?\1")


def _rewrite(text: str, page_dir: PurePosixPath, docs: Path, repo: Path, url: str, page) -> str:
    def link(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
            return match.group(0)
        resolved = (docs / page_dir / target).resolve()
        if resolved.is_relative_to(docs.resolve()):
            return match.group(0)  # a page or file of the site: mkdocs validates it
        if not resolved.is_relative_to(repo.resolve()) or not resolved.exists():
            log.warning("Doc file '%s' links to '%s', which is not a file of the repository",
                        page.file.src_uri, target)
            return match.group(0)
        rel = resolved.relative_to(repo.resolve()).as_posix()
        kind = "tree" if resolved.is_dir() else "blob"
        return (f"{match.group(1)}{url.rstrip('/')}/{kind}/{BRANCH}/{rel}"
                f"{match.group(3) or ''}{match.group(4)}")

    # keep code spans out of reach: swap them for placeholders, rewrite, put them back
    spans: list[str] = []

    def hide(match: re.Match) -> str:
        spans.append(match.group(0))
        return f"\x00{len(spans) - 1}\x00"

    hidden = _CODE_SPAN.sub(hide, text)
    rewritten = _LINK.sub(link, hidden)
    return re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], rewritten)


def on_page_markdown(markdown: str, page, config, files) -> str:
    docs = Path(config["docs_dir"])
    repo = Path(config["config_file_path"]).parent
    url = config.get("repo_url") or ""
    page_dir = PurePosixPath(page.file.src_uri).parent
    parts = _FENCE.split(markdown)
    # split() with one group alternates text, fence marker, text...: text at even positions
    # outside a fence; track fences by counting markers
    out, inside = [], False
    for index, part in enumerate(parts):
        if index % 2 == 1:
            out.append(part)
            inside = not inside
            continue
        out.append(part if inside else _rewrite(part, page_dir, docs, repo, url, page))
    return "".join(out)
