"""``scripts/install-card-art.sh`` against an npm registry that fails: a fresh machine's first
tries of ``npm install`` were seen to fail with no message, and CI must still install the art."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "install-card-art.sh"
FACE = "node_modules/svg-cards/png/2x/heart_queen.png"

pytestmark = pytest.mark.skipif(
    not Path("/usr/share/carddecks/svg-standard/standard.svgz").is_file() or shutil.which("rsvg-convert") is None,
    reason="the KDE decks and rsvg-convert are not installed (the script would ask apt for them)",
)


def fake_npm(bin_dir: Path, fail_first: int) -> Path:
    """An ``npm`` that fails its first ``fail_first`` calls (saying so on stderr) and then puts
    the face the script checks for where ``--prefix`` says; each call is counted in a file."""
    calls = bin_dir / "calls"
    npm = bin_dir / "npm"
    npm.write_text(f"""#!/bin/sh
n=$(( $(cat {calls} 2>/dev/null || echo 0) + 1 ))
echo "$n" > {calls}
if [ "$n" -le {fail_first} ]; then echo "npm ERR! network try $n" >&2; exit 1; fi
while [ "$#" -gt 0 ]; do [ "$1" = --prefix ] && prefix="$2"; shift; done
mkdir -p "$prefix/node_modules/svg-cards/png/2x" && touch "$prefix/{FACE}"
""")
    npm.chmod(0o755)
    return calls


def run_script(tmp_path: Path, fail_first: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = fake_npm(bin_dir, fail_first)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TABLE_CONTROLLER_CARD_ART": str(tmp_path / "art"),
           "CARD_ART_RETRY_WAIT_S": "0"}
    done = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
    return done, calls


def test_the_art_is_installed_after_four_failed_tries_and_each_failure_is_shown(tmp_path: Path) -> None:
    done, calls = run_script(tmp_path, fail_first=4)
    assert done.returncode == 0, done.stderr
    assert calls.read_text().strip() == "5"
    assert (tmp_path / "art" / FACE).is_file()
    for n in range(1, 5):
        assert f"npm ERR! network try {n}" in done.stderr
        assert f"npm install failed (try {n} of 5)" in done.stderr


def test_five_failed_tries_end_the_script_with_an_error(tmp_path: Path) -> None:
    done, calls = run_script(tmp_path, fail_first=5)
    assert done.returncode != 0
    assert calls.read_text().strip() == "5"
    assert "failed 5 times" in done.stderr
    assert not (tmp_path / "art" / FACE).exists()
