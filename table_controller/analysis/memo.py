"""Keep the results of the slow exact enumerations for the life of the process.

The counting (how many deals fall in each class) depends only on the deck,
never on a paytable, so it is shared by every variant of a game and by tests.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from table_controller.analysis.sheet import Progress, no_progress

T = TypeVar("T")
_STORES: list[dict[Any, Any]] = []


def enumeration(fn: Callable[..., T]) -> Callable[..., T]:
    """Cache ``fn(*args, progress=..., **context)`` by its positional arguments.

    Keyword arguments are not part of the key: pass only what cannot change the
    result (a progress callback; a game whose dealing plan every variant shares).
    """
    store: dict[Any, T] = {}
    _STORES.append(store)

    @wraps(fn)
    def cached(*args: Any, progress: Progress = no_progress, **context: Any) -> T:
        if args not in store:
            store[args] = fn(*args, progress=progress, **context)
        return store[args]

    return cached


def clear_caches() -> None:
    """Forget every cached enumeration (the benchmark measures cold runs)."""
    for store in _STORES:
        store.clear()
