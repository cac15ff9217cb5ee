"""User directory search (GET /users?q=...&sort=...&desc=...)."""

import sqlite3


def search_users(conn: sqlite3.Connection, q: str, sort: str = "name", descending: bool = False):
    """Users whose name starts with `q` (case-insensitive), as (id, name, email) tuples."""
    direction = "DESC" if descending else "ASC"
    sql = (
        "SELECT id, name, email FROM users "
        f"WHERE name LIKE '{q}%' ORDER BY {sort} {direction}"
    )
    return conn.execute(sql).fetchall()
