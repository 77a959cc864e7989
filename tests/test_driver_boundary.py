"""Drivers know nothing of the controller: ``firmware_interfaces`` imports nothing from ``table_controller``."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import firmware_interfaces

DRIVERS = Path(firmware_interfaces.__file__).parent

#: Imports every module of firmware_interfaces (folder argv[2]) named argv[1] or under it, and
#: prints the table_controller modules then loaded and, for each, every module that imported it.
IMPORT_ALL = r"""
import builtins, importlib, json, pathlib, sys

importers = {}  # table_controller module -> the modules that import it (cached or not)
real_import = builtins.__import__

def watching_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and name.split(".")[0] == "table_controller":
        importers.setdefault(name, []).append((globals or {}).get("__name__"))
    return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = watching_import
root = pathlib.Path(sys.argv[2])
names = sorted(".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
               for p in root.rglob("*.py"))
imported = [n for n in names if n == sys.argv[1] or n.startswith(sys.argv[1] + ".")]
for name in imported:
    importlib.import_module(name)
print(json.dumps({"imported": imported, "importers": importers,
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] == "table_controller")}))
"""


def import_all(prefix: str) -> dict[str, object]:
    """Import every driver module under ``prefix`` in a fresh interpreter; what it loaded."""
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL, prefix, str(DRIVERS)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_no_driver_source_file_imports_table_controller() -> None:
    offenders = []
    for path in sorted(DRIVERS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            offenders += [f"{path.relative_to(DRIVERS)}:{node.lineno}: {n}" for n in names
                          if n.split(".")[0] == "table_controller"]
    assert offenders == []


def test_importing_the_shoe_stack_and_the_registries_loads_no_table_controller_module() -> None:
    for prefix in ("firmware_interfaces.shoe", "firmware_interfaces.errors", "firmware_interfaces.registry"):
        result = import_all(prefix)
        assert result["imported"], prefix
        assert result["loaded"] == [], prefix


def test_no_driver_module_imports_table_controller_at_run_time() -> None:
    """The camera drivers use ``calibration``, which (still) uses the controller's errors and card
    codes: that is the only way in, never a driver module itself."""
    result = import_all("firmware_interfaces")
    importers = result["importers"]
    assert isinstance(importers, dict)
    by_drivers = sorted(f"{who} imports {name}" for name, whos in importers.items() for who in whos
                        if str(who).split(".")[0] == "firmware_interfaces")
    assert by_drivers == []
    ways_in = {str(who).split(".")[0] for whos in importers.values() for who in whos}
    assert ways_in <= {"calibration", "table_controller"}
