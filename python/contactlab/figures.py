"""figures.py — matplotlib for the analyses: the Agg backend (files only) and one way to save.

    plt = figures.pyplot()          # None (after saying so) if matplotlib is missing
    if plt:
        fig, ax = plt.subplots()
        ...
        figures.save(fig, outdir, "slope_2d.png")
"""
import os


def pyplot():
    """matplotlib.pyplot on the Agg backend, or None after printing that matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot")
        return None
    return plt


def save(fig, outdir, name, dpi=120, rect=None):
    """Lay fig out tightly (within rect, figure coordinates, if given), write outdir/name, print
    "wrote PATH", close the figure; returns the path."""
    import matplotlib.pyplot as plt

    fig.tight_layout(rect=rect)
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    print("wrote", path)
    return path
