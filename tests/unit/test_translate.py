"""Library errors become the console's own errors at the adapter boundary (pure: no cluster)."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException
from kafka import errors as kerr

from console.adapters.kafka import translate
from console.core.errors import AuthorizationFailed, ClusterUnavailable, ConsoleError, UnsupportedByCluster


@pytest.mark.parametrize(
    "exc, kind",
    [
        (kerr.ClusterAuthorizationFailedError(), AuthorizationFailed),
        (kerr.TopicAuthorizationFailedError(), AuthorizationFailed),
        (kerr.UnsupportedVersionError(), UnsupportedByCluster),
        (kerr.IncompatibleBrokerVersion("ListPartitionReassignments"), UnsupportedByCluster),
        (kerr.KafkaTimeoutError(), ClusterUnavailable),
        (kerr.BrokerNotAvailableError(), ClusterUnavailable),
        (kerr.UnrecognizedBrokerVersion(), UnsupportedByCluster),
        (KafkaException(KafkaError(KafkaError.CLUSTER_AUTHORIZATION_FAILED)), AuthorizationFailed),
        (KafkaException(KafkaError(KafkaError.UNSUPPORTED_VERSION)), UnsupportedByCluster),
        (KafkaException(KafkaError(KafkaError._TRANSPORT)), ClusterUnavailable),
        (OSError("connection refused"), ClusterUnavailable),
    ],
)
def test_translate_names_the_cause_and_the_fix(exc, kind):
    err = translate(exc, "ListPartitionReassignments")
    assert type(err) is kind
    assert "ListPartitionReassignments" in err.message and err.hint


def test_console_errors_pass_through():
    own = ClusterUnavailable("x", "y")
    assert translate(own, "anything") is own
    assert isinstance(own, ConsoleError)
