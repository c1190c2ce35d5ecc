"""One driver per run: the gateway a run's driver sends through, which checks, immediately before
every request that changes the cluster, that the driver still holds the run's lease (and renews
it: the lease's heartbeat). A driver that lost it (paused or cut off from the store past its lease,
and another took the run over) sends nothing more: :class:`console.core.errors.LeaseLost`, or the
store's error when the store cannot be reached. Reads go straight through."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from console.runs.gateway import ClusterGateway

WRITES = frozenset(
    {
        "alter_reassignments",
        "elect_leaders",
        "alter_configs",
        "alter_cluster_default",
        "create_legacy_reassignment",
        "alter_replica_log_dirs",
        "unregister_broker",
    }
)
"""The gateway's requests that change the cluster (:class:`console.runs.gateway.ClusterGateway`)."""


class FencedGateway:
    """``inner`` with ``fence()`` called before each request of :data:`WRITES`; anything else is
    ``inner``'s own."""

    def __init__(self, inner: ClusterGateway, fence: Callable[[], None]) -> None:
        self.inner = inner
        self.fence = fence

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.inner, name)
        if name not in WRITES:
            return found

        def fenced(*args: Any, **kwargs: Any) -> Any:
            self.fence()
            return found(*args, **kwargs)

        return fenced


def fenced(inner: ClusterGateway, fence: Callable[[], None]) -> ClusterGateway:
    """``inner``, each request that changes the cluster preceded by ``fence()``."""
    return cast(ClusterGateway, FencedGateway(inner, fence))
