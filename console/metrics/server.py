"""The metrics address: ``CONSOLE_METRICS_ADDRESS`` (``host:port``; off when unset), served by
prometheus-client's own HTTP server in a daemon thread, in the console's server process and in
``python -m console executor``. One per process, reading the process's store."""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass

from prometheus_client import start_http_server

from console.core.errors import ConfigError
from console.metrics.collector import StoreCollector
from console.metrics.instruments import REGISTRY
from console.storage.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_address(text: str) -> Address:
    """``host:port`` or ``:port`` (127.0.0.1; port 0: any free one); a bad one is a :class:`ConfigError` naming it."""
    host, sep, port = text.strip().rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigError(
            f"CONSOLE_METRICS_ADDRESS={text!r} is not host:port.", "For example 127.0.0.1:9464 (or :9464)."
        )
    return Address(host.strip("[]") or "127.0.0.1", int(port))


_lock = threading.Lock()
_served: Address | None = None
_collector: StoreCollector | None = None


def served() -> Address | None:
    """The address this process serves its metrics on; None when it serves none."""
    return _served


def watch_store(store: Store) -> None:
    """Read ``store`` at every scrape (the process's store: one collector, the last store given)."""
    global _collector
    with _lock:
        if _collector is None:
            _collector = StoreCollector(store)
            REGISTRY.register(_collector)
        else:
            _collector.store = store


def serve_metrics(store: Store, address: str | None = None) -> Address | None:
    """Serve the metrics when an address is set (``address`` or ``CONSOLE_METRICS_ADDRESS``); the
    address served, or None when off. Serving twice in a process serves once."""
    global _served
    text = address if address is not None else os.environ.get("CONSOLE_METRICS_ADDRESS", "").strip()
    if not text:
        return None
    where = parse_address(text)
    watch_store(store)
    with _lock:
        if _served is None:
            try:
                server, _ = start_http_server(where.port, where.host, registry=REGISTRY)
            except OSError as e:
                raise ConfigError(
                    f"The metrics cannot be served on {where}: {e.strerror or e}.",
                    "Set CONSOLE_METRICS_ADDRESS to a free host:port (or unset it).",
                ) from None
            _served = Address(where.host, server.server_port)
            log.info("metrics served on http://%s/metrics", _served)
        return _served
