"""The start of the checks' pytest process (checks/pytest_tests.run_pytest): `python -s -c TEXT
CI_EVAL_FOLDER ARGS...`, TEXT this file's; never `python -m pytest`, which would put the
workspace first on sys.path while pytest is imported. The workspace ('' with -c) leaves
sys.path, ci_eval is imported from CI_EVAL_FOLDER (the folder the checks imported it from: an
editable install's finder may point at another checkout), that folder leaves sys.path again,
and pytest_session runs the session with ARGS.

Unlike the other programs, its interpreter has site-packages (pytest) and, once CI_EVAL_FOLDER
is on sys.path, ci-eval: it is the one program that imports a module that is not a program."""

import sys

if __name__ == "__main__":
    if "" in sys.path:
        sys.path.remove("")
    sys.path.insert(0, sys.argv.pop(1))
    import ci_eval.run.checks.pytest_session as session  # noqa: E402 - importable only now

    sys.path.pop(0)
    session.main()
