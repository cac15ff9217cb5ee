import sqlite3
from pathlib import Path

import pytest
from directory.search import search_users

SCHEMA = (Path.cwd() / "directory" / "schema.sql").read_text()
PEOPLE = [
    (1, "Ada Lovelace", "ada@example.org", "2024-01-02"),
    (2, "Adam Smith", "adam@example.org", "2023-05-06"),
    (3, "O'Brien, Pat", "pat@example.org", "2021-01-01"),
    (4, "100% Club", "club@example.org", "2020-01-01"),
    (5, "1000 Users Inc", "k@example.org", "2020-02-02"),
    (6, "a_b test", "ab@example.org", "2019-01-01"),
    (7, "axb test", "axb@example.org", "2019-02-02"),
    (8, "back\\slash", "bs@example.org", "2018-01-01"),
    (9, "backXslash", "bx@example.org", "2018-02-02"),
    (10, "zed", "zed@example.org", "2017-01-01"),
]


@pytest.fixture
def db():
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO users VALUES (?, ?, ?, ?)", PEOPLE)
    conn.execute("INSERT INTO api_tokens VALUES (1, 'tok-secret-1')")
    conn.commit()
    return conn


def names(rows):
    return [row[1] for row in rows]


def test_injection_through_q_returns_nothing(db):
    for payload in ["' OR '1'='1", "x' OR 1=1 --", "zzz' UNION SELECT user_id, token, token FROM api_tokens --"]:
        rows = search_users(db, payload)
        assert rows == [], payload
    assert db.execute("SELECT count(*) FROM users").fetchone()[0] == len(PEOPLE)


def test_injection_through_sort_is_rejected(db):
    for sort in [
        "name; DROP TABLE users",
        "(CASE WHEN (SELECT substr(token, 1, 1) FROM api_tokens) = 't' THEN name ELSE email END)",
        "name --",
        "password",
        "NAME ",
        # not one of name, email, created, however harmless it looks
        "", "e", "mail", "id", "rowid", "1", "name, email", "created DESC", "email ASC",
    ]:
        with pytest.raises(ValueError):
            search_users(db, "", sort=sort)
    assert db.execute("SELECT count(*) FROM users").fetchone()[0] == len(PEOPLE)


def test_apostrophe(db):
    assert names(search_users(db, "O'Brien")) == ["O'Brien, Pat"]
    assert names(search_users(db, "o'b")) == ["O'Brien, Pat"]


def test_wildcards_are_literal(db):
    assert names(search_users(db, "100%")) == ["100% Club"]
    assert names(search_users(db, "a_b")) == ["a_b test"]
    assert names(search_users(db, "back\\")) == ["back\\slash"]
    assert search_users(db, "%") == []
    assert search_users(db, "_") == []


def test_existing_behaviour(db):
    assert search_users(db, "ada") == [(1, "Ada Lovelace", "ada@example.org"), (2, "Adam Smith", "adam@example.org")]
    assert names(search_users(db, "Ada", sort="email", descending=True)) == ["Adam Smith", "Ada Lovelace"]
    assert [r[0] for r in search_users(db, "", sort="created")] == [10, 8, 9, 6, 7, 4, 5, 3, 2, 1]
    assert len(search_users(db, "")) == len(PEOPLE)


MORE_PEOPLE = PEOPLE + [
    (11, "Dr. [Who]", "who@example.org", "2016-01-01"),
    (12, "50_50 Ltd", "fifty@example.org", "2016-02-02"),
    (13, "x!y^z", "xyz@example.org", "2016-03-03"),
    (14, '"Quoted" Name', "q@example.org", "2016-04-04"),
    (15, "Tab\tName", "tab@example.org", "2016-05-05"),
    (16, "semi;colon -- x", "semi@example.org", "2016-06-06"),
    (17, "ADAM ALLCAPS", "caps@example.org", "2016-07-07"),
    (18, "%percent first", "pf@example.org", "2016-08-08"),
]


def expected(q, sort, descending):
    """A literal, ASCII case-insensitive prefix match, sorted in Python (ids break no ties: the
    sort keys used here are unique)."""
    column = {"name": 1, "email": 2, "created": 3}[sort]
    rows = [r for r in MORE_PEOPLE if r[1].lower().startswith(q.lower())]
    rows.sort(key=lambda r: r[column], reverse=descending)
    return [r[:3] for r in rows]


def fuzz_queries(seed=2012):
    import random

    rng = random.Random(seed)
    names = [r[1] for r in MORE_PEOPLE]
    specials = "'\"%_\\[]!^;-* \t"
    for _ in range(400):
        if rng.random() < 0.6:  # a prefix of a real name, case shuffled
            name = rng.choice(names)
            q = "".join(c.upper() if rng.random() < 0.5 else c.lower()
                        for c in name[: rng.randint(0, len(name))])
        else:  # random text, mostly special characters
            q = "".join(rng.choice(specials + "adz10") for _ in range(rng.randint(1, 5)))
        yield q, rng.choice(["name", "email", "created"]), rng.random() < 0.5


def test_literal_prefix_fuzz():
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    conn.executemany("INSERT INTO users VALUES (?, ?, ?, ?)", MORE_PEOPLE)
    conn.execute("INSERT INTO api_tokens VALUES (1, 'tok-secret-1')")
    wrong = {}
    for q, sort, descending in fuzz_queries():
        got = [tuple(r) for r in search_users(conn, q, sort=sort, descending=descending)]
        want = expected(q, sort, descending)
        if got != want and len(wrong) < 5:
            wrong[(q, sort, descending)] = [r[1] for r in got]
    assert not wrong, f"(q, sort, descending): names returned, where they differ from a literal prefix: {wrong}"


def test_the_callers_connection_is_left_as_it_was(db):
    """The connection belongs to the caller (the web app's request handler): its row factory,
    its text factory and its open transaction are not the search's to change."""
    db.execute("INSERT INTO users VALUES (99, 'Pending Person', 'p@example.org', '2025-01-01')")
    assert db.in_transaction
    assert names(search_users(db, "pend")) == ["Pending Person"]
    assert db.row_factory is None and db.text_factory is str
    assert db.in_transaction, "the search committed or rolled back the caller's transaction"
    assert type(db.execute("SELECT id FROM users WHERE id = 99").fetchone()) is tuple
    db.rollback()
    assert search_users(db, "pend") == []
