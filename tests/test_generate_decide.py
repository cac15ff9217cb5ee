"""ci-eval generate's pure parts: test paths, judging two runs of each state, the prompt and its
leak check, the mutation operators (ci_eval/generate/decide.py, prompts.py, mutants.py)."""

from __future__ import annotations

import ast

import pytest

from ci_eval.generate import decide, mutants, prompts
from ci_eval.generate.candidate import file_patch

P, F, E = "PASSED", "FAILED", "ERROR"


@pytest.mark.parametrize("path, test, source", [
    ("tests/test_x.py", True, False), ("pkg/tests/helpers.py", True, False),
    ("test_top.py", True, False), ("pkg/thing_test.py", True, False),
    ("conftest.py", True, False), ("pkg/core.py", False, True), ("src/pkg/a.py", False, True),
    ("docs/conf.py", False, False), ("setup.py", False, False), ("README.md", False, False),
])
def test_test_and_source_paths(path, test, source):
    assert decide.is_test_path(path) is test
    assert decide.is_source_path(path) is source


def test_a_test_red_at_base_and_green_with_the_fix_is_fail_to_pass():
    judged = decide.judge([{"a": F, "b": P}, {"a": F, "b": P}], [{"a": P, "b": P}] * 2)
    assert (judged.reason, judged.fail_to_pass, judged.pass_to_pass) == ("", ["a"], ["b"])


def test_a_test_the_base_could_not_import_is_fail_to_pass_and_its_module_error_ignored():
    base = {"t.py": E, "b": P}
    judged = decide.judge([base, base], [{"t.py::x": P, "b": P}] * 2)
    assert (judged.reason, judged.fail_to_pass) == ("", ["t.py::x"])


def test_a_test_that_changes_its_mind_is_flaky_never_a_gate():
    judged = decide.judge([{"a": F, "f": P}, {"a": F, "f": F}], [{"a": P, "f": P}] * 2)
    assert (judged.reason, judged.fail_to_pass, judged.flaky) == ("", ["a"], ["f"])
    only_flaky = decide.judge([{"f": P}, {"f": F}], [{"f": P}] * 2)
    assert only_flaky.reason == decide.FLAKY and "f" in only_flaky.detail


def test_a_red_base_and_a_fix_that_breaks_a_test_are_rejected_with_the_test():
    red = decide.judge([{"a": F, "r": F}] * 2, [{"a": P, "r": F}] * 2)
    assert red.reason == decide.BASE_RED and red.detail.startswith("r:")
    broken = decide.judge([{"a": F, "b": P}] * 2, [{"a": P, "b": F}] * 2)
    assert broken.reason == decide.SOLUTION_RED and broken.detail.startswith("b:")
    nothing = decide.judge([{"a": P}] * 2, [{"a": P}] * 2)
    assert nothing.reason == decide.NO_FAIL_TO_PASS


def test_a_mutant_must_break_some_tests_and_not_all():
    original = [{"a": P, "b": P}] * 2
    assert decide.judge_mutant(original, [{"a": F, "b": P}] * 2).fail_to_pass == ["a"]
    assert decide.judge_mutant(original, original).reason == decide.SURVIVED
    assert decide.judge_mutant(original, [{"a": F, "b": E}] * 2).reason == \
        decide.EVERY_TEST_BREAKS


PATCH = """diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -1,3 +1,3 @@
 def f(x):
-    return x + 1
+    return x - 1

"""


def test_patch_size_added_lines_and_duplicates():
    assert decide.patch_size(PATCH) == (1, 2)
    assert decide.added_lines(PATCH) == ["return x - 1"]
    spaced = PATCH.replace("return x - 1", "return  x - 1")
    assert decide.duplicate_key(PATCH, ["t"]) == decide.duplicate_key(spaced, ["t"])
    assert decide.duplicate_key(PATCH, ["t"]) != decide.duplicate_key(PATCH, ["u"])
    assert decide.difficulty(1, 2, 1) == 1 and decide.difficulty(5, 300, 9) == 5


TEST_FILE = '''import m


class TestF:
    def test_one(self):
        assert m.f(1) == 0


def test_two():
    assert m.f(2) == 1
'''


