import sqlite3
from pathlib import Path

from migrate import migrate

SCHEMA_V1 = (Path(__file__).parent.parent / "schema_v1.sql").read_text()


def test_fresh_database_gets_email_column():
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA_V1)
    migrate(conn)
    columns = [row[1] for row in conn.execute("PRAGMA table_info(contacts)")]
    assert "email" in columns
    assert "fax" not in columns
