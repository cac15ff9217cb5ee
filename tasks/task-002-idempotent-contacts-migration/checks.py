"""migrate.py: idempotent, keeps every column but fax, refuses (untouched db) when fax holds data.

The planted database is generated from a fixed seed: ids with gaps (a rebuild that renumbers rows
is caught), NULL and non-ASCII values. The kept columns must keep their declared type, NOT NULL and
primary key (a CREATE TABLE ... AS SELECT copy keeps the data but not the schema). A database
left half way (email added, no index, fax still there with only '' and NULL) must be completed:
"already has email" is not "already migrated", and an empty string is not a fax number.
"""

import random
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from ci_eval.checks import failed, main, passed, task_dir

SCHEMA_V1 = (task_dir() / "repo-state" / "schema_v1.sql").read_text()
KEPT = ("id", "name", "phone", "created")
NAMES = ["Ada Lovelace", "Grace Hopper", "Alan Turing", "Edsger Dijkstra", "Zoë Brandt",
         "Søren Kierkegaard", "Chloé Martin", "Björn Ulvaeus", "李小龙", "O'Neil"]


def planted_rows(seed: int = 2002) -> list[tuple]:
    rng = random.Random(seed)
    ids = sorted(rng.sample(range(2, 500), 24))
    return [
        (row_id, rng.choice(NAMES),
         None if rng.random() < 0.3 else f"+{rng.randint(1, 99)} {rng.randint(100, 999)} "
                                         f"{rng.randint(1000, 9999)}",
         None,
         f"20{rng.randint(10, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
        for row_id in ids
    ]


ROWS = planted_rows()


def make_db(path: Path, rows) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA_V1)
    conn.executemany("INSERT INTO contacts VALUES (?, ?, ?, ?, ?)", rows)
    conn.commit()
    conn.close()


def run_migrate(db: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "migrate.py", str(db)], capture_output=True, text=True, timeout=30,
        check=False,
    )


def dump(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def columns(conn) -> list[str]:
    return [row[1] for row in conn.execute("PRAGMA table_info(contacts)")]


def declared(conn) -> dict[str, tuple]:
    """column -> (declared type, not null, primary key position)."""
    return {row[1]: (row[2].upper(), row[3], row[5])
            for row in conn.execute("PRAGMA table_info(contacts)")}


def expected_schema() -> dict[str, tuple]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(SCHEMA_V1)
        want = declared(conn)
    finally:
        conn.close()
    return {name: want[name] for name in KEPT}


def check_v2_state(db: Path, label: str):
    conn = sqlite3.connect(db)
    try:
        cols = columns(conn)
        missing = [c for c in (*KEPT, "email") if c not in cols]
        if missing:
            return failed(f"{label}: contacts lacks column(s) {missing} (has {cols})")
        if "fax" in cols:
            return failed(f"{label}: contacts still has the fax column")
        have = declared(conn)
        for name, (kind, notnull, pk) in expected_schema().items():
            if have[name] != (kind, notnull, pk):
                return failed(f"{label}: column {name} is now declared {have[name]} "
                              f"(type, not null, pk), v1 had {(kind, notnull, pk)}")
        if have["email"][0] != "TEXT":
            return failed(f"{label}: email is declared {have['email'][0]!r}, expected TEXT")
        got = sorted(conn.execute(f"SELECT {', '.join(KEPT)} FROM contacts").fetchall())
        want = sorted((r[0], r[1], r[2], r[4]) for r in ROWS)
        if got != want:
            lost = sorted(set(want) - set(got))[:2]
            return failed(f"{label}: existing data changed or lost ({len(want)} rows planted, "
                          f"{len(got)} found), e.g. row {lost} is gone")
        indexed = {
            row[2]
            for name, in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='index' AND name='idx_contacts_email'"
            )
            for row in conn.execute(f"PRAGMA index_info({name})")
        }
        if indexed != {"email"}:
            return failed(f"{label}: no index idx_contacts_email on contacts(email)")
    finally:
        conn.close()
    return None


def check_migrates_and_reruns():
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "contacts.db"
        make_db(db, ROWS)
        first = run_migrate(db)
        if first.returncode != 0:
            return failed(f"first run on a v1 database exited {first.returncode}: "
                          f"{first.stderr.strip()[-300:]}")
        problem = check_v2_state(db, "after the first run")
        if problem is not None:  # a failed CheckResult is falsy
            return problem
        before = dump(db)
        for attempt in (2, 3):
            again = run_migrate(db)
            if again.returncode != 0:
                return failed(f"run {attempt} on an already migrated database exited "
                              f"{again.returncode}: {again.stderr.strip()[-300:]}")
        problem = check_v2_state(db, "after re-running")
        if problem is not None:  # a failed CheckResult is falsy
            return problem
        if dump(db) != before:
            return failed("re-running the migration changed an already migrated database")
    return passed("migrates v1 and re-runs cleanly")


def check_refuses_to_drop_fax_data():
    rows = list(ROWS)
    row_id, name, phone, _, created = rows[-5]  # one fax number, late in the table
    rows[-5] = (row_id, name, phone, "+1 202 555 0143", created)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "contacts.db"
        make_db(db, rows)
        before = dump(db)
        proc = run_migrate(db)
        if proc.returncode == 0:
            return failed("fax still holds data in one row, yet the migration exited 0")
        if not proc.stderr.strip():
            return failed("the migration refused (good) but printed no error message on stderr")
        if dump(db) != before:
            return failed("the migration refused but left the database changed (it must stay "
                          "exactly as it was)")
        # once the fax numbers are dealt with, the same database migrates normally
        conn = sqlite3.connect(db)
        conn.execute("UPDATE contacts SET fax = NULL")
        conn.commit()
        conn.close()
        retry = run_migrate(db)
        if retry.returncode != 0:
            return failed(f"after clearing fax, the migration exited {retry.returncode}: "
                          f"{retry.stderr.strip()[-300:]}")
        problem = check_v2_state(db, "after clearing fax and re-running")
        if problem is not None:  # a failed CheckResult is falsy
            return problem
    return passed("refuses to drop a fax column that holds data and leaves the db untouched")


def check_half_migrated_with_empty_fax_strings():
    """A database a crashed or hand-run deploy left half way: email added, no index, fax still
    there and holding only empty strings and NULLs (no fax numbers): it must end up as v2."""
    rows = [(r[0], r[1], r[2], "" if i % 3 == 0 else None, r[4]) for i, r in enumerate(ROWS)]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "contacts.db"
        make_db(db, rows)
        conn = sqlite3.connect(db)
        conn.execute("ALTER TABLE contacts ADD COLUMN email TEXT")
        conn.commit()
        conn.close()
        proc = run_migrate(db)
        if proc.returncode != 0:
            return failed("a half-migrated database (email added, fax empty strings and NULLs) "
                          f"made the migration exit {proc.returncode}: "
                          f"{proc.stderr.strip()[-300:]}")
        problem = check_v2_state(db, "after migrating a half-migrated database")
        if problem is not None:  # a failed CheckResult is falsy
            return problem
    return passed("completes a half-migrated database; empty fax strings are no fax numbers")


main(check_migrates_and_reruns, check_refuses_to_drop_fax_data,
     check_half_migrated_with_empty_fax_strings)
