#!/usr/bin/env bash
# One .gitignore next to each kind of junk, covering what is there today.
set -euo pipefail
printf '.env\n*.log\n' > .gitignore
printf '__pycache__/\n' > shop/.gitignore
printf '__pycache__/\n' > tests/.gitignore
printf '*\n' > dist/.gitignore
git rm -r -q --cached .env debug.log dist shop/__pycache__ tests/__pycache__
git add .gitignore shop/.gitignore tests/.gitignore
git add -f dist/.gitignore
