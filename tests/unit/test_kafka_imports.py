"""kafka-python is loaded whole when the Kafka adapter is, before any request runs on a thread: two
threads importing its modules at once deadlocked on their import locks (``_DeadlockError`` for
``kafka.protocol.admin``, which killed `make demo` under load once reads raced brokers on threads)."""

from __future__ import annotations

import subprocess
import sys


def test_the_kafka_adapter_loads_kafka_python_before_any_thread_asks_for_it() -> None:
    probe = (
        "import sys; import console.adapters.kafka.base; "
        "print(all(m in sys.modules for m in ('kafka.admin', 'kafka.protocol.admin', 'kafka.protocol.metadata')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"
