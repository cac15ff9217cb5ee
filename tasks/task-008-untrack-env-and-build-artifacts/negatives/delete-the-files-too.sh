#!/usr/bin/env bash
# Plausible but wrong: `git rm` without --cached also deletes the developer's local .env.
set -euo pipefail
printf '.env\n__pycache__/\ndist/\n*.log\n' > .gitignore
git rm -r -q .env debug.log dist shop/__pycache__ tests/__pycache__
git add .gitignore
