"""A repository -> the files `ci-eval init` writes (config, baseline, workflows, example task) and its next steps."""

ACTION_REPO = "ci-eval/ci-eval"
ACTION_REF = f"{ACTION_REPO}@v1"
EXAMPLE_TASK = "task-001-slugify-punctuation"
WORKFLOWS = ("eval.yml", "baseline.yml", "gc.yml")
