#!/usr/bin/env python3
"""Markdown tables of a `make bench` CSV (bench/results/<host>.csv), as bench/README.md shows them.

    python3 bench/table.py bench/results/vm.csv
"""
import csv
import sys


def fnum(v, d=1):
    return f"{float(v):.{d}f}"


def inum(v):
    return f"{int(float(v)):,}".replace(",", " ")


def main(path):
    rows = list(csv.DictReader(open(path)))
    el = [r for r in rows if r["scene"] == "box_compress"]
    co = [r for r in rows if r["scene"].startswith("contact_slabs") and int(r["steps"]) == 3]
    adh = [r for r in rows if r["scene"].startswith("contact_slabs") and int(r["steps"]) != 3]
    if el:
        print("| cells | threads | dofs | nnz(A) | Newton iters | analyses | assembly | projection | factor | solve "
              "| line search | total | factor+solve |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(el, key=lambda r: (int(r["cells"]), int(r["threads"]))):
            print(f"| {r['cells']}³ | {r['threads']} | {inum(r['dofs'])} | {inum(r['nnz'])} | {r['newton_iters']} "
                  f"| {r['analyses']} | {fnum(r['assembly_ms'])} | {fnum(r['projection_ms'])} | {fnum(r['factor_ms'])} "
                  f"| {fnum(r['solve_ms'])} | {fnum(r['line_search_ms'])} | {fnum(r['total_ms'])} "
                  f"| {100 * float(r['factor_solve_fraction']):.0f} % |")
        print()
    if co:
        print("| n | μ | threads | dofs | iters | candidates | active | assembly | analysis | factor | solve | contact "
              "| ccd | cmap | total | contact share |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(co, key=lambda r: (r["scene"], float(r["mu"]), int(r["cells"]), int(r["threads"]))):
            asm = float(r["assembly_ms"]) + float(r["projection_ms"])
            print(f"| {r['cells']} | {r['mu']} | {r['threads']} | {inum(r['dofs'])} | {r['newton_iters']} "
                  f"| {inum(r['candidates'])} | {inum(r['active_pairs'])} | {asm:.1f} | {fnum(r['analysis_ms'])} "
                  f"| {fnum(r['factor_ms'])} | {fnum(r['solve_ms'])} | {fnum(r['contact_ms'])} | {fnum(r['ccd_ms'])} "
                  f"| {fnum(r['cmap_ms'])} | {fnum(r['total_ms'])} | {100 * float(r['contact_fraction']):.0f} % |")
        print()
        print("| n | threads | swept candidates | max_step (ms) | of which CCD broad phase (ms) | α |")
        print("|---|---|---|---|---|---|")
        for r in sorted(co, key=lambda r: (int(r["cells"]), int(r["threads"]))):
            if float(r["mu"]) != 0.0:
                continue
            print(f"| {r['cells']} | {r['threads']} | {inum(r['ccd_alone_candidates'])} | {fnum(r['ccd_alone_ms'])} "
                  f"| {fnum(r['ccd_alone_bp_ms'])} | {float(r['ccd_alone_alpha']):.4f} |")


    if adh:
        print()
        print("| μ | adhesion | steps | iters | active | assembly | analysis | factor | solve | contact | ccd | cmap "
              "| sum of phases | total (median) | total / iters | contact work / iters |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(adh, key=lambda r: (float(r["mu"]), r["scene"])):
            asm = float(r["assembly_ms"]) + float(r["projection_ms"])
            ph = asm + sum(float(r[k]) for k in ("analysis_ms", "factor_ms", "solve_ms", "line_search_ms", "contact_ms",
                                                 "ccd_ms", "cmap_ms"))
            a = "ε_c = 1e-3, μ_a = 1" if r["scene"].endswith("_adhesion") else "off"
            print(f"| {r['mu']} | {a} | {r['steps']} | {r['newton_iters']} | {inum(r['active_pairs'])} | {asm:.1f} "
                  f"| {fnum(r['analysis_ms'])} | {fnum(r['factor_ms'])} | {fnum(r['solve_ms'])} | {fnum(r['contact_ms'])} "
                  f"| {fnum(r['ccd_ms'])} | {fnum(r['cmap_ms'])} | {ph:.1f} | {fnum(r['total_ms'])} "
                  f"| {fnum(r['mean_total_ms'])} | {fnum(r['mean_contact_work_ms'])} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench/results/vm.csv")
