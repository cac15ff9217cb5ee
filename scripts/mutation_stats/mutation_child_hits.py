"""The child side of mutmut's stats pass (scripts/mutation.sh): which mutated functions a child
Python ran, written where the test that started it reads them back.

mutmut learns which tests reach a function by running the tests in its own process, with
MUTANT_UNDER_TEST=stats, and recording every trampoline hit in memory. A function that only a
`python -m ci_eval ...` child runs is recorded as reached by no test, and its mutants are never
tested ("no tests"). scripts/mutation.sh puts a .pth file into its throwaway venv that imports
this module in every interpreter of that venv. It does nothing unless CI_EVAL_MUTATION_HITS names a
folder, which mutation_stats_plugin sets for the length of one test during the stats pass only;
then this process records its own hits: each new (function, caller) pair is appended, as one JSON
line, to FOLDER/PID.jsonl at once (so a child ending by os._exit, a signal or a fork loses nothing
it recorded), and the plugin merges them into mutmut's record of that test.
"""

import json
import os

HITS_ENV = "CI_EVAL_MUTATION_HITS"


def install(folder: str) -> None:
    from mutmut.mutation import trampoline  # only in the stats pass: never loaded otherwise

    if not hasattr(trampoline, "record_trampoline_hit"):
        # replacing a name the trampoline no longer calls would lose every child's hits unseen
        raise ImportError("mutmut.mutation.trampoline has no record_trampoline_hit: "
                          "scripts/mutation_stats does not fit this mutmut")
    seen: set[tuple[str, str | None]] = set()

    def record_hit(name: str, caller: str | None = None) -> None:
        if (name, caller) in seen:
            return
        seen.add((name, caller))
        try:
            with open(os.path.join(folder, f"{os.getpid()}.jsonl"), "a", encoding="utf-8") as out:
                out.write(json.dumps([name, caller]) + "\n")
        except OSError:
            pass  # the folder is gone (the test ended first) or not visible here: nothing to add

    # mutmut's own recorder keeps hits in this process's memory and reads its configuration from
    # the current folder (a child's is a test's temp folder); the trampoline looks it up per call
    trampoline.record_trampoline_hit = record_hit
    os.environ["MUTANT_UNDER_TEST"] = "stats"  # conftest's cli fixture hands children no mutant


if os.environ.get(HITS_ENV):
    install(os.environ[HITS_ENV])
