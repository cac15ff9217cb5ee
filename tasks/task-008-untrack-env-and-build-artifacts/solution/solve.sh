#!/usr/bin/env bash
# Untrack the junk (keeping the files on disk) and ignore it from now on.
set -euo pipefail
cat > .gitignore <<'IGNORE'
# local settings: copy .env.example instead
.env

# Python bytecode and build output
__pycache__/
*.py[cod]
dist/

# logs
*.log
IGNORE
git rm -r -q --cached .env debug.log dist shop/__pycache__ tests/__pycache__
git add .gitignore
