"""Which Kafka the sandbox runs, and in which mode: the release and mode choices and their checks.

Pure: nothing here starts a process or fetches a jar, so a refused choice is refused before
anything starts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from console.core.errors import SandboxError

DEFAULT_KAFKA = "4.4.0"
"""The newest 4.x release whose server (``kafka_2.13``) and tools (``kafka-tools``) jars both resolve
(4.4.0 both, with their dependency trees; no 4.4.1 or 4.5.0 yet) and start a sandbox the official
tools of the same release work against."""
ZOOKEEPER_KAFKA = "3.9.1"
"""The release ZooKeeper mode starts when none is named: 3.9 is the last line with ZooKeeper."""
EARLIER_KAFKA4 = ("4.0.2", "4.1.2", "4.2.2")
"""The newest patch release of each earlier 4.x line whose server and tools jars Maven Central has
(no 4.0.3, 4.1.3 or 4.2.3 yet): the cross-version tests start each, and ``make jars`` fetches them.
What differs between them, as the clusters say: fenced brokers in DescribeCluster from 4.0 (KIP-1073),
ELR on for new clusters and guarded moves (KIP-860) from 4.1, rollbacks naming log dirs from 4.2
(KAFKA-19582), cordons only from 4.3 (KIP-1066)."""


class Mode(StrEnum):
    """How the cluster keeps its metadata."""

    KRAFT = "kraft"
    ZOOKEEPER = "zookeeper"


@dataclass(frozen=True)
class KafkaRelease:
    """A Kafka release the sandbox can run: 3.9.x or 4.x."""

    major: int
    minor: int
    patch: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    @property
    def has_zookeeper(self) -> bool:
        """Kafka 4.0 removed ZooKeeper mode."""
        return self.major < 4


_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_SUPPORTED = "The sandbox runs Kafka 4.x (KRaft) and 3.9.x (KRaft or ZooKeeper), e.g. --kafka 4.3.1 or --kafka 3.9.1."


def parse_release(text: str) -> KafkaRelease:
    """``text`` as a release the sandbox supports; SandboxError otherwise."""
    m = _RELEASE.fullmatch(text.strip())
    if m is None:
        raise SandboxError(f"{text!r} is not a Kafka release.", f"Name one as major.minor.patch. {_SUPPORTED}")
    release = KafkaRelease(int(m[1]), int(m[2]), int(m[3]))
    if not (release.major == 4 or (release.major, release.minor) == (3, 9)):
        raise SandboxError(f"Kafka {release} is not supported by the sandbox.", _SUPPORTED)
    return release


@dataclass(frozen=True)
class SandboxOptions:
    """The release and mode of a sandbox to start."""

    kafka_version: str
    mode: Mode

    @property
    def release(self) -> KafkaRelease:
        return parse_release(self.kafka_version)


UP_DEFAULT = SandboxOptions(DEFAULT_KAFKA, Mode.KRAFT)
"""What ``up()`` starts when asked for nothing in particular (neither a release nor a mode): Kafka 4, KRaft."""


def sandbox_options(kafka_version: str | None = None, zookeeper: bool = False, kraft: bool = False) -> SandboxOptions:
    """The release and mode asked for, checked.

    ``zookeeper`` asks for ZooKeeper mode (3.x only; ``ZOOKEEPER_KAFKA`` when no release is named),
    ``kraft`` for KRaft mode; with neither, a 4.x release runs in KRaft mode and anything else in
    ``UP_DEFAULT``'s mode. No release named: ``UP_DEFAULT``'s.
    """
    if zookeeper and kraft:
        raise SandboxError("Choose KRaft or ZooKeeper mode, not both.", "KRaft is the mode of every Kafka 4 release.")
    release = parse_release(kafka_version) if kafka_version is not None else None
    if zookeeper:
        if release is not None and not release.has_zookeeper:
            raise SandboxError("Kafka 4 has no ZooKeeper mode; use --kafka 3.9.1 --zookeeper")
        return SandboxOptions(str(release or parse_release(ZOOKEEPER_KAFKA)), Mode.ZOOKEEPER)
    chosen = release or UP_DEFAULT.release
    if kraft or not chosen.has_zookeeper:
        return SandboxOptions(str(chosen), Mode.KRAFT)
    return SandboxOptions(str(chosen), UP_DEFAULT.mode)
