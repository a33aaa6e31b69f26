#!/usr/bin/env bash
# Cost of lcp_pgs's Delassus operator against the contact count (issue 16): a plate of n x n cells
# resting on a half-space (every bottom vertex a contact, one group: W dense), 3 steps of 10 ms, one
# thread; prints per n the contacts, W's blocks and the median over the steps of the model's phases
# (contacts, Delassus operator, PGS) and of the core's factorization, in ms.
# Usage: bench/lcp_delassus.sh [N...]   (default 5 10 15 20 25 30); CT_BUILD selects the build (build/)
set -eu
cd "$(dirname "$0")/.."
. experiments/common.sh  # CL, PY, thread environment
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
sizes=${*:-5 10 15 20 25 30}
for n in $sizes; do
    "$CL" run bench/lcp_plate.json --quiet --threads 1 -o "$out/p$n.h5" --set "bodies.0.mesh.cells=[$n,1,$n]"
done
"$PY" - "$out" $sizes <<'PY'
import os, sys
import numpy as np
sys.path.insert(0, "python")
from contactlab import runs
out, sizes = sys.argv[1], sys.argv[2:]
print(f"{'n':>4} {'contacts':>9} {'W blocks':>10} {'W MB':>7} {'contacts ms':>12} {'Delassus ms':>12} "
      f"{'PGS ms':>9} {'PGS sweeps':>10} {'factor ms':>10} {'step ms':>9}")
for n in sizes:
    r = runs.load(os.path.join(out, f"p{n}.h5"))
    m, st = r.model, r.steps
    med = lambda a: 1e3 * float(np.median(a))  # noqa: E731
    print(f"{n:>4} {int(m['lcp_contacts'][-1]):>9} {int(m['w_blocks'][-1]):>10} "
          f"{m['w_blocks'][-1] * 9 * 8 / 1e6:7.1f} {med(m['t_contacts']):12.2f} {med(m['t_delassus']):12.2f} "
          f"{med(m['t_pgs']):9.2f} {np.median(m['pgs_iters']):10.0f} {med(st['t_factor']):10.2f} "
          f"{med(st['wall_s']):9.1f}")
PY
