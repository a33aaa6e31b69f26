#!/usr/bin/env python3
"""Balance gap of experiments/cube_wall, computed independently of contactlab: the root d of
κ·b'(d) + a'(d) = 0 (barrier pressure −κb' equals adhesive pressure a') by bisection.
b(d) = −d̂ (d/d̂ − 1)² ln(d/d̂) on (0, d̂) (paper 000 eq. 2 per unit κ, units of length);
a(d) = paper 000 eq. 10 with a₂ = Yε_c / (2(d̂_p − d̂_a)) (eq. 12): a'(d) = 2a₁d below d̂_p,
2a₂d + b₂ on [d̂_p, d̂_a), 0 beyond.
Usage: gap.py KAPPA Y EPS_C DHAT [DHAT_P [DHAT_A]]  -> prints d (m); d = d̂ when ε_c = 0."""
import math
import sys


def barrier_d1(d, dhat):
    """b'(d) for b(d) = −d̂ (d/d̂ − 1)² ln(d/d̂); ≤ 0 on (0, d̂), 0 beyond."""
    if d >= dhat:
        return 0.0
    x = d / dhat
    return -2.0 * (x - 1.0) * math.log(x) - (x - 1.0) ** 2 / x


def adhesion_d1(d, yeps, dp, da):
    """a'(d) of eq. 10–12 (distance form): ≥ 0, the adhesive pressure, peak Yε_c at d̂_p."""
    if yeps == 0.0 or d >= da:
        return 0.0
    a2 = yeps / (2.0 * (dp - da))
    a1 = a2 * (1.0 - da / dp)
    b2 = -2.0 * a2 * da
    return 2.0 * a1 * d if d < dp else 2.0 * a2 * d + b2


def balance_gap(kappa, young, eps_c, dhat, dp=None, da=None):
    dp = dhat if dp is None else dp
    da = 2.0 * dhat if da is None else da
    yeps = young * eps_c
    if yeps == 0.0:
        return dhat                       # no adhesion: the barrier's force vanishes from d̂ on
    f = lambda d: kappa * barrier_d1(d, dhat) + adhesion_d1(d, yeps, dp, da)
    lo, hi = 1e-12 * dhat, min(dhat, dp) # f(lo) < 0 (barrier ~ −d̂/d), f(hi) = a'(hi) > 0
    assert f(lo) < 0.0 < f(hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) < 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


if __name__ == "__main__":
    a = [float(v) for v in sys.argv[1:]]
    print(f"{balance_gap(*a):.15g}")
