"""The E-model (ITU-T G.107) against values worked out by hand from its formulas."""

import math

import pytest

from vpnbench.measure import emodel


def test_defaults_give_the_recommendations_own_rating():
    # clause 7.7: with all defaults R = 93.2 (Ro 94.77, Is 1.41, Id ~0.15 at T = 0)
    assert emodel.default_ro() == pytest.approx(94.77, abs=0.01)
    rating = emodel.rate_call(0.0, 0.0)
    assert rating.r_factor == pytest.approx(93.2, abs=0.05)
    assert rating.mos == pytest.approx(4.41, abs=0.01)


def test_idd_by_hand():
    assert emodel.idd(100) == 0.0
    # Ta = 200 ms: X = lg 2 / lg 2 = 1; Idd = 25 (2^(1/6) - 3 (1 + 3^-6)^(1/6) + 2)
    by_hand = 25 * (1.122462 - 3 * 1.000228 + 2)
    assert emodel.idd(200) == pytest.approx(by_hand, abs=0.01)
    assert emodel.idd(200) == pytest.approx(3.04, abs=0.01)
    # Ta = 400 ms: X = 2; Idd = 25 ((1 + 64)^(1/6) - 3 (1 + (2/3)^6)^(1/6) + 2)
    assert emodel.idd(400) == pytest.approx(25 * (65 ** (1 / 6) - 3 * (1 + (2 / 3) ** 6) ** (1 / 6) + 2), abs=1e-9)


def test_ie_eff_by_hand():
    # G.711 without PLC (Ie 0, Bpl 4.3), 1 % random loss: 95 * 1 / (1 + 4.3) = 17.92
    assert emodel.ie_eff(emodel.CODECS["g711-noplc"], 1.0) == pytest.approx(17.92, abs=0.01)
    # G.729A (Ie 11, Bpl 19), 2 %: 11 + 84 * 2 / (2 + 19) = 19.0
    assert emodel.ie_eff(emodel.CODECS["g729"], 2.0) == pytest.approx(19.0, abs=0.01)
    assert emodel.ie_eff(emodel.CODECS["g711"], 0.0) == 0.0


def test_mos_from_r_by_hand():
    assert emodel.mos_from_r(-5) == 1.0 and emodel.mos_from_r(101) == 4.5
    # R = 80: 1 + 2.8 + 80 * 20 * 20 * 7e-6 = 4.024
    assert emodel.mos_from_r(80) == pytest.approx(4.024)
    # R = 50: 1 + 1.75 + 50 * (-10) * 50 * 7e-6 = 2.575
    assert emodel.mos_from_r(50) == pytest.approx(2.575)


def test_delay_and_loss_lower_the_rating_and_every_term_is_kept():
    ideal = emodel.rate_call(20, 0)
    far = emodel.rate_call(300, 0)
    lossy = emodel.rate_call(20, 3)
    assert far.r_factor < ideal.r_factor and lossy.r_factor < ideal.r_factor
    assert far.idd > 0 and lossy.ie_eff > 0
    total = far.ro - far.is_ - far.idte - far.idle - far.idd - far.ie_eff
    assert far.r_factor == pytest.approx(total)
    assert math.isclose(far.ie, 0.0) and far.codec == "g711"
