#!/usr/bin/env bash
# The Debian packages the test suite drives for real, installed when missing: Chromium (browser
# tests), openssl and curl (webhook signing end to end), ffmpeg, espeak-ng and pocketsphinx with
# its English model, tesseract-ocr with its English data (the keyless media engines; the DejaVu
# font draws the text the OCR tests read), python3, make and g++ (node-pty's build), git
# (workspaces, config history), bubblewrap and jq (the orchestrate jail and its jq builtin),
# prometheus (its server and promtool scrape and check GET /metrics).
# Used by `.ci/run` and before `pnpm test`. Installing needs
# root and apt-get; without them the missing packages are named and the script fails.
set -uo pipefail

missing=()
need() { # need <package> <test command...>
  local package=$1
  shift
  "$@" >/dev/null 2>&1 || missing+=("$package")
}
need chromium test -x /usr/bin/chromium
need openssl command -v openssl
need curl command -v curl
need ffmpeg command -v ffmpeg
need espeak-ng command -v espeak-ng
need pocketsphinx command -v pocketsphinx_continuous
need pocketsphinx-en-us test -d /usr/share/pocketsphinx/model/en-us
need tesseract-ocr command -v tesseract
need tesseract-ocr-eng sh -c 'tesseract --list-langs | grep -qx eng'
need fonts-dejavu-core test -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
need python3 command -v python3
need make command -v make
need g++ command -v g++
need git command -v git
need bubblewrap command -v bwrap
need jq command -v jq
need prometheus command -v promtool

[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian packages the tests need: ${missing[*]}"
  apt-get update && apt-get install -y "${missing[@]}" && exit 0
  echo "apt-get install ${missing[*]} failed" >&2
  exit 1
fi
echo "the tests need these Debian packages: ${missing[*]}" >&2
echo "install them with: sudo apt-get install -y ${missing[*]}" >&2
exit 1
