"""One unit convention for sizes, rates and throttles (decimal: 1 KB = 1000 bytes), with one
formatting and one parsing function every page and the CLI use: 10,000 B/s showed as 9.8 KB/s, and
Drafts asked MB/s, Review KB/s of 1024 and Runs B/s. A number alone is bytes/s everywhere, as in
Kafka's tools (it was MB/s on the pages and bytes/s in the CLI)."""

from __future__ import annotations

import argparse
import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st

from console.cli.output import rate_arg
from console.core.format import RATE_MAX, human_bytes, human_rate, parse_rate


def test_rates_and_sizes_print_in_decimal_units() -> None:
    assert human_rate(10_000) == "10.0 KB/s"
    assert human_rate(20_000_000) == "20.0 MB/s"
    assert human_rate(999) == "999 B/s"
    assert human_bytes(1_500) == "1.5 KB" and human_bytes(4_000_000_000) == "4.0 GB"
    assert human_rate(None) == "?" and human_bytes(None) == "?"


@pytest.mark.parametrize(
    ("typed", "bytes_per_s"),
    [
        ("20 KB/s", 20_000),
        ("1.5 MB/s", 1_500_000),
        ("10MB", 10_000_000),
        ("500 kB/s", 500_000),
        ("2 MiB/s", 2 * 1024 * 1024),
        ("10,000", 10_000),
        ("20000", 20_000),  # a number alone: bytes/s, on every page and in the CLI
        (" 3 GB/s ", 3_000_000_000),
        ("0", 0),
        (7, 7),
    ],
)
def test_a_throttle_is_read_as_a_person_types_it(typed: str | int, bytes_per_s: int) -> None:
    assert parse_rate(typed) == bytes_per_s


def test_a_number_alone_means_bytes_per_second_everywhere() -> None:
    """Met on the pages: 20000 was 20 GB/s on Review (a number alone was MB/s there) and 20 KB/s in
    the CLI; the page's own error said to write 20000 for bytes/s. One meaning, no unit to pass."""
    assert list(inspect.signature(parse_rate).parameters) == ["text"]
    assert parse_rate("20000") == rate_arg("20000") == 20_000
    with pytest.raises(ValueError, match=r"or 20000 \(a number alone is bytes/s\)"):
        parse_rate("fast")


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("fast", "is not a rate"),
        ("-5 MB/s", "is not a rate"),
        ("20 XB/s", "is not a unit"),
        ("1e3", "is not a rate"),
        ("99999999999 TB/s", "more than a throttle can be"),
        ("", "is not a rate"),
        # a small b is bits (met in the browser: "5 Mb/s" was taken as 5 MB/s, eight times the rate meant)
        ("5 Mb/s", r"Mb/s is bits per second .* write MB/s for bytes \(5 Mb/s would be 625.0 KB/s\)"),
        ("40 kb/s", "kb/s is bits per second"),
        ("10mb", "mb/s is bits per second"),
        ("100 b/s", "b/s is bits per second"),
        (-5, "is not a rate"),
        (float("nan"), "is not a rate"),
        (float("inf"), "is not a rate"),
    ],
)
def test_what_is_not_a_rate_is_refused_saying_what_is(typed: str | float, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_rate(typed)


@given(st.integers(0, RATE_MAX))
def test_what_the_console_prints_reads_back_within_its_rounding(rate: int) -> None:
    back = parse_rate(human_rate(rate))
    assert abs(back - rate) <= max(1, rate) * 0.051  # one decimal place of the unit printed


def test_the_cli_takes_bytes_per_second_or_a_unit() -> None:
    assert rate_arg("10000000") == rate_arg("10MB/s") == 10_000_000
    with pytest.raises(argparse.ArgumentTypeError, match="is not a rate"):
        rate_arg("ten")
