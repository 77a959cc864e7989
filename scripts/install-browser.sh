#!/usr/bin/env bash
# Install Debian's chromium for the browser tests (pytest -m browser), once, and a CJK font
# (fonts-wqy-zenhei, 16 MB) so that the displays' Chinese labels render in screenshots.
# Idempotent: does nothing when both are there. Needs root (CI runs as root).
# Playwright drives this binary through executable_path; it never downloads a browser.
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -f /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc ]; then
    echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core fonts-wqy-zenhei
/usr/bin/chromium --version
