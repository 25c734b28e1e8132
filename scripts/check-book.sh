#!/usr/bin/env bash
# The book as a reader gets it, from the committed files alone: a clean clone of HEAD (no data/, no resource
# cache, nothing git ignores) builds the book with warnings as errors; its HTML must hold no traceback, warning,
# "nan" or unrendered glue (bodega_book.html_check); then Debian's chromium opens every page at 1400 px wide and
# fails on a page taller than 20,000 px, an answer box below the first screen (900 px) or a command with a
# typographic dash (bodega_book.browser_check). Screenshots of the front page and the study page are left in
# book/_build/screenshots of this checkout (git-ignored), for CI to keep as artefacts.
# Usage: bash scripts/check-book.sh [PYTHON]   (default .venv/bin/python; jupyter-book beside it)
set -euo pipefail
cd "$(dirname "$0")/.."
here="$PWD"
python="$(realpath -s -m "${1:-.venv/bin/python}")"  # -s: the venv's own bin, not its interpreter's
bin="$(dirname "$python")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone --quiet --no-hardlinks "$here" "$work/clone"
cd "$work/clone"
[ ! -e data ] || { echo "the clean clone holds data/" >&2; exit 1; }
# the clone's own code, an empty resource cache and hub cache, no raw corpora: a page that reaches for any of
# them fails the build. Each check runs whatever the one before found, so that one run reports every problem.
rc=0
env -u BODEGA_RAW PYTHONPATH="$PWD/lib:$PWD/book/lib" BODEGA_CACHE="$work/cache" HF_HOME="$work/hf" \
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
  "$bin/jupyter-book" build book/ -W -n --keep-going || rc=1
PYTHONPATH="$PWD/book/lib:$PWD/lib" "$python" -m bodega_book.html_check book/_build/html || rc=1
mkdir -p "$here/book/_build"
rm -rf "$here/book/_build/screenshots"
PYTHONPATH="$PWD/book/lib:$PWD/lib" "$python" -m bodega_book.browser_check book/_build/html \
  --screenshots "$here/book/_build/screenshots" || rc=1
exit "$rc"
