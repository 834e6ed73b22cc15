"""The few distribution functions the summary needs, without scipy.

Importing scipy.stats costs ~0.6 s of CPU (it loads scipy.spatial, optimize, linalg, ...), which
a 30 s campaign pays before its first cell (the summary's imports are warmed while the testbed
is built, and must be done before a measurement starts). Student's t (Welch's test, confidence
intervals), chi-square (the upper bound on a standard deviation that adaptive repetitions stop
on), Shapiro-Wilk (which test to choose) and Mann-Whitney U (for samples that are not
normal) are small algorithms: they are here, checked against scipy in tests/test_stats.py.
"""

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

_NORMAL = NormalDist()


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz; Numerical Recipes §6.4)."""
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, 1.0 - x) / b


def t_sf2(t: float, df: float) -> float:
    """Two-sided tail of Student's t: P(|T| >= |t|) with df (possibly fractional) degrees of freedom."""
    if math.isinf(df):
        return 2.0 * _NORMAL.cdf(-abs(t))
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_ppf(p: float, df: float) -> float:
    """Quantile of Student's t (0.5 < p < 1): Newton's method on the CDF from the normal quantile."""
    target = 2.0 * (1.0 - p)  # the two-sided tail at the answer
    t = _t_start(p, df)
    for _ in range(100):
        pdf = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
                       - (df + 1) / 2 * math.log1p(t * t / df))
        step = (t_sf2(t, df) - target) / (2.0 * pdf)
        t = t + step if t + step > 0 else t / 2
        if abs(step) <= 1e-13 * max(1.0, t):
            break
    return t


def gamma_p(a: float, x: float) -> float:
    """Regularized lower incomplete gamma P(a, x): the series below a + 1, else 1 - the
    continued fraction of Q (Numerical Recipes §6.2)."""
    if x <= 0.0:
        return 0.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1.0:
        term = total = 1.0 / a
        for n in range(1, 100_000):  # some sqrt(a) terms: 1 000 for 10 000 degrees of freedom
            term *= x / (a + n)
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return total * math.exp(log_front)
    tiny = 1e-300
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 100_000):
        numerator = -i * (i - a)
        b += 2.0
        d = numerator * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + numerator / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return 1.0 - math.exp(log_front) * h


def chi2_ppf(p: float, df: float) -> float:
    """Quantile of the chi-square distribution (0 < p < 1): bisection on its CDF P(df/2, x/2),
    which is monotone, so it cannot miss (called a few times per run, for the bound on a
    standard deviation)."""
    low, high = 0.0, max(1.0, 2.0 * df)
    while gamma_p(df / 2.0, high / 2.0) < p:
        low, high = high, 2.0 * high
    for _ in range(200):
        middle = (low + high) / 2.0
        if gamma_p(df / 2.0, middle / 2.0) < p:
            low = middle
        else:
            high = middle
        if high - low <= 1e-14 * high:
            break
    return (low + high) / 2.0


def mean_var(data: Sequence[float]) -> tuple[float, float]:
    """Mean and unbiased variance (n >= 2), both taken on the deviations from the first value.

    This is the one variance computation behind Welch's t, Hedges' g and the constant-sample
    rule (`is_constant`). Centred on a value of the sample, a constant sample gives exactly its
    value and a variance of exactly 0.0: a mean taken first (fsum / n) can be off by an ulp
    (6 × 1.1 / 6 is not 1.1), and its squared deviations are rounding noise (~1e-32) that a
    test for == 0 misses and a t statistic divides by."""
    first = data[0]
    deviations = [x - first for x in data]
    shift = math.fsum(deviations) / len(data)
    var = math.fsum((d - shift) * (d - shift) for d in deviations) / (len(data) - 1)
    return first + shift, var


def is_constant(data: Sequence[float]) -> bool:
    """No spread to test against: `mean_var`'s variance is exactly 0. That is when every value
    is equal (max == min; a group-wise path can test that), and also when the values differ by
    less than ~1e-154 in absolute terms, where the squared deviations underflow to 0."""
    return len(data) < 2 or mean_var(data)[1] == 0


