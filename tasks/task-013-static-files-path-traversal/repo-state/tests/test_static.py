import pytest

from webapp.static import resolve_static


@pytest.fixture
def root(tmp_path):
    static = tmp_path / "static"
    (static / "css").mkdir(parents=True)
    (static / "css" / "site.css").write_text("body {}")
    return static


def test_serves_file(root):
    assert resolve_static(root, "css/site.css") == root / "css" / "site.css"


def test_missing_file(root):
    with pytest.raises(FileNotFoundError):
        resolve_static(root, "css/nope.css")
