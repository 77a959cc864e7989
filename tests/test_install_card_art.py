"""``scripts/install-card-art.sh`` against an npm registry that fails: a fresh machine's first
tries of ``npm install`` were seen to fail with no message, and CI must still install the art."""

from __future__ import annotations

import os
import shlex
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


def fake_commands(bin_dir: Path, fail_first: int, install: bool = True) -> tuple[Path, Path]:
    """An ``npm`` that fails its first ``fail_first`` calls with an npm-style error of several
    lines (its cause first) and then, if ``install``, puts the face the script checks for where
    ``--prefix`` says; and a ``sleep`` that only logs how long it was asked to wait. Returns the
    files the calls and the waits are logged in."""
    calls, waits = bin_dir / "calls", bin_dir / "waits"
    make_face = f'mkdir -p "$prefix/node_modules/svg-cards/png/2x" && touch "$prefix/{FACE}"' if install else ":"
    (bin_dir / "npm").write_text(f"""#!/bin/sh
n=$(( $(cat {shlex.quote(str(calls))} 2>/dev/null || echo 0) + 1 ))
echo "$n" > {shlex.quote(str(calls))}
if [ "$n" -le {fail_first} ]; then
    echo "npm error code ECONNRESET (try $n)" >&2
    for line in 1 2 3 4 5 6 7 8 9 10; do echo "npm error     at stack line $line" >&2; done
    exit 1
fi
while [ "$#" -gt 0 ]; do [ "$1" = --prefix ] && prefix="$2"; shift; done
{make_face}
""")
    (bin_dir / "sleep").write_text(f'#!/bin/sh\necho "$1" >> {shlex.quote(str(waits))}\n')
    for name in ("npm", "sleep"):
        (bin_dir / name).chmod(0o755)
    return calls, waits


def run_script(tmp_path: Path, fail_first: int, wait: str = "5",
               install: bool = True) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    bin_dir, temp = tmp_path / "bin", tmp_path / "tmp"
    bin_dir.mkdir()
    temp.mkdir()
    calls, waits = fake_commands(bin_dir, fail_first, install)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TABLE_CONTROLLER_CARD_ART": str(tmp_path / "art"),
           "CARD_ART_RETRY_WAIT_S": wait, "TMPDIR": str(temp)}
    done = subprocess.run(["sh", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60)
    assert not any(temp.iterdir()), "the script left its npm log behind"
    return done, calls, waits


def test_the_art_is_installed_after_four_failed_tries_each_failure_shown_and_the_waits_doubling(
        tmp_path: Path) -> None:
    done, calls, waits = run_script(tmp_path, fail_first=4)
    assert done.returncode == 0, done.stderr
    assert calls.read_text().split() == ["5"]
    assert waits.read_text().split() == ["5", "10", "20", "40"]
    assert (tmp_path / "art" / FACE).is_file()
    for n in range(1, 5):
        assert f"npm error code ECONNRESET (try {n})" in done.stderr  # the cause, not only the stack's end
        assert f"npm install failed (try {n} of 5); again in {5 * 2 ** (n - 1)} s" in done.stderr


def test_five_failed_tries_end_the_script_with_an_error(tmp_path: Path) -> None:
    done, calls, waits = run_script(tmp_path, fail_first=5)
    assert done.returncode == 1
    assert calls.read_text().split() == ["5"]
    assert waits.read_text().split() == ["5", "10", "20", "40"]
    assert "failed 5 times" in done.stderr
    assert "install-card-art: ok" not in done.stdout
    assert not (tmp_path / "art" / FACE).exists()


def test_an_install_that_leaves_no_face_is_no_success(tmp_path: Path) -> None:
    done, _, _ = run_script(tmp_path, fail_first=0, install=False)
    assert done.returncode == 1
    assert "is missing" in done.stderr
    assert "install-card-art: ok" not in done.stdout


@pytest.mark.parametrize("wait", ["0.5", "abc", "-1"])
def test_a_wait_that_is_not_whole_seconds_is_refused_before_npm_runs(tmp_path: Path, wait: str) -> None:
    done, calls, _ = run_script(tmp_path, fail_first=5, wait=wait)
    assert done.returncode == 1
    assert "must be whole seconds" in done.stderr
    assert not calls.exists()
