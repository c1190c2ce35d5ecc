"""What the cluster is, and its KRaft administration."""

from __future__ import annotations

import time
from typing import Any

from console.adapters.kafka.base import ClientPart
from console.adapters.kafka.info import _versions, features_of, quorum_of
from console.adapters.kafka.requests import Api
from console.adapters.kafka.wire import _status_of
from console.core.cluster_info import decide_mode
from console.core.errors import (
    ConsoleError,
)
from console.core.model import (
    ApiRange,
    BrokerId,
    ClusterInfo,
    Feature,
    Quorum,
    SourceStatus,
)


class KraftAdmin(ClientPart):
    """What the cluster is and its KRaft administration: ApiVersions, DescribeFeatures,
    DescribeQuorum, UnregisterBroker."""

    def unregister_broker(self, broker: BrokerId) -> bool:
        """UnregisterBroker (API key 64; what ``kafka-cluster unregister --id N`` sends): the
        controller forgets the broker's registration. kafka-python 3.0.12 has no message for it:
        :mod:`console.adapters.protocol` declares it; it is sent to any broker, which hands it to
        the controller, and its answer's error code is checked here: False for
        BROKER_ID_NOT_REGISTERED (there was nothing to unregister). Unsupported (ZooKeeper mode,
        before Kafka 3.3) raises :class:`UnsupportedByCluster`."""
        import kafka.errors

        def send(c: Any) -> bool:
            from console.adapters.protocol import UnregisterBrokerRequest

            async def call() -> Any:
                return await c._manager.send(UnregisterBrokerRequest(broker_id=int(broker)))

            answer = c._manager.run(call)
            if answer.error_code == kafka.errors.BrokerIdNotRegisteredError.errno:
                return False
            if answer.error_code:
                raise kafka.errors.for_code(answer.error_code)(answer.error_message or "")
            return True

        self.client.requests.sent(Api.UNREGISTER_BROKER)
        return self.client._with_kp(f"UnregisterBroker of broker {broker}", send)

    def read_cluster_info(self, zookeeper_configured: bool = False) -> ClusterInfo:
        """What the cluster is: its brokers' ApiVersions, its features, its controller quorum; each
        part with its status, never raising for cluster trouble (DescribeQuorum on a ZooKeeper
        cluster is ``UNSUPPORTED``: not available there)."""
        read_at = time.time()
        version: str | None = None
        apis: tuple[ApiRange, ...] = ()
        features: tuple[Feature, ...] = ()
        quorum: Quorum | None = None
        try:
            self.client.requests.sent(Api.DESCRIBE_CLUSTER)  # then each broker's ApiVersions (kept per connection)
            version, apis = self.client._kp_read("ApiVersions", lambda c: _versions(c, self.client.unanswering))
            v_status = SourceStatus.OK
        except ConsoleError as e:
            v_status = _status_of(e)
        except ValueError:  # DescribeCluster listed no broker
            v_status = SourceStatus.UNAVAILABLE
        f_status = q_status = v_status
        if v_status is not SourceStatus.UNAVAILABLE:  # a cluster that did not answer is not asked twice more
            try:
                self.client.requests.sent(Api.DESCRIBE_FEATURES)
                features = features_of(self.client._kp_read("DescribeFeatures", lambda c: c.describe_features()))
                f_status = SourceStatus.OK
            except ConsoleError as e:
                f_status = _status_of(e)
            try:
                self.client.requests.sent(Api.DESCRIBE_QUORUM)
                quorum = quorum_of(
                    self.client._kp_read(
                        "DescribeQuorum", lambda c: c.describe_metadata_quorum(), answered_by_broker=False
                    )
                )
                q_status = SourceStatus.OK
            except ConsoleError as e:
                q_status = _status_of(e)
            except ValueError:
                q_status = SourceStatus.UNAVAILABLE
        return ClusterInfo(
            read_at=read_at,
            api_version=version,
            mode=decide_mode(q_status, features, zookeeper_configured),
            features=features,
            quorum=quorum,
            apis=apis,
            zookeeper_configured=zookeeper_configured,
            versions_status=v_status,
            features_status=f_status,
            quorum_status=q_status,
        )
