"""The systemd units install-service writes: a table under a watchdog, the archive and the studio API,
each hardened, and each accepted by systemd's own checker (systemd-analyze verify) where it exists."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from table_controller.cli import main
from table_controller.soak.controller_process import write_config

PROGRAM = str(Path(sys.executable).with_name("table-controller"))


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "T07.toml"
    write_config(config, table="T07", variant="baccarat", shoe_port=Path("/dev/ttyUSB0"),
                 journal=tmp_path / "T07.sqlite", publish="tcp://127.0.0.1:5556", snapshot="tcp://127.0.0.1:5557",
                 control="tcp://127.0.0.1:5558", token_sha256="a" * 64, betting_seconds=15, result_seconds=3)
    return config


def test_units_for_the_table_the_archive_and_the_studio_api(tmp_path: Path) -> None:
    units = tmp_path / "units"
    assert main(["install-service", "table", "--config", str(_config(tmp_path)), "--program", PROGRAM,
                 "--dir", str(units)]) == 0
    assert main(["install-service", "archive", "--db", "/var/lib/table-controller/studio.sqlite",
                 "--table", "T07=tcp://127.0.0.1:5557", "--program", PROGRAM, "--dir", str(units)]) == 0
    assert main(["install-service", "studio", "--db", "/var/lib/table-controller/studio.sqlite",
                 "--program", PROGRAM, "--dir", str(units)]) == 0
    assert main(["install-service", "prune", "--config", str(_config(tmp_path)), "--db",
                 "/var/lib/table-controller/studio.sqlite", "--program", PROGRAM, "--dir", str(units)]) == 0
    table = (units / "table-controller-T07.service").read_text()
    for line in ("Type=notify", "WatchdogSec=10", "Restart=always", "User=tablectl", "NoNewPrivileges=yes",
                 "ProtectSystem=strict", "DevicePolicy=closed", "DeviceAllow=char-ttyUSB rw",
                 "DeviceAllow=/dev/gpiochip0 rw", "SupplementaryGroups=dialout gpio"):
        assert line in table.splitlines(), line
    assert f"ExecStart={PROGRAM} run --config {tmp_path / 'T07.toml'}" in table
    archive = (units / "table-controller-archive.service").read_text()
    assert "--table T07=tcp://127.0.0.1:5557" in archive and "PrivateDevices=yes" in archive
    prune = (units / "table-controller-prune-T07.service").read_text()
    assert (f"ExecStart={PROGRAM} journal prune --journal {tmp_path / 'T07.sqlite'} --compress "
            "--archive /var/lib/table-controller/studio.sqlite") in prune.splitlines()
    assert "Type=oneshot" in prune and "NoNewPrivileges=yes" in prune
    timer = (units / "table-controller-prune-T07.timer").read_text()
    assert "OnCalendar=*-*-* 04:30:00" in timer and "Persistent=true" in timer
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("no systemd-analyze here to verify the units with")
    for unit in sorted([*units.glob("*.service"), *units.glob("*.timer")]):
        done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0 and "Unknown" not in done.stderr, (unit.name, done.stderr)


def test_a_table_unit_needs_a_configuration_that_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install-service", "table", "--config", str(tmp_path / "missing.toml"), "--print"]) == 2
    assert "missing.toml" in capsys.readouterr().err
