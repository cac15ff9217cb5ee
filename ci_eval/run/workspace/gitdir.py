"""The agent's `.git`, written directly: a repository whose one commit is the initial state.

Agents expect a git repository (they run `git status`, `git diff`, `git stash`), so the workspace
is one, with exactly one commit ("initial state", author ci-eval, 2000-01-01) and an index that
matches the files. `git init` + `git add -A` + `git commit` (+ repack) cost five program starts,
60+ ms per task; this writes the same repository in Python from one walk of the tree: a single
pack (blobs, trees, the commit) with its index (v2), `refs/heads/main` (in packed-refs), HEAD, config and the
index file (v2, with each file's mtime and size, which is all `core.checkStat = minimal` compares:
a copy made with shutil.copy2 keeps both, so one `.git` serves every copy of the tree).

Differences from `git add -A`: every file is committed, also one a `.gitignore` names (the
ignore rules are not applied to the initial state; git still applies them to untracked files);
paths with a `.git` component and special files (FIFOs, sockets, devices) are left out; empty
folders are not tracked (as in git).

The harness never reads this repository back: the recorded diff comes from its own pristine copy
(diff.py), since everything in the workspace's `.git` is the agent's to change.
"""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

AUTHOR = b"ci-eval <ci-eval@localhost> 946684800 +0000"
MESSAGE = b"initial state\n"
BRANCH = "main"
CONFIG = ("[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
          "\tlogallrefupdates = true\n\tcheckStat = minimal\n\ttrustctime = false\n")
OBJ_COMMIT, OBJ_TREE, OBJ_BLOB = 1, 2, 3
MODE_FILE, MODE_EXEC, MODE_LINK, MODE_TREE = 0o100644, 0o100755, 0o120000, 0o40000


@dataclass(frozen=True)
class _File:
    path: bytes  # relative, "/"-separated
    mode: int
    sha: bytes
    mtime_ns: int
    size: int


def git_files(root: Path, skip_top: frozenset[str] = frozenset()) -> dict[str, bytes]:
    """The files of a `.git` for the tree at root (as relative path -> content), its top-level
    names in `skip_top` and any `.git` left out."""
    objects: dict[bytes, tuple[int, bytes]] = {}
    files = _walk(Path(root), skip_top, objects)
    tree = _tree(files, objects)
    commit = b"tree %s\nauthor %s\ncommitter %s\n\n%s" % (tree.hex().encode(), AUTHOR, AUTHOR,
                                                          MESSAGE)
    commit_sha = _store(objects, OBJ_COMMIT, commit)
    pack, index = _pack(objects)
    name = f"pack-{pack[-20:].hex()}"
    return {
        "HEAD": f"ref: refs/heads/{BRANCH}\n".encode(),
        "config": CONFIG.encode(),
        # packed, as `git pack-refs` leaves it: fewer folders to make and remove per run
        "packed-refs": b"# pack-refs with: peeled fully-peeled sorted \n%s refs/heads/%s\n"
                       % (commit_sha.hex().encode(), BRANCH.encode()),
        f"objects/pack/{name}.pack": pack,
        f"objects/pack/{name}.idx": index,
        "index": _index(files),
    }


def write_git(workspace: Path, files: dict[str, bytes]) -> None:
    git = Path(workspace) / ".git"
    for folder in ("objects/pack", "refs"):  # what git needs: it makes the rest on demand
        (git / folder).mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        (git / rel).write_bytes(data)


def _store(objects: dict, kind: int, data: bytes) -> bytes:
    name = {OBJ_COMMIT: b"commit", OBJ_TREE: b"tree", OBJ_BLOB: b"blob"}[kind]
    sha = hashlib.sha1(b"%s %d\0" % (name, len(data)) + data).digest()
    objects.setdefault(sha, (kind, data))
    return sha


