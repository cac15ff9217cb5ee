"""CI_EVAL_VERIFIER_TOOLS (docs/docker.md "Harbor tasks"): the folder's checks, the variables
that point uv and pip at it offline, and the image's PATH read from `docker image inspect`.
On a real engine: tests/test_docker_harbor_cookbook.py."""

from __future__ import annotations

import pytest

from ci_eval.errors import UserError
from ci_eval.run.docker.engine import _path_of
from ci_eval.run.docker.verifier_tools import (
    DEFAULT_PATH,
    TOOLS_ENV,
    TOOLS_MOUNT,
    tools_env,
    tools_folder,
)


def test_unset_or_empty_means_no_tools():
    assert tools_folder({}) is None and tools_folder({TOOLS_ENV: ""}) is None


def test_a_setting_naming_no_folder_or_an_empty_one_is_bad_input(tmp_path):
    with pytest.raises(UserError, match="not a folder"):
        tools_folder({TOOLS_ENV: str(tmp_path / "missing")})
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="not a folder"):
        tools_folder({TOOLS_ENV: str(tmp_path / "file")})
    with pytest.raises(UserError, match="holds neither bin/ nor wheels/"):
        tools_folder({TOOLS_ENV: str(tmp_path)})
    (tmp_path / "wheels").mkdir()
    assert tools_folder({TOOLS_ENV: str(tmp_path)}) == tmp_path.resolve()


def test_uv_and_pip_are_offline_on_the_wheels_and_the_tools_first_on_path(tmp_path):
    env = tools_env(tmp_path, "/opt/conda/bin:/usr/bin")
    assert env["PATH"] == f"{TOOLS_MOUNT}/bin:/opt/conda/bin:/usr/bin"
    assert env["UV_OFFLINE"] == env["UV_NO_INDEX"] == env["PIP_NO_INDEX"] == "1"
    assert env["UV_FIND_LINKS"] == env["PIP_FIND_LINKS"] == f"{TOOLS_MOUNT}/wheels"
    assert env["UV_PYTHON_DOWNLOADS"] == "never" and "UV_PYTHON_INSTALL_DIR" not in env
    (tmp_path / "python").mkdir()
    with_python = tools_env(tmp_path, "")
    assert with_python["UV_PYTHON_INSTALL_DIR"] == f"{TOOLS_MOUNT}/python"
    assert with_python["PATH"] == f"{TOOLS_MOUNT}/bin:{DEFAULT_PATH}"


def test_the_image_s_path_from_its_config():
    assert _path_of('["HOME=/root", "PATH=/usr/local/bin:/usr/bin"]') == "/usr/local/bin:/usr/bin"
    for env_json in ("null", "[]", '["HOME=/root"]', "not json", '{"PATH": "/x"}', "7"):
        assert _path_of(env_json) == "", env_json
