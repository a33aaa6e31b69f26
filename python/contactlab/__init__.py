"""contactlab — the Python side of the testbed: reading run files and the shared pieces of the
experiments' analyses (DESIGN §1: "a small reader of run files shared by plots, sweeps,
experiments").

    runs     one run file (HDF5, DESIGN §6) as numpy arrays, root attributes, the parsed scene
    claims   checking a README's claims, printed uniformly; exit status 1 if one fails
    cli      the argparse parser every analysis starts from (OUTDIR, --no-plot, ...)
    figures  matplotlib with the Agg backend and a save helper
    physics  the laws the analyses evaluate independently of the C code (barrier, adhesion,
             quadrature weights, best-fit rotation, bisection)
    params   the model's parameters as the run used them ("auto" ones as the numbers resolved)

Nothing to install: a script inserts this folder's parent (the repository's python/) into
sys.path relative to its own file, e.g. from experiments/<name>/analyze.py

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    from contactlab import claims, cli, figures, runs

Needs Debian's python3 with python3-h5py, python3-numpy and (for figures) python3-matplotlib.
"""