def test_the_prompt_describes_the_failure_and_never_the_fix():
    summary = "FAILED t.py::TestF::test_one - assert 2 == 0"
    text = prompts.prompt(["t.py::test_two", "t.py::TestF::test_one"], summary,
                          {"t.py": TEST_FILE})
    assert "`python -m pytest t.py::TestF::test_one`" in text  # the test the summary names
    assert "assert m.f(1) == 0" in text and "assert 2 == 0" in text
    assert "t.py::test_two" in text
    assert prompts.leaks(text, PATCH) == []
    assert prompts.safe_prompt(["t.py::TestF::test_one"], summary, {"t.py": TEST_FILE},
                               PATCH) == prompts.prompt(["t.py::TestF::test_one"], summary,
                                                        {"t.py": TEST_FILE})


def test_a_test_that_repeats_a_line_of_the_fix_is_left_out_and_a_summary_that_does_is_refused():
    leaky = TEST_FILE.replace("assert m.f(1) == 0", "return x - 1")
    text = prompts.safe_prompt(["t.py::TestF::test_one"], "FAILED t.py::TestF::test_one",
                               {"t.py": leaky}, PATCH)
    assert text is not None and "return x - 1" not in text and "The test does this" not in text
    assert prompts.safe_prompt(["t.py::TestF::test_one"], "FAILED x - return x - 1", {},
                               PATCH) is None


def test_test_source_finds_methods_and_parametrized_tests_and_nothing_else():
    assert prompts.test_source(TEST_FILE, "t.py::TestF::test_one").startswith("def test_one")
    assert prompts.test_source(TEST_FILE, "t.py::test_two[1-2]").startswith("def test_two")
    assert prompts.test_source(TEST_FILE, "t.py::missing") is None
    assert prompts.test_source("def (:", "t.py::x") is None
    assert "```" not in prompts.clean("a```b\x1b[31m")


SOURCE = '''"""Module doc."""
import os  # a comment that stays


def pick(items, limit=3):
    total = 0
    if len(items) > limit:
        chosen = items[1:limit]
    else:
        chosen = items
    for item in chosen:
        total += item
    return total == 0 and True


class Box:
    def size(self):
        return f"{self.width + 1}"
'''


def test_every_operator_makes_a_compiling_mutant_that_keeps_the_rest_of_the_file():
    tree = ast.parse(SOURCE)
    pick = next(f for f in mutants.functions(tree) if f.qualname == "pick")
    found = mutants.mutants(SOURCE, pick)
    assert {m.operator for m in found} == set(mutants.OPERATORS)
    for mutant in found:
        compile(mutant.source, "m", "exec")
        assert mutant.source != SOURCE
        assert "import os  # a comment that stays" in mutant.source
    flip = next(m for m in found if m.description == "Gt -> LtE")
    assert "if (len(items) <= limit):" in flip.source
    off = next(m for m in found if m.operator == "off-by-one")
    assert "items[(2):limit]" in off.source
    swap = next(m for m in found if m.operator == "swap-if-else")
    assert swap.source.index("chosen = items\n") < swap.source.index("chosen = items[1:limit]")
    patch = file_patch("m.py", flip.source, SOURCE).decode()
    assert decide.patch_size(patch) == (1, 2)


def test_f_strings_are_left_alone_and_pick_takes_one_per_operator():
    tree = ast.parse(SOURCE)
    size = next(f for f in mutants.functions(tree) if f.qualname == "Box.size")
    assert mutants.mutants(SOURCE, size) == []
    pick = next(f for f in mutants.functions(tree) if f.qualname == "pick")
    chosen = mutants.pick(mutants.mutants(SOURCE, pick))
    assert len(chosen) == len({m.operator for m in chosen}) == len(mutants.OPERATORS)


def test_reach_follows_names_from_the_tests_through_calls():
    sources = {"a.py": ast.parse("def outer():\n    return inner()\n\n\ndef inner():\n"
                                 "    return 1\n\n\ndef unused():\n    return 2\n\n\n"
                                 "class K:\n    def __init__(self):\n        pass\n")}
    assert mutants.reached({"outer"}, sources) == {("a.py", "outer"), ("a.py", "inner")}
    assert ("a.py", "K.__init__") in mutants.reached({"K"}, sources)
