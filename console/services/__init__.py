"""The service layer: every operation that changes a cluster or the store, one module per concern.

* :mod:`~console.services.runs`: preflight, start, approve, pause, resume, stop, throttle change,
  abandon, rollback as a plan, sweep;
* :mod:`~console.services.cancel`: cancel what an operator saw, or a cancel plan;
* :mod:`~console.services.plans`: save, rebase, notes;
* :mod:`~console.services.history`: the history job, run on the server on request;
* :mod:`~console.services.sessions`: sign in and out;
* :mod:`~console.services.drafts`: the Drafts page's autosave (scratch work);
* :mod:`~console.services.cordons`: cordon and uncordon brokers and log dirs;
* :mod:`~console.services.decommission`: decommission brokers (cordon, drain, verify, unregister).

Callers import the module they need: ``from console.services import runs as run_service``.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

_SUBMODULES = frozenset(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
"""Every module of this package, found on disk (a new one cannot be left out of the lazy list)."""


def __getattr__(name: str) -> ModuleType:
    """``console.services.runs`` and the others without importing them first (``import console``
    stays cheap; a notebook's ``console.services.runs.pause(...)`` just works)."""
    if name not in _SUBMODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return importlib.import_module(f"{__name__}.{name}")