def _walk(root: Path, skip_top: frozenset[str], objects: dict) -> list[_File]:
    files = []
    stack = [(root, b"")]
    while stack:
        folder, prefix = stack.pop()
        with os.scandir(folder) as entries:
            listing = list(entries)
        for entry in listing:
            if entry.name == ".git" or (not prefix and entry.name in skip_top):
                continue
            rel = prefix + os.fsencode(entry.name)
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                stack.append((Path(entry.path), rel + b"/"))
                continue
            if stat.S_ISLNK(info.st_mode):
                mode, data = MODE_LINK, os.fsencode(os.readlink(entry.path))
            elif stat.S_ISREG(info.st_mode):
                mode = MODE_EXEC if info.st_mode & stat.S_IXUSR else MODE_FILE
                with open(entry.path, "rb") as handle:
                    data = handle.read()
            else:
                continue
            sha = _store(objects, OBJ_BLOB, data)
            files.append(_File(rel, mode, sha, info.st_mtime_ns, info.st_size))
    files.sort(key=lambda f: f.path)
    return files


def _tree(files: list[_File], objects: dict) -> bytes:
    """Store the trees of `files`; the root tree's sha."""
    root: dict = {}
    for entry in files:
        *folders, name = entry.path.split(b"/")
        node = root
        for folder in folders:
            node = node.setdefault(folder, {})
        node[name] = entry

    def store(node: dict) -> bytes:
        items = []
        for name, child in node.items():
            if isinstance(child, dict):
                items.append((name + b"/", b"%o %s\0" % (MODE_TREE, name) + store(child)))
            else:
                items.append((name, b"%o %s\0" % (child.mode, name) + child.sha))
        items.sort()  # git orders a folder as if its name ended with "/"
        return _store(objects, OBJ_TREE, b"".join(data for _, data in items))

    return store(root)


def _pack(objects: dict) -> tuple[bytes, bytes]:
    """(the pack, its .idx v2) holding every object, undeltified."""
    pack = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    where = {}
    for sha, (kind, data) in objects.items():
        size = len(data)
        header = bytearray()
        byte = (kind << 4) | (size & 0x0F)
        size >>= 4
        while size:
            header.append(byte | 0x80)
            byte = size & 0x7F
            size >>= 7
        header.append(byte)
        entry = bytes(header) + zlib.compress(data, 1)
        where[sha] = (len(pack), zlib.crc32(entry))
        pack += entry
    pack += hashlib.sha1(pack).digest()
    shas = sorted(where)
    index = bytearray(b"\377tOc" + struct.pack(">I", 2))
    counts = [0] * 256
    for sha in shas:
        counts[sha[0]] += 1
    total = 0
    for count in counts:
        total += count
        index += struct.pack(">I", total)
    index += b"".join(shas)
    index += b"".join(struct.pack(">I", where[sha][1]) for sha in shas)
    large: list = []
    for sha in shas:
        offset = where[sha][0]
        if offset < 0x80000000:
            index += struct.pack(">I", offset)
        else:
            index += struct.pack(">I", 0x80000000 | len(large))
            large.append(offset)
    index += b"".join(struct.pack(">Q", offset) for offset in large)
    index += pack[-20:]
    index += hashlib.sha1(index).digest()
    return bytes(pack), bytes(index)


def _index(files: list[_File]) -> bytes:
    """The index (v2): the committed state, with the mtime and size each file has."""
    data = bytearray(b"DIRC" + struct.pack(">II", 2, len(files)))
    for entry in files:
        seconds, nanos = divmod(entry.mtime_ns, 1_000_000_000)
        fields = struct.pack(">10I", 0, 0, seconds & 0xFFFFFFFF, nanos, 0, 0, entry.mode, 0, 0,
                             entry.size & 0xFFFFFFFF)
        record = fields + entry.sha + struct.pack(">H", min(len(entry.path), 0xFFF)) + entry.path
        data += record + b"\0" * (8 - len(record) % 8)
    data += hashlib.sha1(data).digest()
    return bytes(data)
