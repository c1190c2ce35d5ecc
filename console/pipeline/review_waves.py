"""The review job's waves: each cluster's moving entries cut first fit in plan order (as a run cuts
them) and their ETA, column-wise (the columns go to the cutter as flat lists, never a row each)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from console.core.ids import BrokerId
from console.moves.progress import WaveLoad, estimate_waves
from console.moves.waves import WaveLimits, first_fit_flat


def cut_waves(
    moving: pa.Table, limits: WaveLimits, throttle: int | None
) -> tuple[pa.Table, dict[str, tuple[int, float | None]]]:
    """Waves (first fit, in plan order, as a run cuts them) of each cluster's moving entries
    (cluster, idx, adding, bytes_to_copy, size, source; in any order): the table (cluster, idx,
    wave) and per cluster how many waves and the ETA at ``throttle`` (None when unthrottled or a
    size is unknown). Column-wise: the columns go to the cutter as flat lists, never a row each."""

    moving = moving.sort_by([("cluster", "ascending"), ("idx", "ascending")])
    n = moving.num_rows
    names = moving.column("cluster").combine_chunks().dictionary_encode()
    codes = np.asarray(names.indices.to_numpy(zero_copy_only=False), np.int64)
    adding = moving.column("adding").combine_chunks()
    lengths = np.asarray(pc.fill_null(pc.list_value_length(adding), 0).to_numpy(zero_copy_only=False), np.int64)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.asarray(pc.list_flatten(adding).to_numpy(zero_copy_only=False), np.int64)
    copies = np.asarray(pc.fill_null(moving.column("bytes_to_copy"), 0).to_numpy(), np.int64)
    size = moving.column("size")
    sizes = np.asarray(pc.fill_null(size, 0).to_numpy(), np.int64)
    size_known = np.asarray(pc.is_valid(size).to_numpy(), bool)
    source = moving.column("source")
    sources = np.asarray(pc.fill_null(source, 0).to_numpy(), np.int64)
    source_known = np.asarray(pc.is_valid(source).to_numpy(), bool)
    dir_broker, dir_bytes, dir_offsets = _dir_copies(moving)
    summed = np.concatenate([[0], np.cumsum(np.maximum(dir_bytes, 0))])
    fitted = copies + summed[dir_offsets[1:]] - summed[dir_offsets[:-1]]  # as plan_waves counts them
    waves = np.zeros(n, np.int32)
    out: dict[str, tuple[int, float | None]] = {}
    bounds = [0, *(np.flatnonzero(np.diff(codes)) + 1).tolist(), n] if n else [0]
    keys = names.dictionary.to_pylist()
    for a, b in pairwise(bounds):
        cluster = str(keys[int(codes[a])])
        these = first_fit_flat(
            (offsets[a : b + 1] - offsets[a]).tolist(),
            flat[offsets[a] : offsets[b]].tolist(),
            fitted[a:b].tolist(),
            limits,
        )
        w = np.asarray(these, np.int64)
        waves[a:b] = w
        count = int(w.max()) + 1
        eta = (
            waves_eta(
                w,
                count,
                lengths[a:b],
                flat[offsets[a] : offsets[b]],
                copies[a:b],
                sizes[a:b],
                size_known[a:b],
                sources[a:b],
                source_known[a:b],
                throttle,
                dirs,
            )
            if (dirs := _dir_loads(w, count, dir_offsets[a : b + 1], dir_broker, dir_bytes)) is not None
            else None
        )
        out[cluster] = (count, eta)
    table = pa.table(
        {"cluster": moving.column("cluster"), "idx": moving.column("idx"), "wave": pa.array(waves, pa.int32())}
    )
    return table, out


def _dir_copies(moving: pa.Table) -> tuple[Any, Any, Any]:
    """Each moving entry's copies between the log dirs of its brokers, flat: their brokers, their
    bytes (-1: not known) and each entry's offsets into them."""

    dirs = moving.column("dir_copies").combine_chunks()
    lens = np.asarray(pc.fill_null(pc.list_value_length(dirs), 0).to_numpy(zero_copy_only=False), np.int64)
    offsets = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    flat = pc.list_flatten(dirs)
    brokers = np.asarray(flat.field("broker").to_numpy(zero_copy_only=False), np.int64)
    sizes = np.asarray(pc.fill_null(flat.field("bytes"), -1).to_numpy(zero_copy_only=False), np.int64)
    return brokers, sizes, offsets


