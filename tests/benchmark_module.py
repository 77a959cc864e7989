"""``benchmarks/recognition.py`` loaded as a module (it is a script, not part of a package), once
a test session: for tests of the benchmark's own helpers and verdicts."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from types import ModuleType

RECOGNITION_BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "recognition.py"


@functools.cache
def recognition_benchmark() -> ModuleType:
    """The recognition benchmark's module."""
    spec = importlib.util.spec_from_file_location("recognition_benchmark", RECOGNITION_BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
