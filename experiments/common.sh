# Sourced by experiments/<name>/run.sh from the repository root: the CLI to run and the folder of
# the C experiment drivers (both from CT_BUILD, default build/), the environment of the
# single-threaded runs (no spinning OpenMP threads, one BLAS thread), and the python with h5py,
# numpy and matplotlib (Debian's, when a different python3 comes first on PATH). The analyses
# import the package python/contactlab by a path relative to their own file.
CL=${CT_BUILD:-build}/contactlab
DRIVERS=${CT_BUILD:-build}/experiments  # experiments/<name>/<prog>.c is built as $DRIVERS/<name>/<prog>
export OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1
# the experiments own their output folders: a rerun overwrites its runs (contactlab run --force)
export CT_OVERWRITE=1
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