def welch_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p of Welch's unequal-variance t test (scipy's ttest_ind(equal_var=False)).
    Both samples constant (`is_constant`): t is undefined, and two constants are equal (p 1)
    or they differ (p 0)."""
    (ma, va), (mb, vb) = mean_var(a), mean_var(b)
    se_a, se_b = va / len(a), vb / len(b)
    if se_a + se_b == 0:
        return 1.0 if ma == mb else 0.0
    t = (ma - mb) / math.sqrt(se_a + se_b)
    return t_sf2(t, satterthwaite_df(se_a, len(a), se_b, len(b)))


def satterthwaite_df(va: float, na: int, vb: float, nb: int) -> float:
    """Welch-Satterthwaite degrees of freedom of va + vb, the variances of two means of na and nb
    values (va + vb > 0). Taken in shares of the sum, so that variances whose squares underflow
    (below ~1e-154) cannot make it 0 / 0; it lies between min(na, nb) - 1 and na + nb - 2."""
    wa, wb = va / (va + vb), vb / (va + vb)
    return 1 / (wa * wa / (na - 1) + wb * wb / (nb - 1))


def skewness(data: Sequence[float]) -> float:
    """Sample skewness, biased (scipy.stats.skew's default): m3 / m2^1.5."""
    n = len(data)
    mean = math.fsum(data) / n
    m2 = math.fsum((x - mean) ** 2 for x in data) / n
    m3 = math.fsum((x - mean) ** 3 for x in data) / n
    return m3 / m2 ** 1.5 if m2 > 0 else math.nan


def _poly(coefficients: Sequence[float], x: float) -> float:
    return sum(c * x ** i for i, c in enumerate(coefficients))


# Royston's polynomial approximations (algorithm AS R94, Applied Statistics 44(4), 1995).
_C1 = (0.0, 0.221157, -0.147981, -2.07119, 4.434685, -2.706056)
_C2 = (0.0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633)
_C3 = (0.544, -0.39978, 0.025054, -6.714e-4)
_C4 = (1.3822, -0.77857, 0.062767, -0.0020322)
_C5 = (-1.5861, -0.31082, -0.083751, 0.0038915)
_C6 = (-0.4803, -0.082676, 0.0030302)
_G = (-2.273, 0.459)


def _sw_coefficients(n: int) -> list[float]:
    """The n // 2 largest Shapiro-Wilk coefficients a_n, a_(n-1), ... (positive)."""
    if n == 3:
        return [math.sqrt(0.5)]
    half = n // 2
    m = [_NORMAL.inv_cdf((i - 0.375) / (n + 0.25)) for i in range(1, half + 1)]  # negative: the low tail
    summ2 = 2 * math.fsum(v * v for v in m)
    ssumm2, rsn = math.sqrt(summ2), 1 / math.sqrt(n)
    a = [-v / ssumm2 for v in m]
    a[0] = _poly(_C1, rsn) - m[0] / ssumm2
    if n > 5:
        a[1] = _poly(_C2, rsn) - m[1] / ssumm2
        fac = math.sqrt((summ2 - 2 * m[0] ** 2 - 2 * m[1] ** 2) / (1 - 2 * a[0] ** 2 - 2 * a[1] ** 2))
        first = 2
    else:
        fac = math.sqrt((summ2 - 2 * m[0] ** 2) / (1 - 2 * a[0] ** 2))
        first = 1
    return a[:first] + [-v / fac for v in m[first:]]


def shapiro_p(data: Sequence[float]) -> float:
    """p of the Shapiro-Wilk test (3 <= n <= 5000; the data must not be all equal): W from
    Royston's coefficients, its p from his normalising transformation."""
    x = sorted(data)
    n = len(x)
    a = _sw_coefficients(n)
    full = [-v for v in a] + ([0.0] if n % 2 else []) + a[::-1]
    span = x[-1] - x[0]
    xs = [(v - x[n // 2]) / span for v in x]
    mean_a, mean_x = math.fsum(full) / n, math.fsum(xs) / n
    ssa = math.fsum((v - mean_a) ** 2 for v in full)
    ssx = math.fsum((v - mean_x) ** 2 for v in xs)
    sax = math.fsum((u - mean_a) * (v - mean_x) for u, v in zip(full, xs))
    root = math.sqrt(ssa * ssx)
    w1 = (root - sax) * (root + sax) / (ssa * ssx)  # 1 - W, exact near W = 1
    if n == 3:
        return max(0.0, 6 / math.pi * (math.asin(math.sqrt(1 - w1)) - math.pi / 3))
    y = math.log(w1)
    if n <= 11:
        gamma = _poly(_G, n)
        if y >= gamma:
            return 1e-19  # beyond the approximation's range: as far from normal as it gets
        y, mean, sd = -math.log(gamma - y), _poly(_C3, n), math.exp(_poly(_C4, n))
    else:
        mean, sd = _poly(_C5, math.log(n)), math.exp(_poly(_C6, math.log(n)))
    return 0.5 * math.erfc((y - mean) / sd / math.sqrt(2))


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p of the Mann-Whitney U test, as scipy.stats.mannwhitneyu (method "auto") gives
    it: the exact null distribution of U when a sample has at most 8 values and nothing is tied,
    else the normal approximation with the tie and continuity corrections."""
    n1, n2 = len(a), len(b)
    ranks, tie_sizes = _average_ranks([*a, *b])
    u1 = sum(ranks[:n1]) - n1 * (n1 + 1) / 2
    u = max(u1, n1 * n2 - u1)
    if (n1 > 8 and n2 > 8) or any(size > 1 for size in tie_sizes):
        n = n1 + n2
        tie_term = sum(size ** 3 - size for size in tie_sizes)
        sd = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
        return min(1.0, 2.0 * _NORMAL.cdf(-(u - n1 * n2 / 2 - 0.5) / sd)) if sd > 0 else 1.0
    counts = _u_counts(n1, n2)
    return min(1.0, 2.0 * sum(counts[int(u):]) / sum(counts))


def _average_ranks(values: list[float]) -> tuple[list[float], list[int]]:
    """1-based ranks with ties given their average rank, and the size of every group of equal values."""
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks, tie_sizes, start = [0.0] * len(values), [], 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for i in order[start:end + 1]:
            ranks[i] = (start + end) / 2 + 1
        tie_sizes.append(end - start + 1)
        start = end + 1
    return ranks, tie_sizes


def _u_counts(n1: int, n2: int) -> list[int]:
    """How many of the C(n1 + n2, n1) orderings give U = 0, 1, ..., n1 * n2: the coefficients of
    the Gaussian binomial prod_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i)."""
    length = n1 * n2 + 1
    counts = [1] + [0] * (length - 1)
    for i in range(1, n1 + 1):
        for k in range(length - 1, n2 + i - 1, -1):  # times (1 - q^(n2+i))
            counts[k] -= counts[k - n2 - i]
        for k in range(i, length):  # divided by (1 - q^i)
            counts[k] += counts[k - i]
    return counts


# --- many at once ------------------------------------------------------------------------
# compare_all asks for tens of thousands of Welch p-values in a large report; the continued
# fraction above, run element-wise over arrays, does them in one pass. Every element takes the
# same steps as the scalar functions (it stops when the scalar loop would), so the answers agree.

_lgamma = np.frompyfunc(math.lgamma, 1, 1)


def _betacf_many(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    tiny, eps = 1e-300, 1e-15
    c, d = np.ones_like(x), 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / np.where(np.abs(d) > tiny, d, tiny)
    h, active = d.copy(), np.ones(x.shape, dtype=bool)
    for m in range(1, 1000):
        if not active.any():
            break
        aa, bb, xx = a[active], b[active], x[active]
        cc, dd, hh = c[active], d[active], h[active]
        for numerator in (m * (bb - m) * xx / ((aa + 2 * m - 1) * (aa + 2 * m)),
                          -(aa + m) * (aa + bb + m) * xx / ((aa + 2 * m) * (aa + 2 * m + 1))):
            dd = 1.0 + numerator * dd
            dd = 1.0 / np.where(np.abs(dd) > tiny, dd, tiny)
            cc = 1.0 + numerator / cc
            cc = np.where(np.abs(cc) > tiny, cc, tiny)
            hh = hh * (dd * cc)
        c[active], d[active], h[active] = cc, dd, hh
        active[active] = ~(np.abs(dd * cc - 1.0) < eps)
    return h


def betainc_many(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """`betainc` element-wise over arrays of equal shape."""
    a, b, x = (np.array(v, dtype=float) for v in np.broadcast_arrays(a, b, x))
    out = np.where(x <= 0.0, 0.0, 1.0)
    inside = (x > 0.0) & (x < 1.0)
    a, b, x = a[inside], b[inside], x[inside]
    log_front = (_lgamma(a + b) - _lgamma(a) - _lgamma(b)).astype(float) + a * np.log(x) + b * np.log1p(-x)
    low = x < (a + 1.0) / (a + b + 2.0)
    values = np.empty(x.shape)
    values[low] = np.exp(log_front[low]) * _betacf_many(a[low], b[low], x[low]) / a[low]
    high = ~low
    values[high] = 1.0 - np.exp(log_front[high]) * _betacf_many(b[high], a[high], 1.0 - x[high]) / b[high]
    out[inside] = values
    return out


def t_sf2_many(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    """`t_sf2` element-wise over arrays of equal shape."""
    t, df = (np.array(v, dtype=float) for v in np.broadcast_arrays(t, df))
    out = np.empty(t.shape)
    infinite = np.isinf(df)
    out[infinite] = [2.0 * _NORMAL.cdf(-abs(v)) for v in t[infinite]]
    finite = ~infinite
    out[finite] = betainc_many(df[finite] / 2.0, 0.5, df[finite] / (df[finite] + t[finite] * t[finite]))
    return out


def _t_start(p: float, df: float) -> float:
    """Where t_ppf's Newton steps start: the normal quantile with the Cornish-Fisher terms of
    Student's t up to 1/df^4 (Abramowitz & Stegun 26.7.5). A report of 10 000 cells asks for
    some 30 000 quantiles at 1-3 degrees of freedom; from there Newton needs 3 steps instead of
    6 (each a continued fraction), to the same answer within 1e-15."""
    z = _NORMAL.inv_cdf(p)
    if df < 1:
        return z
    z2 = z * z
    terms = ((z2 + 1) * z / 4, ((5 * z2 + 16) * z2 + 3) * z / 96, (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384,
             ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160)
    start = z + sum(term / df ** (k + 1) for k, term in enumerate(terms))
    return start if start > 0 else z
