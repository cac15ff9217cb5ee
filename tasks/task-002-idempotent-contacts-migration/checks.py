"""migrate.py: idempotent, keeps every column but fax, refuses (untouched db) when fax holds data."""

import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from ci_eval.checks import failed, main, passed, task_dir

SCHEMA_V1 = (task_dir() / "repo-state" / "schema_v1.sql").read_text()
ROWS = [
    (1, "Ada Lovelace", "+44 20 7946 0001", None, "2019-03-04"),
    (2, "Grace Hopper", "+1 202 555 0142", None, "2020-11-30"),
    (3, "Alan Turing", None, None, "2021-06-23"),
    (4, "Edsger Dijkstra", "+31 20 555 0199", None, "2022-01-15"),
]
KEPT = ("id", "name", "phone", "created")


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


def check_v2_state(db: Path, label: str):
    conn = sqlite3.connect(db)
    try:
        cols = columns(conn)
        missing = [c for c in (*KEPT, "email") if c not in cols]
        if missing:
            return failed(f"{label}: contacts lacks column(s) {missing} (has {cols})")
        if "fax" in cols:
            return failed(f"{label}: contacts still has the fax column")
        got = sorted(conn.execute(f"SELECT {', '.join(KEPT)} FROM contacts").fetchall())
        want = sorted((r[0], r[1], r[2], r[4]) for r in ROWS)
        if got != want:
            return failed(f"{label}: existing data changed or lost: {got} != {want}")
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
        if problem:
            return problem
        before = dump(db)
        for attempt in (2, 3):
            again = run_migrate(db)
            if again.returncode != 0:
                return failed(f"run {attempt} on an already migrated database exited "
                              f"{again.returncode}: {again.stderr.strip()[-300:]}")
        problem = check_v2_state(db, "after re-running")
        if problem:
            return problem
        if dump(db) != before:
            return failed("re-running the migration changed an already migrated database")
    return passed("migrates v1 and re-runs cleanly")


def check_refuses_to_drop_fax_data():
    rows = list(ROWS)
    rows[1] = (2, "Grace Hopper", "+1 202 555 0142", "+1 202 555 0143", "2020-11-30")
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
        if problem:
            return problem
    return passed("refuses to drop a fax column that holds data and leaves the db untouched")


main(check_migrates_and_reruns, check_refuses_to_drop_fax_data)
