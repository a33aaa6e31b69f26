# Sourced by experiments/<name>/run.sh from the repository root: the CLI to run, the environment
# of the single-threaded runs (no spinning OpenMP threads, one BLAS thread), and the python with
# h5py, numpy and matplotlib (Debian's, when a different python3 comes first on PATH).
CL=${CT_BUILD:-build}/contactlab
export OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
