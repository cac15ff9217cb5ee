#!/usr/bin/env bash
# Plausible but wrong: `.env*` also ignores the .env.example template.
set -euo pipefail
printf '.env*\n__pycache__/\ndist/\n*.log\n' > .gitignore
git rm -r -q --cached .env debug.log dist shop/__pycache__ tests/__pycache__
git add .gitignore
