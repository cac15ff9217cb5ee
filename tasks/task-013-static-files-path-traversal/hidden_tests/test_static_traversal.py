import os

import pytest
from webapp.static import Forbidden, resolve_static


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """One tree for the whole module (the tests only read it): building it per test is slow."""
    tmp_path = tmp_path_factory.mktemp("site")
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
    os.symlink(os.path.join("..", "..", "config"), static / "docs" / "up")  # relative, leads out
    os.symlink(os.path.join("..", "static-private"), static / "private")  # a sibling, by link
    # links that stay inside root are ordinary content
    os.symlink(os.path.join("css", "site.css"), static / "latest.css")
    os.symlink(static / "css", static / "assets")
    # two hops: each link on its own stays inside root, the chain leads out
    os.symlink("hop-b", static / "hop-a")
    os.symlink(os.path.join("..", "config"), static / "hop-b")
    os.symlink(os.path.join("css", "hop-file-b"), static / "hop-file-a")
    os.symlink(tmp_path / "config" / "secrets.toml", static / "css" / "hop-file-b")
    os.symlink("hop-inside-b", static / "hop-inside-a")  # two hops that stay inside: served
    os.symlink("css", static / "hop-inside-b")
    # names that hold percent escapes: the path arrives decoded once, a second decoding loses them
    (static / "50%25off.txt").write_text("sale")
    (static / "docs" / "caf%C3%A9.html").write_text("menu")
    (static / "%2e%2e").mkdir()
    (static / "%2e%2e" / "literal.txt").write_text("dots")
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
        "docs/up/secrets.toml",
        "private/keys.txt",
        "hop-a/secrets.toml",
        "hop-file-a",
    ],
    ids=["dotdot", "nested-dotdot", "sibling-prefix", "leading-slash-sibling", "symlinked-dir",
         "symlinked-file", "relative-symlink", "symlink-to-sibling", "two-hop-dir-link",
         "two-hop-file-link"],
)
def test_outside_root_is_forbidden(root, path):
    with pytest.raises(Forbidden):
        resolve_static(root, path)


def test_absolute_path_is_forbidden(root):
    with pytest.raises((Forbidden, FileNotFoundError)):
        resolve_static(root, str(root.parent / "config" / "secrets.toml"))
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


def test_symlinks_that_stay_inside_root_are_served(root):
    assert resolve_static(root, "latest.css").read_text() == "body {}"
    assert resolve_static(root, "assets/site.css").read_text() == "body {}"
    assert resolve_static(root, "hop-inside-a/site.css").read_text() == "body {}"


def test_names_with_percent_escapes_are_served_as_named(root):
    """The request path is already percent-decoded: decoding it again is a different file."""
    assert resolve_static(root, "50%25off.txt").read_text() == "sale"
    assert resolve_static(root, "docs/caf%C3%A9.html").read_text() == "menu"
    assert resolve_static(root, "%2e%2e/literal.txt").read_text() == "dots"
    with pytest.raises(FileNotFoundError):
        resolve_static(root, "50%off.txt")


def test_root_given_through_a_symlink_or_with_a_trailing_slash(root, tmp_path):
    link = tmp_path / "www"  # outside the shared tree
    os.symlink(root, link)
    for base in (link, str(link), str(root) + "/"):
        assert resolve_static(base, "css/site.css").read_text() == "body {}"
        with pytest.raises(Forbidden):
            resolve_static(base, "../config/secrets.toml")
        with pytest.raises(Forbidden):
            resolve_static(base, "../static-private/keys.txt")
