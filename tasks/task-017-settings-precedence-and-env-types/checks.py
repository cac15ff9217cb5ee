"""load_settings: CLI > env > file > defaults, typed values from env, ValueError on bad env values."""

from ci_eval.checks import add_hidden_tests, main, run_tests

HIDDEN = add_hidden_tests("test_appconfig_hidden.py")
BOOLS = ["1-True", "0-False", "true-True", "false-False", "TRUE-True", "False-False", "yes-True",
         "no-False", "on-True", "OFF-False"]

main(
    lambda: run_tests(
        fail_to_pass=[
            *[f"{HIDDEN}::test_env_booleans[{case}]" for case in BOOLS],
            f"{HIDDEN}::test_invalid_boolean_raises",
            f"{HIDDEN}::test_env_numbers_are_ints",
            f"{HIDDEN}::test_invalid_number_raises",
            f"{HIDDEN}::test_cli_beats_env",
            f"{HIDDEN}::test_env_beats_file_beats_defaults",
            f"{HIDDEN}::test_env_false_beats_file_true",
        ],
        pass_to_pass=[
            f"{HIDDEN}::test_unset_env_is_ignored",
            "tests/test_appconfig.py::test_defaults",
            "tests/test_appconfig.py::test_cli_flags",
        ],
        restore=["tests/test_appconfig.py"],
    )
)
