"""A slow reference for the betting capital, in plain Python, independent of the package.

Written from Waudby-Smith & Ramdas (2024), section 5 (the predictable plug-in
bets for a known n, truncated at c / m), and from the definition of the
orders in the docstring of ``evalstats.stats._intervals._orders``: the
values are sorted, then taken in each order, and the capitals are averaged.
Nothing here imports evalstats; each number is computed one value at a time.
"""

from __future__ import annotations

import itertools
import math

#: The package's settings, as documented: 8 orders (2 seeded, 4 rotations each), seed 23, c = 0.9.
ORDERS, TURNS, SEED, CAP = 8, 4, 23, 0.9

_MASK = (1 << 64) - 1


def splitmix64(z: int) -> int:
    """The output of SplitMix64 for state ``z`` (Steele, Lea & Flood 2014; Vigna's splitmix64.c)."""
    z = (z + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def orders(n: int) -> list[tuple[int, ...]]:
    """Every order of n places when n! <= 8; else 2 keyed orders at 4 rotations each."""
    if math.factorial(n) <= ORDERS:
        return list(itertools.permutations(range(n)))
    start = splitmix64((SEED + n) & _MASK)
    out = []
    for b in range(ORDERS // TURNS):
        keys = [splitmix64((start + b * n + i) & _MASK) for i in range(n)]
        ranks = sorted(range(n), key=lambda i: keys[i])
        for j in range(TURNS):
            shift = j * n // TURNS
            out.append(tuple(ranks[shift:] + ranks[:shift]))
    return out


def capital(x: list[float], m: float, alpha: float) -> float:
    """The capital of betting that the mean of ``x`` (in this order) exceeds ``m``.

    Before value i (1-based) the running mean and variance use only x_1..x_{i-1},
    from the priors 1/2 and 1/4; the bet is min(sqrt(2 log(1/alpha) / (n s2)),
    c / m); the capital multiplies by 1 + bet (x_i - m).
    """
    n = len(x)
    k = 1.0
    total = 0.0  # sum of x_1..x_{i-1}
    squares = 0.0  # sum of (x_j - mu_j)^2 for j < i
    for i, xi in enumerate(x, start=1):
        s2 = (0.25 + squares) / i
        bet = math.sqrt(2.0 * math.log(1.0 / alpha) / (n * s2))
        if m > 0:
            bet = min(bet, CAP / m)
        k *= 1.0 + bet * (xi - m)
        total += xi
        mu = (0.5 + total) / (i + 1)  # the mean after x_i, as the next bet uses it
        squares += (xi - mu) ** 2
    return k


def averaged_capital(x: list[float], m: float, alpha: float) -> float:
    """The capital of :func:`capital` averaged over the orders of the sorted values."""
    ranked = sorted(x)
    caps = [capital([ranked[k] for k in order], m, alpha) for order in orders(len(x))]
    return sum(caps) / len(caps)


def lower_bound(x: list[float], alpha: float, *, steps: int = 42) -> float:
    """The smallest m (to 2**-steps, rounded down) where the averaged capital is below 1/alpha."""
    if averaged_capital(x, 0.0, alpha) < 1.0 / alpha:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = (lo + hi) / 2
        if averaged_capital(x, mid, alpha) >= 1.0 / alpha:
            lo = mid
        else:
            hi = mid
    return lo
