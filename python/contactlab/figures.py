"""figures.py — matplotlib for the analyses: the Agg backend (files only) and one way to save.

    plt = figures.pyplot()          # None (after saying so) if matplotlib is missing
    if plt:
        fig, ax = plt.subplots()
        ...
        figures.save(fig, outdir, "slope_2d.png")

The analyses write symbols as plain text ("d̂_p", "ε_c", "μ_a", "C_N"); save() renders them as
mathtext (a hat, a subscript) through mathtext() below, so every figure's labels, titles and
legends show d̂ₚ as $\\hat{d}_p$ instead of a loose combining accent and an underscore.
"""
import os
import re

_GREEK = {"α": "alpha", "β": "beta", "γ": "gamma", "δ": "delta", "ε": "varepsilon", "ζ": "zeta", "η": "eta",
          "θ": "theta", "κ": "kappa", "λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "ρ": "rho",
          "σ": "sigma", "τ": "tau", "φ": "varphi", "χ": "chi", "ψ": "psi", "ω": "omega", "Γ": "Gamma",
          "Δ": "Delta", "Θ": "Theta", "Λ": "Lambda", "Σ": "Sigma", "Φ": "Phi", "Ψ": "Psi", "Ω": "Omega"}
# one letter (Latin or Greek), an optional combining circumflex, an optional subscript of 1-3
# letters or digits; not inside a word, a path or a file name
_SYMBOL = re.compile("(?<![\\w/.\\\\])([A-Za-z" + "".join(_GREEK) + "])(\u0302)?(?:_([A-Za-z0-9]{1,3}))?(?![\\w/])")


def mathtext(text):
    """text with its hatted and subscripted symbols as matplotlib mathtext: "d̂_p" -> "$\\hat{d}_p$",
    "ε_c" -> "$\\varepsilon_c$", "C_N" -> "$C_N$". A symbol without hat or subscript is left alone, and
    so is text that already holds mathtext ("$")."""
    if "$" in text:
        return text

    def one(m):
        letter, hat, sub = m.group(1), m.group(2), m.group(3)
        if not hat and not sub:
            return m.group(0)
        sym = "\\" + _GREEK[letter] if letter in _GREEK else letter
        if hat:
            sym = "\\hat{" + sym + "}"
        if sub:
            sym += "_{" + (sub if len(sub) == 1 or sub.isdigit() else "\\mathrm{" + sub + "}") + "}"
        return "$" + sym + "$"
    return _SYMBOL.sub(one, text)


def render_symbols(fig):
    """Apply mathtext() to every text of fig (titles, labels, tick labels, legends, annotations)."""
    from matplotlib.text import Text

    for t in fig.findobj(Text):
        s = t.get_text()
        if s:
            u = mathtext(s)
            if u != s:
                t.set_text(u)


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

    render_symbols(fig)
    fig.tight_layout(rect=rect)
    path = os.path.join(outdir, name)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    print("wrote", path)
    return path
