#!/usr/bin/env bash
# Plausible but wrong: .gitignore does not untrack files that are already tracked.
set -euo pipefail
printf '.env\n__pycache__/\n*.pyc\ndist/\n*.log\n' > .gitignore
git add .gitignore
