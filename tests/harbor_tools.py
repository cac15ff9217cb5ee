"""The verifier's tools for the real Harbor tasks' tests (CI_EVAL_VERIFIER_TOOLS, docs/docker.md
"Harbor tasks"), prepared once into the test cache and reused: the static uv that the cookbook's
test.sh would fetch from astral.sh (uv 0.9.7, from its musllinux wheel on PyPI) in bin/, and the
wheels its `uvx --with pytest==8.4.1 --with pytest-json-ctrf==0.3.5 pytest` resolves in wheels/.
`.ci/run` prepares it before the suite (`python3 tests/harbor_tools.py prepare`, a few seconds:
pip reaches PyPI there), so no test reaches the network; a test finding none skips, loudly.

    folder = harbor_tools.prepared()    # the folder, or None when not prepared

SCIENTIFIC (prepared the same way, beside it): the same uv, and the wheels QuantitativeFinance-
Bench's test.sh files ask uvx for (`-w pytest==8.4.1 -w pytest-json-ctrf==0.3.5 -w numpy -w
pandas -w scipy`, ~65 MB, for the image's Python 3.11), for tests/test_docker_harbor_qf_bench.py.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from cache_folder import CACHE, built_once, ready

TOOLS = CACHE / "harbor-verifier-tools"
UV = "uv==0.9.7"  # the version the cookbook's test.sh installs (astral.sh/uv/0.9.7/install.sh)
UV_PLATFORM = "musllinux_1_1_x86_64"  # a static binary: runs on any x86-64 image
# what the cookbook's test.sh files ask uvx for, and their dependencies (pure-Python wheels)
WHEELS = ("pytest==8.4.1", "pytest-json-ctrf==0.3.5")
SCIENTIFIC = CACHE / "harbor-verifier-tools-scientific"
SCIENTIFIC_WHEELS = (*WHEELS, "numpy", "pandas", "scipy")


def _stamp_text(wheels: tuple[str, ...]) -> str:
    return f"{UV} {' '.join(wheels)}\n"


def prepared(folder: Path = TOOLS) -> Path | None:
    return ready(folder, _stamp_text(SCIENTIFIC_WHEELS if folder == SCIENTIFIC else WHEELS))


def _pip_download(target: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
                    "--only-binary=:all:", "--dest", str(target), *args],
                   check=True, timeout=600)


def prepare(folder: Path = TOOLS, wheels: tuple[str, ...] = WHEELS) -> Path:
    def fill(partial: Path) -> None:
        downloads, bin_dir = partial / "downloads", partial / "bin"
        bin_dir.mkdir(parents=True)
        _pip_download(downloads, "--no-deps", "--platform", UV_PLATFORM, UV)
        [wheel] = downloads.glob("uv-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                name = member.rsplit("/", 1)[-1]
                if member.split("/", 1)[0].endswith(".data") and name in ("uv", "uvx"):
                    (bin_dir / name).write_bytes(archive.read(member))
                    (bin_dir / name).chmod(0o755)
        if not (bin_dir / "uvx").is_file():
            raise RuntimeError(f"{wheel.name} holds no uv and uvx")
        shutil.rmtree(downloads)
        _pip_download(partial / "wheels", "--python-version", "3.11", *wheels)

    return built_once(folder, _stamp_text(wheels), fill)


if __name__ == "__main__":
    if sys.argv[1:] != ["prepare"]:
        sys.exit("usage: python3 tests/harbor_tools.py prepare")
    print(prepare())
    print(prepare(SCIENTIFIC, SCIENTIFIC_WHEELS))
