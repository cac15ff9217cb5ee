"""Upgrade a contacts database to schema v2.

Usage: python migrate.py path/to/contacts.db
"""

import sqlite3
import sys


def migrate(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE contacts ADD COLUMN email TEXT")
    # Older sqlite builds cannot DROP COLUMN, so rebuild the table without the fax column.
    conn.executescript(
        """
        CREATE TABLE contacts_new (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            email TEXT
        );
        INSERT INTO contacts_new (id, name, email) SELECT id, name, email FROM contacts;
        DROP TABLE contacts;
        ALTER TABLE contacts_new RENAME TO contacts;
        CREATE INDEX idx_contacts_email ON contacts(email);
        """
    )
    conn.commit()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    conn = sqlite3.connect(argv[1])
    try:
        migrate(conn)
    finally:
        conn.close()
    print(f"{argv[1]}: migrated to v2")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
