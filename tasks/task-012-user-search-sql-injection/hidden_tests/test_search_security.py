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
