import os

import pytest
from webapp.static import Forbidden, resolve_static


@pytest.fixture
def root(tmp_path):
    static = tmp_path / "static"
    (static / "css").mkdir(parents=True)
    (static / "css" / "site.css").write_text("body {}")
    (static / "release..notes.txt").write_text("notes")
    (static / "docs").mkdir()
    (static / "docs" / "a..b").mkdir()
    (static / "docs" / "a..b" / "index.html").write_text("<p>")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "secrets.toml").write_text("token = 'x'")
    (tmp_path / "static-private").mkdir()
    (tmp_path / "static-private" / "keys.txt").write_text("k")
    os.symlink(tmp_path / "config", static / "cfg")
    os.symlink(tmp_path / "config" / "secrets.toml", static / "css" / "theme.css")
    return static


@pytest.mark.parametrize(
    "path",
    [
        "../config/secrets.toml",
        "css/../../config/secrets.toml",
        "../static-private/keys.txt",
        "/../static-private/keys.txt",
        "cfg/secrets.toml",
        "css/theme.css",
    ],
    ids=["dotdot", "nested-dotdot", "sibling-prefix", "leading-slash-sibling", "symlinked-dir", "symlinked-file"],
)
def test_outside_root_is_forbidden(root, path):
    with pytest.raises(Forbidden):
        resolve_static(root, path)


def test_absolute_path_is_forbidden(root, tmp_path):
    with pytest.raises((Forbidden, FileNotFoundError)):
        resolve_static(root, str(tmp_path / "config" / "secrets.toml"))
    with pytest.raises((Forbidden, FileNotFoundError)):
        resolve_static(root, "/etc/passwd")


def test_legitimate_paths(root):
    assert resolve_static(root, "css/site.css").read_text() == "body {}"
    assert resolve_static(root, "/css/site.css").read_text() == "body {}"
    assert resolve_static(root, "release..notes.txt").read_text() == "notes"
    assert resolve_static(root, "docs/a..b/index.html").read_text() == "<p>"
    assert resolve_static(root, "css/../css/site.css").read_text() == "body {}"


def test_missing_file_still_not_found(root):
    with pytest.raises(FileNotFoundError):
        resolve_static(root, "css/missing.css")
