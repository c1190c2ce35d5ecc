"""Kafka requests the pinned kafka-python (3.0.12) has no message class for, declared the way it
declares its own: from the request's JSON description (Kafka's protocol definition format), kept
beside this module. Imported only by the adapter that sends them.

- ``UnregisterBroker`` (API key 64, KIP-631; what ``kafka-cluster unregister`` sends): removes a
  broker's registration from a KRaft cluster once the broker is shut down for good.
"""

from __future__ import annotations

import sys

from kafka.protocol.api_message import ApiMessage

_HERE = sys.modules[__name__]


class UnregisterBrokerRequest(ApiMessage, load_json=_HERE):  # type: ignore[misc, call-arg]
    pass


class UnregisterBrokerResponse(ApiMessage, load_json=_HERE):  # type: ignore[misc, call-arg]
    pass
