import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.adapters.records import TopicZnode
from console.adapters.znodes import (
    encode_topic,
    parse_broker,
    parse_config,
    parse_controller,
    parse_legacy_reassignment,
    parse_partition_state,
    parse_topic,
)
from console.core.errors import ZnodeFormatError
from tests.unit.builders import ids


def test_topic_znode_version_1():
    z = parse_topic("/brokers/topics/t", b'{"version":1,"partitions":{"0":[1,2],"1":[2,3]}}')
    assert z.version == 1 and z.topic_id is None
    assert z.partitions == {0: ids(1, 2), 1: ids(2, 3)}
    assert z.adding == {} and z.removing == {}


def test_topic_znode_version_2_with_reassignment():
    raw = {
        "version": 2,
        "partitions": {"0": [4, 5, 6, 1, 2, 3]},
        "adding_replicas": {"0": [4, 5, 6]},
        "removing_replicas": {"0": [1, 2, 3]},
    }
    z = parse_topic("/p", json.dumps(raw).encode())
    assert z.adding == {0: ids(4, 5, 6)} and z.removing == {0: ids(1, 2, 3)}


def test_topic_znode_version_3_key_order_does_not_matter():
    raw = '{"removing_replicas":{},"partitions":{"1":[2,3,1],"0":[1,2]},"topic_id":"Sb3hB7KoSCqM2ltYUx7dCw","adding_replicas":{},"version":3}'
    z = parse_topic("/p", raw)
    assert z.version == 3 and z.topic_id == "Sb3hB7KoSCqM2ltYUx7dCw"
    assert z.partitions[1] == ids(2, 3, 1)


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"nope",
        b"[1]",
        b'{"partitions":{"x":[1]}}',
        b'{"partitions":{"0":"1"}}',
        b'{"partitions":{"0":[true]}}',
        b'{"version":"3","partitions":{}}',
    ],
)
def test_topic_znode_malformed(raw):
    with pytest.raises(ZnodeFormatError):
        parse_topic("/p", raw)


def test_partition_state():
    s = parse_partition_state(
        "/s", b'{"controller_epoch":3,"leader":1,"version":1,"leader_epoch":7,"isr":[1,2,3]}', ids(1, 2, 3)
    )
    assert s.leader == 1 and s.isr == ids(1, 2, 3)
    assert parse_partition_state("/s", b'{"leader":-1,"isr":[]}', ids(1)).leader is None


def test_broker_znode_v5_and_endpoint_fallback():
    raw = (
        '{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
        '"endpoints":["PLAINTEXT://127.0.0.1:9092"],"jmx_port":-1,"port":9092,"host":"127.0.0.1",'
        '"version":5,"timestamp":"1700000000000","rack":"r1"}'
    )
    b = parse_broker("/b", 0, raw)
    assert (b.host, b.port, b.rack) == ("127.0.0.1", 9092, "r1")
    b2 = parse_broker("/b", 1, '{"version":5,"host":null,"port":-1,"endpoints":["SASL_SSL://kafka-1:9093"]}')
    assert (b2.host, b2.port, b2.rack) == ("kafka-1", 9093, None)


def test_controller_legacy_and_config():
    assert parse_controller("/c", '{"version":2,"brokerid":2,"timestamp":"1","kraftControllerEpoch":-1}') == 2
    legacy = parse_legacy_reassignment(
        "/a", '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}]}'
    )
    assert legacy == {("foo", 0): ids(1, 2)}
    cfg = parse_config("/config/topics/t", '{"version":1,"config":{"leader.replication.throttled.replicas":"0:101"}}')
    assert cfg == {"leader.replication.throttled.replicas": "0:101"}
    with pytest.raises(ZnodeFormatError):
        parse_legacy_reassignment("/a", '{"version":1,"partitions":[{"topic":"foo"}]}')


replicas = st.lists(st.integers(0, 100), min_size=1, max_size=5, unique=True)


@given(
    parts=st.dictionaries(st.integers(0, 50), replicas, min_size=1, max_size=10),
    version=st.sampled_from([1, 2, 3]),
    data=st.data(),
)
def test_topic_znode_roundtrip(parts, version, data):
    chosen = data.draw(st.lists(st.sampled_from(sorted(parts)), unique=True)) if version >= 2 else []
    z = TopicZnode(
        version,
        "abc" if version == 3 else None,
        {p: ids(*r) for p, r in parts.items()},
        {p: ids(*parts[p][:1]) for p in chosen},
        {p: ids(*parts[p][-1:]) for p in chosen},
    )
    assert parse_topic("/p", encode_topic(z)) == z


@given(st.binary(max_size=200))
def test_garbage_never_escapes_as_another_exception(raw):
    for fn in (
        lambda: parse_topic("/p", raw),
        lambda: parse_controller("/c", raw),
        lambda: parse_legacy_reassignment("/a", raw),
        lambda: parse_config("/c", raw),
        lambda: parse_broker("/b", 0, raw),
        lambda: parse_partition_state("/s", raw, ids(1)),
    ):
        try:
            fn()
        except ZnodeFormatError:
            pass
