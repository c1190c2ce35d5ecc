"""One broker's configs that name a balancer (Confluent's self-balancing: ``confluent.balancer.*``),
for recognising balancers (:mod:`console.moves.balancers`). Apache Kafka's brokers do not know these
names and so never report them."""

from __future__ import annotations

from console.adapters.kafka.base import Client
from console.adapters.kafka.requests import Api
from console.adapters.kafka.translate import translate
from console.core.model import BrokerId

BALANCER_PREFIXES = ("confluent.balancer.",)


def balancer_configs(client: Client, broker: BrokerId) -> dict[str, str]:
    """The configs of ``broker`` whose names start with a balancer's prefix, with their values."""
    from confluent_kafka.admin import ConfigResource, ResourceType

    admin = client.confluent()
    client.requests.sent(Api.DESCRIBE_CONFIGS, 1, int(broker))
    try:
        futures = admin.describe_configs(
            [ConfigResource(ResourceType.BROKER, str(int(broker)))], request_timeout=client.settings.timeout_s
        )
        out: dict[str, str] = {}
        for fut in futures.values():
            for name, entry in fut.result(timeout=client.settings.timeout_s + 1).items():
                if name.startswith(BALANCER_PREFIXES) and entry.value is not None:
                    out[str(name)] = str(entry.value)
        return out
    except Exception as e:
        raise translate(e, "DescribeConfigs") from None
