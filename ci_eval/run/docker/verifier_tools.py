"""The verifier's tools for Harbor tasks whose test.sh installs them when it runs (Harbor's own
template: `curl ... astral.sh/uv | sh`, then `uvx --with pytest==8.4.1 pytest ...`).

Harbor's verifier has the network; ci-eval's has none (test.sh runs the agent's code). Instead,
a folder of the machine's, named by CI_EVAL_VERIFIER_TOOLS, is mounted read-only at
/ci-eval/tools in the containers that run a Harbor task's test.sh and solve.sh, and uv and pip
are pointed at it, offline:

    bin/      put first on PATH (a static `uv` and `uvx`)
    wheels/   the only package index of uv and pip (UV_FIND_LINKS, PIP_FIND_LINKS, no index)
    python/   optional: uv-managed Pythons (UV_PYTHON_INSTALL_DIR), for an image without python3

The installer lines of test.sh then fail harmlessly (no network; Harbor's template does not
`set -e`) and `uvx` resolves its pins from wheels/. Pure: names in, mount and variables out.
"""

from __future__ import annotations

from pathlib import Path

from ci_eval.errors import UserError

TOOLS_ENV = "CI_EVAL_VERIFIER_TOOLS"
TOOLS_MOUNT = "/ci-eval/tools"
# the engine's default when an image sets no PATH (docker's own for Linux containers)
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
UV_CACHE = "/tmp/ci-eval-uv-cache"


def tools_folder(environ) -> Path | None:
    """The folder CI_EVAL_VERIFIER_TOOLS names (None when unset or empty); UserError when it
    names no folder or one without bin/ or wheels/."""
    value = environ.get(TOOLS_ENV, "")
    if not value:
        return None
    folder = Path(value)
    if not folder.is_dir():
        raise UserError(f"{TOOLS_ENV}={value}: not a folder (expected the verifier's tools: "
                        "bin/ and wheels/, docs/docker.md \"Harbor tasks\")")
    if not (folder / "bin").is_dir() and not (folder / "wheels").is_dir():
        raise UserError(f"{TOOLS_ENV}={value}: holds neither bin/ nor wheels/ (docs/docker.md "
                        "\"Harbor tasks\")")
    return folder.resolve()


def tools_env(folder: Path, image_path: str) -> dict[str, str]:
    """The variables that put the tools first on PATH and make uv and pip use wheels/ only."""
    wheels = f"{TOOLS_MOUNT}/wheels"
    env = {"PATH": f"{TOOLS_MOUNT}/bin:{image_path or DEFAULT_PATH}",
           "UV_OFFLINE": "1", "UV_NO_INDEX": "1", "UV_FIND_LINKS": wheels,
           "UV_PYTHON_DOWNLOADS": "never", "UV_CACHE_DIR": UV_CACHE, "UV_LINK_MODE": "copy",
           "UV_NO_PROGRESS": "1", "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": wheels,
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    if (folder / "python").is_dir():
        env["UV_PYTHON_INSTALL_DIR"] = f"{TOOLS_MOUNT}/python"
    return env
