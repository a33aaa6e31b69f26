#!/usr/bin/env python3
"""Balance gap of experiments/cube_wall, computed independently of the C code: the root d of
κ·b'(d) + a'(d) = 0 (barrier pressure −κb' equals adhesive pressure a') by bisection
(contactlab.physics.balance_gap: b(d) = −d̂ (d/d̂ − 1)² ln(d/d̂) on (0, d̂), Fang et al. 2023 eq. 2 per
unit κ; a(d) = Fang et al. 2023 eq. 10 with a₂ = Yε_c / (2(d̂_p − d̂_a)), eq. 12). Prints d (m); d = d̂
when ε_c = 0."""
import argparse
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab.physics import balance_gap  # noqa: E402

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
for name, text in (("kappa", "barrier stiffness κ (Pa)"), ("young", "Young's modulus Y (Pa)"),
                   ("eps_c", "adhesion strength ε_c"), ("dhat", "barrier distance d̂ (m)")):
    p.add_argument(name, type=float, help=text)
p.add_argument("dhat_p", type=float, nargs="?", help="peak distance d̂_p (m; default d̂)")
p.add_argument("dhat_a", type=float, nargs="?", help="activation distance d̂_a (m; default 2 d̂)")
a = p.parse_args()
# Computed before the run, so without its logged numbers: the defaults are ipc_adhesion's rule for
# "auto" d̂_p, d̂_a (cube_wall.json leaves them auto); analyze.py checks the start against the
# balance gap of the numbers the run logged.
dp = a.dhat if a.dhat_p is None else a.dhat_p
da = 2.0 * a.dhat if a.dhat_a is None else a.dhat_a
print(f"{balance_gap(a.kappa, a.young * a.eps_c, a.dhat, dp, da):.15g}")
