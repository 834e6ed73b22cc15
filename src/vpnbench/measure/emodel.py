"""The ITU-T G.107 E-model: a call's transmission rating R and its MOS from delay and loss.

Clause numbers are those of Rec. ITU-T G.107 (06/2015); the 2005 edition has the same
formulas under 3.x. Every input not measured keeps its default of clause 7.7 (Table 3):
SLR 8 dB, RLR 2, STMR 15, LSTR 18, Ds = Dr 3, TELR 65, WEPL 110, Ps = Pr 35 dB(A),
Nc -70 dBm0p, Nfor -64 dBmp, qdu 1, A 0. What the network decides is the mean one-way delay
T (= Ta, absolute delay, and Tr = 2T) and the packet loss the codec suffers.

    R = Ro - Is - Id - Ie,eff + A                                             (7.1, eq. 7-1)
    Ro = 15 - 1.5 (SLR + No)                                                  (7.2, eq. 7-2)
      No = 10 lg(10^(Nc/10) + 10^(Nos/10) + 10^(Nor/10) + 10^(Nfo/10))        (eq. 7-3)
      with the defaults Ro = 94.77
    Is = Iolr + Ist + Iq                                                      (7.3, eq. 7-8)
      with the defaults Is = 1.41
    Id = Idte + Idle + Idd                                                    (7.4, eq. 7-21)
      Idte = ((Roe - Re)/2 + sqrt((Roe - Re)^2/4 + 100) - 1)(1 - e^-T)        (eq. 7-22)
        Roe = -1.5 (No - 2),  Re = 80 + 2.5 (TERV - 14)
        TERV = TELR - 40 lg((1 + T/10) / (1 + T/150)) + 6 e^(-0.3 T^2)        (eq. 7-23)
      Idle = (Ro - Rle)/2 + sqrt((Ro - Rle)^2/4 + 169)                        (eq. 7-26)
        Rle = 10.5 (WEPL + 7)(Tr + 1)^(-1/4)
      Idd = 0 for Ta <= 100 ms, else with X = lg(Ta/100) / lg 2               (eq. 7-27, 7-28)
        Idd = 25 ((1 + X^6)^(1/6) - 3 (1 + (X/3)^6)^(1/6) + 2)
    Ie,eff = Ie + (95 - Ie) Ppl / (Ppl/BurstR + Bpl)                          (7.5, eq. 7-29)
    MOS = 1 for R < 0; 4.5 for R > 100; else                                  (Annex B, eq. B-4)
        1 + 0.035 R + R (R - 60)(100 - R) 7e-6

Ie and Bpl of each codec are those of ITU-T G.113 Appendix I (Table I.1, I.3); Ppl is the
percentage of packets lost or discarded by the jitter buffer, BurstR 1 (random loss).
With every default (T = 0, no loss) R = 93.2 and MOS = 4.41, as clause 7.7 states.
"""

import dataclasses
import math

from vpnbench.foundation.errors import MeasurementError

# Ro and Is with every default of clause 7.7; computed once here from eq. 7-2 to 7-20 by
# default_ro() below (the tests check both against the values the Recommendation quotes).
NC, NFOR, PS, PR, SLR, RLR, STMR, DS, DR, TELR, WEPL = -70.0, -64.0, 35.0, 35.0, 8.0, 2.0, 15.0, 3.0, 3.0, 65.0, 110.0
IS_DEFAULT = 1.41


@dataclasses.dataclass(frozen=True)
class Codec:
    ie: float  # equipment impairment factor (no loss)
    bpl: float  # packet-loss robustness factor
    source: str


CODECS = {
    "g711": Codec(0.0, 25.1, "G.113 Table I.3: G.711 with packet loss concealment (Appendix I of G.711)"),
    "g711-noplc": Codec(0.0, 4.3, "G.113 Table I.3: G.711 without packet loss concealment"),
    "g729": Codec(11.0, 19.0, "G.113 Table I.3: G.729A + VAD"),
    # Opus is not in G.113's narrowband tables; these are an assumption (a modern codec's
    # concealment, as good as G.711's) and the stored inputs say so.
    "opus": Codec(0.0, 25.1, "assumed: not in G.113 narrowband tables; G.711+PLC values used"),
}


