import pytest

from vpnbench.foundation.units import format_rate, parse_duration, parse_rate, parse_size


@pytest.mark.parametrize("text, seconds", [("2s", 2.0), ("500ms", 0.5), ("0.05s", 0.05), ("1m", 60.0),
                                           ("100us", 1e-4), (3, 3.0), ("2", 2.0)])
def test_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["-2s", "0s", "fast", "2 parsecs", "", True, -1])
def test_bad_durations(bad):
    with pytest.raises(ValueError):
        parse_duration(bad)


@pytest.mark.parametrize("text, bps", [("50M", 50_000_000), ("1G", 1_000_000_000), ("400m", 400_000_000),
                                       ("2.5Gbit", 2_500_000_000), ("100k", 100_000), (1000, 1000)])
def test_rates(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize("bad", ["fast", "-5M", "0", "5 Tbit", "M"])
def test_bad_rates(bad):
    with pytest.raises(ValueError, match="rate"):
        parse_rate(bad)


def test_sizes_and_format():
    assert parse_size("256K") == 262144
    assert parse_size("2M") == 2 * 1024 * 1024
    assert format_rate(50_000_000) == "50M"
    assert format_rate(1_500_000) == "1500K"
    with pytest.raises(ValueError):
        parse_size("big")
