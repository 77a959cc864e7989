"""Drivers know nothing of the controller: ``firmware_interfaces`` and the camera calibration it
uses (``calibration``) import nothing from ``table_controller``."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import calibration
import firmware_interfaces

DRIVERS = Path(firmware_interfaces.__file__).parent
CALIBRATION = Path(calibration.__file__).parent

#: Imports every module of the package in folder argv[1] and prints the table_controller
#: modules then loaded and, for each, every module that imported it.
IMPORT_ALL = r"""
import builtins, importlib, json, pathlib, sys

importers = {}  # table_controller module -> the modules that import it (cached or not)
real_import = builtins.__import__

def watching_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and name.split(".")[0] == "table_controller":
        importers.setdefault(name, []).append((globals or {}).get("__name__"))
    return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = watching_import
root = pathlib.Path(sys.argv[1])
imported = sorted(".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
                  for p in root.rglob("*.py"))
for name in imported:
    importlib.import_module(name)
print(json.dumps({"imported": imported, "importers": importers,
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] == "table_controller")}))
"""


def import_all(package: Path) -> dict[str, object]:
    """Import every module of the package in ``package`` in a fresh interpreter; what it loaded."""
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL, str(package)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("package", [DRIVERS, CALIBRATION], ids=lambda p: p.name)
def test_no_source_file_imports_table_controller(package: Path) -> None:
    offenders = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            offenders += [f"{path.relative_to(package.parent)}:{node.lineno}: {n}" for n in names
                          if n.split(".")[0] == "table_controller"]
    assert offenders == []


@pytest.mark.parametrize("package", [DRIVERS, CALIBRATION], ids=lambda p: p.name)
def test_importing_every_module_loads_no_table_controller_module(package: Path) -> None:
    result = import_all(package)
    imported, importers = result["imported"], result["importers"]
    assert isinstance(imported, list) and isinstance(importers, dict)
    assert package.name in imported and f"{package.name}.errors" in imported  # the scan found them
    ways_in = sorted(f"{who} imports {name}" for name, whos in importers.items() for who in whos
                     if str(who).split(".")[0] != "table_controller")
    assert (result["loaded"], ways_in) == ([], [])
