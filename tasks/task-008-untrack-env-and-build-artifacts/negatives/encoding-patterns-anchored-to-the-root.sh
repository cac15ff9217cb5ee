#!/usr/bin/env bash
# Untrack the junk and ignore it, with every pattern anchored at the top of the repo.
set -euo pipefail
cat > .gitignore <<'IGNORE'
/.env
/__pycache__/
/*.pyc
/dist/
/*.log
IGNORE
git rm -r -q --cached .env debug.log dist shop/__pycache__ tests/__pycache__
git add .gitignore
