"""The environment of the real SWE-bench records of pallets/flask (tests/fixtures/swe-bench-flask,
version 2.3), prepared once into the test cache and reused: the wheels SWE-bench's harness
installs for flask 2.3 (harness/constants SPECS_FLASK "pip_packages", Python 3.11) and the test
requirements of flask's requirements/tests.txt at the version's environment_setup_commit
(pytest 7.3.0 and its dependencies), and the whole requirements/dev.txt there (docs, tests, typing
and the tools: REQUIREMENTS, what SWE-bench's harness installs first and what `ci-eval import
swe-bench` writes to environment/requirements.txt, tests/fixtures/swe-bench-flask). MarkupSafe 2.1.1 has no wheel for Python 3.11 on PyPI: it is
built from its sdist without its C speedups (CC=false: its setup.py falls back to pure Python),
so the one wheel installs on any CPython 3.11 (the host's and the docker image's). pip's own
wheel is there too: an image without pip runs it from the wheel.
`.ci/run` prepares it before the suite (`python3 tests/swe_bench_env.py prepare`, a few seconds:
pip reaches PyPI there), so no test reaches the network; a test finding none skips, loudly.

    folder = swe_bench_env.prepared()    # the wheels folder, or None when not prepared
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cache_folder import CACHE, built_once, ready

WHEELS = CACHE / "swe-bench-flask-2.3-dev-wheels"
# SPECS_FLASK["2.3"]["pip_packages"] (SWE-bench harness/constants/python.py)
PIP_PACKAGES = ("setuptools==70.0.0", "click==8.1.3", "itsdangerous==2.1.2", "Jinja2==3.1.2",
                "MarkupSafe==2.1.1", "Werkzeug==2.3.7")
# flask's requirements/tests.txt at 182ce3dd (the environment_setup_commit of version 2.3)
TEST_REQUIREMENTS = ("asgiref==3.6.0", "iniconfig==2.0.0", "packaging==23.0", "pluggy==1.0.0",
                     "pytest==7.3.0", "python-dotenv==1.0.0")
PINS = PIP_PACKAGES + TEST_REQUIREMENTS
REQUIREMENTS = tuple(Path(__file__).parent.joinpath(
    "fixtures", "swe-bench-flask", "requirements-2.3.txt").read_text().splitlines())
SOURCE_BUILT = ("MarkupSafe==2.1.1",)
# run from its own wheel (`python3 pip-*.whl/pip install ...`): the docker image has no pip
PIP = "pip==24.0"
STAMP_TEXT = " ".join(PINS + REQUIREMENTS) + "\n"


def prepared() -> Path | None:
    return ready(WHEELS, STAMP_TEXT)


def _pip(*args: str, env: dict | None = None) -> None:
    subprocess.run([sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check",
                    "--no-deps"], check=True, timeout=600, env=env)


def prepare() -> Path:
    def fill(partial: Path) -> None:
        binary = [pin for pin in PINS if pin not in SOURCE_BUILT]
        _pip("download", "--only-binary=:all:", "--python-version", "3.11",
             "--implementation", "cp", "--platform", "manylinux2014_x86_64",
             "--dest", str(partial), *binary, PIP)
        _pip("download", "--only-binary=:all:", "--python-version", "3.11",
             "--implementation", "cp", "--platform", "manylinux2014_x86_64",
             "--dest", str(partial), *REQUIREMENTS)
        _pip("wheel", "--no-binary", ":all:", "--wheel-dir", str(partial), *SOURCE_BUILT,
             env={**os.environ, "CC": "false"})

    return built_once(WHEELS, STAMP_TEXT, fill)


if __name__ == "__main__":
    if sys.argv[1:] != ["prepare"]:
        sys.exit("usage: python3 tests/swe_bench_env.py prepare")
    print(prepare())
