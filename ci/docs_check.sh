#!/usr/bin/env bash
# The docs: Sphinx build with warnings as errors, then the explorers in headless Chromium.
#
#   bash ci/docs_check.sh
#
# venv ci-venvs/docs from docs/requirements.txt (+ cuda-coop editable; remade only when the
# requirements change), then chromium: Playwright never downloads a browser, so the tests
# drive the system's (COOP_CHROMIUM, default /usr/bin/chromium). When it is missing, the
# system package manager installs it: `apt-get install chromium` (Debian's package), as
# root or through passwordless sudo; COOP_CHROMIUM_INSTALL=0 never installs. Then
#   build    python -m sphinx -W --keep-going -b html docs ci-venvs/docs-build/html
#   browser  python -m pytest -m browser tests/docs   (screenshots: test-artifacts/explorers/)
# Where chromium cannot be had (no apt-get, neither root nor sudo, the install failed, or it
# does not start: Ubuntu's chromium deb is only a stub for the snap), the browser tests are
# one SKIP line that says why; the build still runs. Where it can, COOP_REQUIRE_BROWSER=1
# makes a browser test that would skip a failure.
# The docs' code examples are compiled by the matrix stage (tests/docs_examples, marker
# compile) and run on a GPU by the GPU matrix (marker gpu). Needs PyPI/apt only to install.
# Prints PASS/FAIL lines for ci/summary.py; exit status non-zero when anything failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/ci-venvs/docs"
out="$root/ci-venvs/docs-build"
logs="$root/ci-venvs/logs"
mkdir -p "$logs"
rc=0

if [ ! -x "$venv/bin/python" ] || ! cmp -s docs/requirements.txt "$venv/requirements.txt"; then
  rm -rf "$venv"
  "${COOP_BASE_PYTHON:-python3}" -m venv "$venv"
  if ! "$venv/bin/python" -m pip install -q -r docs/requirements.txt -e . > "$logs/pip-docs.log" 2>&1; then
    tail -n 20 "$logs/pip-docs.log"
    echo "FAIL: docs: pip install -r docs/requirements.txt -e . (log: $logs/pip-docs.log)"
    exit 1
  fi
  cp docs/requirements.txt "$venv/requirements.txt"
else
  "$venv/bin/python" -m pip install -q --no-deps -e . > "$logs/pip-docs.log" 2>&1
fi
echo "PASS: docs: venv ($("$venv/bin/python" -c 'import sphinx, playwright._repo_version as p; print("Sphinx", sphinx.__version__, "/ playwright", p.version)'))"

chromium="${COOP_CHROMIUM:-/usr/bin/chromium}"
browser_skip=""  # why the browser tests cannot run here, if they cannot
if [ ! -x "$chromium" ]; then
  sudo=""
  if [ -n "${COOP_CHROMIUM:-}" ]; then
    browser_skip="COOP_CHROMIUM=$chromium is not an executable file"
  elif [ "${COOP_CHROMIUM_INSTALL:-1}" = 0 ]; then
    browser_skip="no chromium at $chromium and COOP_CHROMIUM_INSTALL=0 (install it: apt-get install chromium)"
  elif ! command -v apt-get > /dev/null; then
    browser_skip="no chromium at $chromium and no apt-get to install it (install chromium, or set COOP_CHROMIUM)"
  elif [ "$(id -u)" != 0 ]; then
    if sudo -n true 2> /dev/null; then
      sudo="sudo -n"
    else
      browser_skip="no chromium at $chromium, and installing it needs root or passwordless sudo (apt-get install chromium)"
    fi
  fi
  if [ -z "$browser_skip" ]; then
    echo "installing chromium: ${sudo:+$sudo }apt-get install -y --no-install-recommends chromium"
    if ! { $sudo apt-get update && $sudo env DEBIAN_FRONTEND=noninteractive \
           apt-get install -y --no-install-recommends chromium; } > "$logs/apt-chromium.log" 2>&1; then
      tail -n 20 "$logs/apt-chromium.log"
      browser_skip="apt-get install chromium failed (log: $logs/apt-chromium.log)"
    fi
  fi
fi
if [ -z "$browser_skip" ] && [ ! -x "$chromium" ]; then
  browser_skip="no chromium at $chromium after apt-get install chromium (log: $logs/apt-chromium.log)"
fi
if [ -z "$browser_skip" ] && ! said=$("$chromium" --headless --no-sandbox --version 2>&1); then
  browser_skip="$chromium does not run: $(printf '%s' "$said" | tr '\n' ' ' | cut -c1-200)"
fi
# The version is the last line: Debian's launcher script may print shell noise before it.
[ -n "$browser_skip" ] || echo "chromium: $chromium ($(printf '%s\n' "$said" | tail -n 1))"

t0=$SECONDS
rm -rf "$out"
if "$venv/bin/python" -m sphinx -W --keep-going -q -b html docs "$out/html" > "$logs/docs-build.log" 2>&1; then
  pages=$(find "$out/html" -name '*.html' -not -path '*/_modules/*' | wc -l)
  explorers=$(ls "$out/html/_static/coop-explorers/data/"*.json 2>/dev/null | wc -l)
  echo "PASS: docs: sphinx -W build, $pages pages, $explorers explorer datasets ($((SECONDS - t0)) s)"
else
  cat "$logs/docs-build.log" | tail -n 40
  echo "FAIL: docs: sphinx -W build (log: $logs/docs-build.log)"
  exit 1
fi

if [ -n "$browser_skip" ]; then
  echo "SKIP: docs: browser tests in headless chromium: $browser_skip"
  exit $rc
fi
t0=$SECONDS
rm -rf test-artifacts/explorers
COOP_DOCS_HTML="$out/html" COOP_CHROMIUM="$chromium" COOP_REQUIRE_BROWSER=1 \
  "$venv/bin/python" -m pytest -m browser tests/docs -q -p no:cacheprovider > "$logs/docs-browser.log" 2>&1
brc=$?
summary=$(grep -E '^[0-9]+ (passed|failed)|(passed|failed|error).* in [0-9.]+s' "$logs/docs-browser.log" | tail -n 1)
shots=$(ls test-artifacts/explorers/*.png 2>/dev/null | wc -l)
if [ "$brc" = 0 ]; then
  echo "PASS: docs: browser tests in headless chromium: $summary; $shots screenshots in test-artifacts/explorers ($((SECONDS - t0)) s)"
else
  tail -n 60 "$logs/docs-browser.log"
  echo "FAIL: docs: browser tests: $summary (log: $logs/docs-browser.log)"
  rc=1
fi
exit $rc
