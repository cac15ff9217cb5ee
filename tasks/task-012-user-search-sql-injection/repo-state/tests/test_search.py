from directory.search import search_users


def test_prefix(conn):
    assert [row[1] for row in search_users(conn, "Ada")] == ["Ada Lovelace", "Adam Smith"]


def test_case_insensitive(conn):
    assert [row[1] for row in search_users(conn, "grace")] == ["Grace Hopper"]


def test_sort_descending(conn):
    rows = search_users(conn, "", sort="created", descending=True)
    assert [row[0] for row in rows] == [1, 2, 3]
