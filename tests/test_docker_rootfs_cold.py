"""The python image's rootfs builds on a cold cache (a fresh machine): mmdebstrap writes a tar
under the temporary name and the rename leaves a tar, not a directory, under the cached name.
CI's machines keep ~/.cache/ci-eval-tests between runs, so without this test a broken cold build
hides behind an old cache (it did: issue 37, item 0)."""

from __future__ import annotations

import shutil
import tarfile

import pytest

from docker_helpers import PYTHON_ROOTFS, build_python_rootfs, cached_rootfs_is_tar


@pytest.mark.skipif(shutil.which("mmdebstrap") is None, reason="mmdebstrap is not installed")
def test_python_rootfs_builds_as_a_tar_on_a_cold_cache(tmp_path):
    rootfs = tmp_path / "cache" / PYTHON_ROOTFS.name
    build_python_rootfs(rootfs)
    assert rootfs.is_file() and tarfile.is_tarfile(rootfs)
    with tarfile.open(rootfs) as tar:
        names = set(tar.getnames())
    assert {"./usr/bin/python3", "./usr/lib/python3/dist-packages/pytest/__init__.py"} <= names
    assert [p.name for p in rootfs.parent.iterdir() if p.name.endswith(".partial")] == []


def test_a_directory_left_under_the_tar_name_is_not_taken_for_a_cache(tmp_path):
    rootfs = tmp_path / PYTHON_ROOTFS.name
    rootfs.mkdir()
    assert not cached_rootfs_is_tar(rootfs)
