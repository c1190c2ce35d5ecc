"""Dynamic configs: throttles, min ISR, cordons and tiered storage as the brokers report them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.adapters.kafka.base import ClientPart
from console.adapters.kafka.requests import Api
from console.adapters.kafka.translate import not_taken, retriable, translate
from console.adapters.kafka.wire import from_each
from console.adapters.records import (
    Configs,
)
from console.core.errors import (
    AnswerLost,
    ClusterUnavailable,
    ConsoleError,
)
from console.core.limits import BROKER_THROTTLE_KEYS, CORDONED_LOG_DIRS, REMOTE_STORAGE_ENABLE, TOPIC_THROTTLE_KEYS
from console.core.model import (
    DEFAULT_BROKER,
    BrokerId,
    cordon_list,
)
from console.core.shown import BrokerTopicConfigs


class ConfigsAdmin(ClientPart):
    """Dynamic configs: IncrementalAlterConfigs (brokers, topics, the cluster default) and DescribeConfigs."""

    def alter_configs(
        self, brokers: Mapping[BrokerId, Mapping[str, str | None]], topics: Mapping[str, Mapping[str, str | None]]
    ) -> None:
        """IncrementalAlterConfigs: each key SET to its value, or DELETEd for None. Raises
        :class:`ConsoleError` naming every resource that was not changed."""
        from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

        def resource(kind: Any, name: str, changes: Mapping[str, str | None]) -> Any:
            return ConfigResource(
                kind,
                name,
                incremental_configs=[
                    ConfigEntry(
                        k, v, incremental_operation=AlterConfigOpType.SET if v is not None else AlterConfigOpType.DELETE
                    )
                    for k, v in changes.items()
                ],
            )

        # librdkafka sends each BROKER resource to its own broker: one call each
        batches = [[resource(ResourceType.BROKER, str(b), c)] for b, c in brokers.items() if c]
        topic_res = [resource(ResourceType.TOPIC, t, c) for t, c in topics.items() if c]
        if topic_res:
            batches.append(topic_res)
        admin = self.client.confluent()
        failed: list[str] = []
        lost: list[str] = []
        for batch in batches:
            broker = int(batch[0].name) if batch[0].restype == ResourceType.BROKER else None
            self.client.requests.sent(Api.INCREMENTAL_ALTER_CONFIGS, len(batch), broker)
            try:
                futures = admin.incremental_alter_configs(batch, request_timeout=self.client.settings.timeout_s)
            except Exception as e:
                raise translate(e, "IncrementalAlterConfigs") from None
            for res, fut in futures.items():
                try:
                    fut.result(timeout=self.client.settings.timeout_s + 1)
                except Exception as e:
                    said = (
                        f"{'broker' if res.restype == ResourceType.BROKER else 'topic'} {res.name}: "
                        f"{translate(e, 'IncrementalAlterConfigs').message}"
                    )
                    (lost if retriable(e) and not not_taken(e) else failed).append(said)
        if lost:
            raise AnswerLost(
                "No answer came back for the config change of " + "; ".join(lost + failed) + " (applied or not: "
                "not known)",
                "The console reads the configs the brokers report before setting anything again.",
            )
        if failed:
            raise ClusterUnavailable(
                "Configs were not changed on " + "; ".join(failed),
                "The console retries; check that the brokers named are up.",
            )

    def alter_cluster_default(self, changes: Mapping[str, str | None]) -> None:
        """IncrementalAlterConfigs on the cluster-wide default broker configs (the resource
        ``kafka-configs --entity-default`` names: type BROKER, name ""): each key SET, or DELETEd for
        None. Neither client takes that resource through its admin call (librdkafka refuses
        "Invalid ConfigResource", kafka-python wants a broker id), so the request kafka-python builds
        for it is sent to any broker, which hands it to the controller; its answer is checked here."""
        import kafka.errors
        from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType

        resource = ConfigResource(
            ConfigResourceType.BROKER,
            "",
            {k: (AlterConfigOp.SET, v) if v is not None else (AlterConfigOp.DELETE, None) for k, v in changes.items()},
        )

        def send(c: Any) -> None:
            self.client.requests.sent(Api.INCREMENTAL_ALTER_CONFIGS, 1)
            request = c._alter_configs_request([resource], incremental=True)

            async def call() -> Any:
                return await c._manager.send(request)

            for answer in c._manager.run(call).responses:
                if answer.error_code:
                    raise kafka.errors.for_code(answer.error_code)(answer.error_message or "")

        self.client._with_kp("IncrementalAlterConfigs on the cluster default", send)

    def describe_configs(self, brokers: tuple[BrokerId, ...], topics: tuple[str, ...]) -> Configs:
        """Throttles set on brokers and topics (dynamic configs only), each topic's effective
        ``min.insync.replicas`` and ``remote.storage.enable`` (tiered storage, KIP-405) and each
        broker's ``cordoned.log.dirs`` in force (whatever set it;
        absent from the answer of a broker before 4.3). A broker's own rates are keyed by its id; the cluster-wide default
        rates (DescribeConfigs source ``DYNAMIC_DEFAULT_BROKER_CONFIG``) by ``DEFAULT_BROKER``, once,
        never as if each broker had set them."""
        from confluent_kafka.admin import ConfigResource, ConfigSource, ResourceType

        admin = self.client.confluent()
        # librdkafka takes one BROKER resource per call (each goes to its own broker).
        batches = [[ConfigResource(ResourceType.BROKER, str(b))] for b in brokers]
        if topics:
            batches.append([ConfigResource(ResourceType.TOPIC, t) for t in topics])
        futures: dict[Any, Any] = {}
        try:
            for batch in batches:
                broker = int(batch[0].name) if batch[0].restype == ResourceType.BROKER else None
                self.client.requests.sent(Api.DESCRIBE_CONFIGS, len(batch), broker)
                futures.update(admin.describe_configs(batch, request_timeout=self.client.settings.timeout_s))
        except Exception as e:
            raise translate(e, "DescribeConfigs") from None
        if not futures:
            return Configs()
        own = {ConfigSource.DYNAMIC_BROKER_CONFIG.value, ConfigSource.DYNAMIC_TOPIC_CONFIG.value}
        default = ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value
        cluster_default: dict[str, str] = {}
        b_out: dict[str, dict[str, str]] = {}
        t_out: dict[str, dict[str, str]] = {}
        min_isr: dict[str, int] = {}
        tiered: set[str] = set()
        cordons: dict[str, tuple[str, ...]] = {}
        errors: list[ConsoleError] = []
        missing_brokers: list[str] = []
        missing_topics: list[str] = []
        for res, fut in futures.items():
            try:
                cfg = fut.result(timeout=self.client.settings.timeout_s + 1)
            except Exception as e:
                errors.append(translate(e, "DescribeConfigs"))  # raises ``e`` itself when it is not a Kafka error
                (missing_brokers if res.restype == ResourceType.BROKER else missing_topics).append(res.name)
                continue
            keys = BROKER_THROTTLE_KEYS if res.restype == ResourceType.BROKER else TOPIC_THROTTLE_KEYS
            found = {}
            for k in keys:
                entry = cfg.get(k)
                if entry is None:
                    continue
                if entry.value not in (None, "") and entry.source in own:
                    found[k] = entry.value
                # The cluster-wide default (``--entity-default``) is in force on every broker without
                # its own value; one that has its own still names the default among its synonyms.
                for named in (entry, *getattr(entry, "synonyms", {}).values()):
                    if named.name == k and named.source == default and named.value not in (None, ""):
                        cluster_default[k] = named.value
            if found:
                (b_out if res.restype == ResourceType.BROKER else t_out)[res.name] = found
            entry = cfg.get("min.insync.replicas")
            if res.restype == ResourceType.TOPIC and entry is not None and str(entry.value).isdigit():
                min_isr[res.name] = int(entry.value)
            entry = cfg.get(REMOTE_STORAGE_ENABLE)
            if res.restype == ResourceType.TOPIC and entry is not None and str(entry.value).lower() == "true":
                tiered.add(res.name)
            entry = cfg.get(CORDONED_LOG_DIRS)
            if res.restype == ResourceType.BROKER and entry is not None:
                cordons[res.name] = cordon_list(entry.value)
        if errors and len(errors) == len(futures):
            raise errors[0]
        if cluster_default:
            b_out[DEFAULT_BROKER] = cluster_default
        return Configs(
            b_out,
            t_out,
            min_isr,
            tuple(sorted(missing_brokers, key=int)),
            tuple(sorted(missing_topics)),
            cordons,
            frozenset(tiered),
        )

    def topics_min_isr(self, topics: tuple[str, ...]) -> Configs:
        """What :meth:`describe_configs` says of ``topics``' ``min.insync.replicas`` and
        ``remote.storage.enable`` (their effective values), from the first broker that answers
        DescribeConfigs (:meth:`Client._any_broker`): a cancel's read, which a hung broker must not
        hold up (librdkafka sends it to a broker of its own choosing). A topic the answer has an
        error for is in ``missing_topics``."""
        from kafka.protocol.admin import DescribeConfigsRequest

        keys = ["min.insync.replicas", REMOTE_STORAGE_ENABLE]
        resources = [
            DescribeConfigsRequest.DescribeConfigsResource(
                resource_type=_TOPIC, resource_name=t, configuration_keys=keys
            )
            for t in topics
        ]
        self.client.requests.sent(Api.DESCRIBE_CONFIGS, len(resources))
        answer = self.client._any_broker("DescribeConfigs", lambda: DescribeConfigsRequest(resources=resources), _same)
        min_isr: dict[str, int] = {}
        tiered: set[str] = set()
        missing: list[str] = []
        for res in answer.results:
            if res.error_code:
                missing.append(res.resource_name)
                continue
            values = {c.name: c.value for c in res.configs}
            if str(values.get("min.insync.replicas")).isdigit():
                min_isr[res.resource_name] = int(values["min.insync.replicas"])
            if str(values.get(REMOTE_STORAGE_ENABLE)).lower() == "true":
                tiered.add(res.resource_name)
        return Configs(min_insync=min_isr, missing_topics=tuple(sorted(missing)), tiered_topics=frozenset(tiered))

    def topic_configs_by_broker(self, topics: tuple[str, ...]) -> tuple[BrokerTopicConfigs, ...]:
        """Each broker's own answer to DescribeConfigs for ``topics``' throttle lists (sent to every
        broker at once): what each has applied, which trails the controller. A broker that does
        not answer has its error said, not raised."""
        from kafka.protocol.admin import DescribeConfigsRequest

        def request() -> Any:
            return DescribeConfigsRequest(
                resources=[
                    DescribeConfigsRequest.DescribeConfigsResource(
                        resource_type=_TOPIC, resource_name=t, configuration_keys=sorted(TOPIC_THROTTLE_KEYS)
                    )
                    for t in topics
                ]
            )

        if not topics:
            return ()
        raw = self.client._with_kp("DescribeConfigs from each broker", lambda client: from_each(client, request))
        views = []
        for node, answer, error in raw:
            self.client.requests.sent(Api.DESCRIBE_CONFIGS, len(topics), node)
            if answer is None:
                views.append(BrokerTopicConfigs(BrokerId(node), {}, str(error)))
                continue
            shown = {
                res.resource_name: {
                    c.name: c.value for c in res.configs if c.config_source == _DYNAMIC_TOPIC and c.value is not None
                }
                for res in answer.results
                if not res.error_code
            }
            views.append(BrokerTopicConfigs(BrokerId(node), shown))
        return tuple(sorted(views, key=lambda v: v.broker))


_TOPIC = 2
"""DescribeConfigs' resource type of a topic."""
_DYNAMIC_TOPIC = 1
"""DescribeConfigs' source of a config set on the topic itself (``DYNAMIC_TOPIC_CONFIG``)."""


def _same(answer: Any) -> Any:
    return answer