def noise_no() -> float:
    """No (eq. 7-3) from the default circuit, send, receive and far-end noise (eq. 7-4 to 7-7)."""
    olr = SLR + RLR
    nos = PS - SLR - DS - 100 + 0.004 * (PS - olr - DS - 14) ** 2
    pre = PR + 10 * math.log10(1 + 10 ** ((10 - (STMR + DR)) / 10))
    nor = RLR - 121 + pre + 0.008 * (pre - 35) ** 2
    nfo = NFOR + RLR
    return 10 * math.log10(sum(10 ** (n / 10) for n in (NC, nos, nor, nfo)))


def default_ro() -> float:
    return 15 - 1.5 * (SLR + noise_no())


def idte(t_ms: float) -> float:
    """Talker echo impairment (eq. 7-22, 7-23), TELR at its default."""
    terv = TELR - 40 * math.log10((1 + t_ms / 10) / (1 + t_ms / 150)) + 6 * math.exp(-0.3 * t_ms ** 2)
    roe, re = -1.5 * (noise_no() - 2), 80 + 2.5 * (terv - 14)
    return ((roe - re) / 2 + math.sqrt((roe - re) ** 2 / 4 + 100) - 1) * (1 - math.exp(-t_ms))


def idle(tr_ms: float) -> float:
    """Listener echo impairment (eq. 7-26) for round-trip delay Tr, WEPL at its default."""
    ro = default_ro()
    rle = 10.5 * (WEPL + 7) * (tr_ms + 1) ** -0.25
    return (ro - rle) / 2 + math.sqrt((ro - rle) ** 2 / 4 + 169)


def idd(ta_ms: float) -> float:
    """Impairment of a long absolute delay Ta (eq. 7-27, 7-28): none up to 100 ms."""
    if ta_ms <= 100:
        return 0.0
    x = math.log10(ta_ms / 100) / math.log10(2)
    return 25 * ((1 + x ** 6) ** (1 / 6) - 3 * (1 + (x / 3) ** 6) ** (1 / 6) + 2)


def ie_eff(codec: Codec, ppl_pct: float, burst_r: float = 1.0) -> float:
    """Effective equipment impairment (eq. 7-29): the codec's Ie plus what loss adds."""
    return codec.ie + (95 - codec.ie) * ppl_pct / (ppl_pct / burst_r + codec.bpl)


def mos_from_r(r: float) -> float:
    """Annex B, eq. B-4, kept within [1, 4.5]: the polynomial dips to 0.99 for R between 0 and
    about 6.5, below the scale's floor of 1."""
    if r < 0:
        return 1.0
    if r > 100:
        return 4.5
    return min(4.5, max(1.0, 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6))


@dataclasses.dataclass(frozen=True)
class Rating:
    """R, MOS and every term that went into them (stored with the cell)."""

    r_factor: float
    mos: float
    delay_ms: float
    ppl_pct: float
    codec: str
    ro: float
    is_: float
    idte: float
    idle: float
    idd: float
    ie_eff: float
    ie: float
    bpl: float
    codec_source: str


def rate_call(delay_ms: float, ppl_pct: float, codec: str = "g711", burst_r: float = 1.0) -> Rating:
    """The E-model rating of a call with mean one-way mouth-to-ear delay delay_ms (T = Ta, Tr = 2T)
    and ppl_pct % of packets lost or late, every other input at its default. A delay that is
    not a finite number >= 0 ms, or a loss outside 0..100 %, is a MeasurementError (a
    measurement produced it), never a NaN rating."""
    if not _number(delay_ms) or delay_ms < 0:
        raise MeasurementError(f"E-model: the one-way delay must be a finite number of ms >= 0, not {delay_ms!r}")
    if not _number(ppl_pct) or not 0 <= ppl_pct <= 100:
        raise MeasurementError(f"E-model: the packet loss must be a percentage 0..100, not {ppl_pct!r}")
    c = CODECS[codec]
    ro, terms = default_ro(), (idte(delay_ms), idle(2 * delay_ms), idd(delay_ms))
    eff = ie_eff(c, ppl_pct, burst_r)
    r = ro - IS_DEFAULT - sum(terms) - eff
    return Rating(r, mos_from_r(r), delay_ms, ppl_pct, codec, ro, IS_DEFAULT, *terms, eff, c.ie, c.bpl, c.source)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
