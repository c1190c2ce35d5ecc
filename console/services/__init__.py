"""The service layer: every operation that changes a cluster or the store, one module per concern.

* :mod:`~console.services.runs`: preflight, start, approve, pause, resume, stop, throttle change,
  abandon, rollback as a plan, sweep;
* :mod:`~console.services.cancel`: cancel what an operator saw, or a cancel plan;
* :mod:`~console.services.plans`: save, rebase, notes;
* :mod:`~console.services.sessions`: sign in and out;
* :mod:`~console.services.drafts`: the Drafts page's autosave (scratch work).

Callers import the module they need: ``from console.services import runs as run_service``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_SUBMODULES = ("cancel", "drafts", "plans", "runs", "sessions")


def __getattr__(name: str) -> ModuleType:
    """``console.services.runs`` and the others without importing them first (``import console``
    stays cheap; a notebook's ``console.services.runs.pause(...)`` just works)."""
    if name not in _SUBMODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{name}")
