"""ci_eval.plain_tar: a hostile tar (an upstream commit's, a container folder's) unpacks only what a
workspace may hold, and the same on interpreters whose tarfile has no `filter=` (3.11.0-3.11.3,
Debian 12's python3)."""

from __future__ import annotations

import copy
import io
import os
import stat
import tarfile

import pytest

from ci_eval import plain_tar


@pytest.fixture(autouse=True, params=["this-python", "no-filter-argument"])
def tarfile_kind(request, monkeypatch):
    """Every test on this interpreter's tarfile and as on one without `filter=` (3.11.0-3.11.3),
    whichever this is."""
    if request.param == "no-filter-argument":
        monkeypatch.setattr(plain_tar, "_SCREENED", {})
    return request.param


@pytest.fixture(params=["random-access", "stream"])
def extract(request):
    """extract_plain, and extract_plain_stream on the same bytes read as a stream ("r|": the
    docker runner's copy-out of an image's WORKDIR, never held in memory)."""
    def unpack(archive: tarfile.TarFile, target) -> None:
        if request.param == "random-access":
            plain_tar.extract_plain(archive, target)
            return
        archive.fileobj.seek(0)
        with tarfile.open(fileobj=archive.fileobj, mode="r|") as stream:
            plain_tar.extract_plain_stream(stream, target)
    return unpack


def _tar(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> tarfile.TarFile:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if data is not None else None)
    buffer.seek(0)
    return tarfile.open(fileobj=buffer, mode="r:")


def _file(name: str, data: bytes = b"x", mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.uid, info.gid = len(data), mode, 4242, 4242
    return info, data


def _entry(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, linkname
    return info, None


def test_plain_members_are_unpacked_with_their_modes_and_this_process_as_owner(tmp_path, extract):
    target = tmp_path / "out"
    archive = _tar([_entry("pkg", tarfile.DIRTYPE), _file("pkg/run.sh", b"#!/bin/sh\n", 0o755),
                    _file("pkg/data.txt", b"data"), _entry("pkg/alias", tarfile.SYMTYPE, "data.txt")])
    extract(archive, target)
    assert (target / "pkg" / "data.txt").read_bytes() == b"data"
    assert stat.S_IMODE((target / "pkg" / "run.sh").stat().st_mode) == 0o755
    assert os.readlink(target / "pkg" / "alias") == "data.txt"
    assert (target / "pkg" / "data.txt").stat().st_uid == os.getuid()


ABSOLUTE = "@TMP@/absolute-escape"  # made absolute under the test's tmp_path


@pytest.mark.parametrize("member", [
    _file(ABSOLUTE),
    _file("../dot-dot-escape"),
    _file("inner/../../nested-escape"),
    _entry("link-out", tarfile.SYMTYPE, "/etc/passwd"),
    _entry("link-up", tarfile.SYMTYPE, "../../outside"),
    _entry("hard", tarfile.LNKTYPE, "/etc/passwd"),
    _entry("device", tarfile.CHRTYPE),
    _entry("fifo", tarfile.FIFOTYPE),
], ids=["absolute", "dot-dot", "nested-dot-dot", "link-absolute", "link-up", "hard-link",
        "device", "fifo"])
def test_a_member_that_leaves_the_target_or_is_no_plain_file_is_left_out(tmp_path, member,
                                                                           extract):
    target = tmp_path / "deep" / "out"
    info, data = copy.copy(member[0]), member[1]  # the parameter is shared by every run
    info.name = info.name.replace("@TMP@", str(tmp_path))
    extract(_tar([(info, data), _file("kept.txt")]), target)
    assert sorted(p.name for p in target.iterdir()) == ["kept.txt"]
    assert not any(p.name.endswith("escape") for p in tmp_path.rglob("*"))
    assert not (tmp_path / "absolute-escape").exists()


def test_setuid_setgid_and_sticky_bits_are_dropped_and_permissions_kept(tmp_path, extract):
    """Unpacked as root, a setuid file of the archive's would be a setuid-root program in the
    workspace (tarfile's "data" filter drops these bits too; the screen does it on every Python)."""
    target = tmp_path / "out"
    shared = _entry("shared", tarfile.DIRTYPE)[0]
    shared.mode = 0o1777
    archive = _tar([_file("tool", b"#!/bin/sh\n", 0o6755), (shared, None)])
    extract(archive, target)
    assert stat.S_IMODE((target / "tool").stat().st_mode) == 0o755
    assert stat.S_IMODE((target / "shared").stat().st_mode) == 0o777
