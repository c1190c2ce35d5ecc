"""What the server loads once, in the background, when it starts (serve.py) or its first session
does (app.py run on its own): the modules the Live page imports, the chart library (Altair,
pandas, and the JSON schema Altair validates every chart against) and the table conversion.
Loading them cold takes seconds on a small machine; without this the first person to see a
reassignment in flight on the Live page, often the on-call engineer in an incident, waited for it
before the page drew its Cancel button. A page that needs them meanwhile waits for the import
already under way, never loads them twice.

Served by serve.py, the server also builds every configured cluster's parts when it starts: each
cluster's worker drives its unfinished runs (and checks their guardrails) from the server's start,
not from the first page that chose that cluster, and the clients have connected and read the
cluster once before anyone asks."""

from __future__ import annotations

import importlib
import logging
import threading

_lock = threading.Lock()
_started = False
log = logging.getLogger(__name__)


def start(clusters: bool = False) -> None:
    """Start the warm-up (once per server process; later calls do nothing); with ``clusters``, the
    parts of every configured cluster too (:func:`_start_clusters`)."""
    global _started
    with _lock:
        if _started:
            return
        _started = True
    threading.Thread(target=_warm, args=(clusters,), name="warm-up", daemon=True).start()


PAGE_MODULES = (
    "components.actions",
    "components.movers",
    "components.holds",
    "components.widgets",
    "console.core.health",
    "console.plans.logdirs",
    "console.present.cluster",
    "console.present.guardrails",
    "console.present.history",
    "console.present.live",
    "console.present.review",
)
"""What the Live page (the first a person opens, and the on-call's) imports beyond app.py."""


def _warm(clusters: bool) -> None:
    if clusters:
        _start_clusters()
    try:
        for name in PAGE_MODULES:
            importlib.import_module(name)
        from streamlit import dataframe_util

        from console.present.charts import replica_grid

        cell = {"partition": "t-0", "broker": "0", "role": "leader", "label": "L", "in sync": "yes"}
        replica_grid([cell], ["t-0"]).to_dict()  # the first to_dict builds Altair's schema validator
        dataframe_util.convert_anything_to_pandas_df([cell])
    except Exception:  # a warm-up that fails costs the first page its load time, nothing else
        log.exception("warm-up failed")


def _start_clusters() -> None:
    """Each configured cluster's parts built (its worker started) and one lean read of it: a
    cluster that does not answer is the pages' to say, it costs the warm-up nothing else."""
    from components import deps

    try:
        known = deps.clusters()
    except Exception:  # a configuration the pages name (the sidebar says what is wrong)
        log.exception("warm-up: the clusters could not be listed")
        return
    for settings in known.values():
        try:
            deps.parts(settings).reader.snapshot(lean=True)  # the parts built: the worker starts with them
        except Exception:
            log.warning("warm-up: cluster %s not read at the server's start", settings.name, exc_info=True)
