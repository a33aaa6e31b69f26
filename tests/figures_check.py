#!/usr/bin/env python3
"""figures_check.py — python/contactlab/figures.py: symbols written as plain text become mathtext
(hats, subscripts) and every converted label renders; names, paths and existing mathtext are kept."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from contactlab import figures  # noqa: E402

CASES = [
    ("min distance / d̂", "min distance / $\\hat{d}$"),
    ("peak at 1.2 d̂_p", "peak at 1.2 $\\hat{d}_{p}$"),
    ("traction / (μ_a·Y·ε_c)", "traction / ($\\mu_{a}$·Y·$\\varepsilon_{c}$)"),
    ("normal traction C_N β² d0", "normal traction $C_{N}$ β² d0"),
    ("f_t(y)", "$f_{t}$(y)"),
    ("k_max = 3", "$k_{\\mathrm{max}}$ = 3"),
    ("beta_mean, η = 3", "beta_mean, η = 3"),            # a dataset name, a lone symbol
    ("/model/rcc_ipc/beta_mean", "/model/rcc_ipc/beta_mean"),
    ("plots/out/x_y.png", "plots/out/x_y.png"),
    ("already $x_1$ and d_p", "already $x_1$ and d_p"),  # mathtext present: untouched
]
fails = 0
for given, want in CASES:
    got = figures.mathtext(given)
    if got != want:
        print(f"FAIL  mathtext({given!r}) = {got!r}, expected {want!r}")
        fails += 1
plt = figures.pyplot()
if plt is None:
    print("FAIL  matplotlib missing")
    sys.exit(1)
fig, ax = plt.subplots()
ax.plot([0, 1], [0, 1], label=CASES[2][0])
ax.set_xlabel(CASES[1][0])
ax.set_title(CASES[3][0])
ax.legend()
with tempfile.TemporaryDirectory() as d:
    path = figures.save(fig, d, "t.png")
    if not os.path.getsize(path) > 1000:
        print("FAIL  the figure did not render")
        fails += 1
print(f"figures_check: {len(CASES)} conversions, {fails} failed")
sys.exit(1 if fails else 0)