def _dir_loads(wave: Any, count: int, offsets: Any, brokers: Any, sizes: Any) -> list[dict[BrokerId, int]] | None:
    """Per wave, the bytes each broker copies between its log dirs (``WaveLoad.dir_copies``); None
    when a size is not known."""

    these = slice(int(offsets[0]), int(offsets[-1]))
    b, size = brokers[these], sizes[these]
    if bool((size < 0).any()):
        return None
    w = np.repeat(wave, np.diff(offsets))
    out: list[dict[BrokerId, int]] = [{} for _ in range(count)]
    for i, x, y in zip(w.tolist(), b.tolist(), size.tolist(), strict=True):
        out[i][BrokerId(x)] = out[i].get(BrokerId(x), 0) + y
    return out


@dataclass(frozen=True)
class _PerWave:
    """Bytes summed per (wave, broker), sorted by wave then broker: three aligned arrays."""

    wave: Any
    broker: Any
    total: Any


def _per_wave(wave: Any, broker: Any, nbytes: Any) -> _PerWave:
    """``nbytes`` summed per distinct (``wave``, ``broker``) of aligned arrays."""
    order = np.lexsort((broker, wave))
    wave, broker, nbytes = wave[order], broker[order], nbytes[order]
    first = np.ones(len(wave), bool)
    first[1:] = (wave[1:] != wave[:-1]) | (broker[1:] != broker[:-1])
    at = np.flatnonzero(first)
    return _PerWave(wave[at], broker[at], np.add.reduceat(nbytes, at) if len(at) else nbytes[:0])


def waves_eta(
    wave: Any,
    count: int,
    lengths: Any,
    flat: Any,
    copies: Any,
    sizes: Any,
    size_known: Any,
    sources: Any,
    source_known: Any,
    throttle: int | None,
    dir_loads: Sequence[Mapping[BrokerId, int]] = (),
) -> float | None:
    """The ETA of one cluster's waves (:func:`console.moves.progress.estimate_waves` of each wave's
    :func:`console.moves.progress.load_of`), its loads summed column-wise: each wave's bytes, its
    bytes each leader sends and the bytes each adding broker receives."""

    moves = lengths > 0
    if bool((moves & ~size_known).any()):
        return None  # a partition of unknown size is copied: no estimate (load_of)
    copy = np.zeros(count, np.int64)
    np.add.at(copy, wave, copies)
    sending = moves & source_known
    # senders: per (wave, source) of the entries that copy, the bytes sent (size × adding replicas)
    sent = _per_wave(wave[sending], sources[sending], (sizes * lengths)[sending])
    # receivers: per (wave, adding broker) of the entries that copy, the partitions' sizes summed
    each = np.repeat(sending, lengths)
    got = _per_wave(np.repeat(wave, lengths)[each], flat[each], np.repeat(sizes, lengths)[each])
    s_at = np.searchsorted(sent.wave, np.arange(count + 1)).tolist()
    r_at = np.searchsorted(got.wave, np.arange(count + 1)).tolist()
    senders, sent_by = sent.broker.tolist(), sent.total.tolist()
    receivers, received, copied = got.broker.tolist(), got.total.tolist(), copy.tolist()
    loads = [
        WaveLoad(
            copied[i],
            {
                BrokerId(x): y
                for x, y in zip(senders[s_at[i] : s_at[i + 1]], sent_by[s_at[i] : s_at[i + 1]], strict=True)
            },
            {
                BrokerId(x): y
                for x, y in zip(receivers[r_at[i] : r_at[i + 1]], received[r_at[i] : r_at[i + 1]], strict=True)
            },
            dir_loads[i] if dir_loads else {},
        )
        for i in range(count)
    ]
    est = estimate_waves(loads, throttle)
    return None if est is None else est.seconds
