"""claims.py — the claims of an experiment's README, checked and printed uniformly.

    claims = Claims()
    claims.check(abs(rel) < 0.02, f"mu = 0.49 slides with a = g(sinθ − μcosθ) within 2 % ({rel:+.1e})")
    claims.check(ratio < 0.5, "ipc2020 stalls", measured=f"{ratio:.4f}", expected="< 0.5")
    claims.report(same, "the same count in every setting")   # printed, not a claim
    sys.exit(claims.summary())

Every claim is printed when it is checked, "ok    TEXT" or "FAIL  TEXT" (with "[measured ...;
expected ...]" when given), so it stands next to the numbers printed before it; summary() closes
with one line counting them, repeats the failures, and returns the exit status: 0 if every claim
holds, 1 otherwise (also when no claim was checked at all).
"""


class Claims:
    """The claims checked so far: (holds, text) in order."""

    def __init__(self):
        self.results = []

    def check(self, cond, text, measured=None, expected=None):
        """Record and print one claim; returns whether it holds."""
        holds = bool(cond)
        if measured is not None or expected is not None:
            parts = [f"measured {measured}" if measured is not None else "",
                     f"expected {expected}" if expected is not None else ""]
            text += "  [" + "; ".join(p for p in parts if p) + "]"
        print(("ok    " if holds else "FAIL  ") + text)
        self.results.append((holds, text))
        return holds

    @staticmethod
    def report(cond, text):
        """Print an observation the README reports but does not claim: "ok" or "note", never a failure."""
        print(("ok    " if cond else "note  ") + text)

    @property
    def ok(self):
        """True if every claim checked so far holds."""
        return all(holds for holds, _ in self.results)

    def summary(self):
        """Print the closing count (and the failed claims again); the exit status, 0 or 1."""
        failed = [text for holds, text in self.results if not holds]
        print(f"claims: {len(self.results) - len(failed)} of {len(self.results)} hold"
              + (f", {len(failed)} FAIL:" if failed else ""))
        for text in failed:
            print("FAIL  " + text)
        return 0 if self.results and not failed else 1
