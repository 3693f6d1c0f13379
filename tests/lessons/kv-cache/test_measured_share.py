"""measured_share.py: the share of the bound a published speed reached is below 1, and
the ranges it turns bounds into are ordered and refuse what is not a speed."""

import pytest
from measured_share import BF16_SHARE, realistic, realistic_time, shares


def test_the_bf16_share_is_a_share():
    low, high = BF16_SHARE
    assert 0 < low < high < 1


def test_ranges_sit_below_the_bound_and_above_the_floor():
    slow, fast = realistic(100.0)
    assert slow < fast < 100.0
    short, long = realistic_time(10.0)
    assert 10.0 < short < long
    assert short == pytest.approx(1000 / (100 * BF16_SHARE[1]))


@pytest.mark.parametrize("speed, step_bytes", [(0, 1), (84.28, 0), (-1, 10)])
def test_refuses_what_is_not_a_speed(speed, step_bytes):
    with pytest.raises(ValueError, match="must be positive"):
        shares(speed, step_bytes)
