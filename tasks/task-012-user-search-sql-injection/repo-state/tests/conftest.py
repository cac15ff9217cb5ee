import sqlite3
from pathlib import Path

import pytest

SCHEMA = (Path(__file__).resolve().parent.parent / "directory" / "schema.sql").read_text()


@pytest.fixture
def conn():
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    conn.executemany(
        "INSERT INTO users (id, name, email, created) VALUES (?, ?, ?, ?)",
        [
            (1, "Ada Lovelace", "ada@example.org", "2024-01-02"),
            (2, "Adam Smith", "adam@example.org", "2023-05-06"),
            (3, "Grace Hopper", "grace@example.org", "2022-03-04"),
        ],
    )
    conn.execute("INSERT INTO api_tokens VALUES (1, 'tok-secret-1')")
    return conn
