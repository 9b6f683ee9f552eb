"""Plots the DRAM V-curve CSV written by `spyre_bench_dram --csv` to a PNG.

Usage: python tools/bench/dram/plot_vcurve.py vcurve.csv vcurve.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src: str, dst: str) -> None:
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    x = [float(r["read_fraction"]) for r in rows]
    sim = [float(r["sim_gbps"]) for r in rows]
    ibm = [float(r["ibm_model_gbps"]) for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(x, sim, "o-", label="spyre-sim lpddr5 (32 cores, timing-only)")
    ax.plot(x, ibm, "s--", label="IBM fit: (R+W)/150 GB/s + 0.00574 ns x min(R,W)")
    ax.axhline(204.8, color="grey", lw=0.8, ls=":", label="peak 204.8 GB/s")
    ax.set_xlabel("read fraction of DRAM bytes")
    ax.set_ylabel("effective bandwidth (GB/s)")
    ax.set_ylim(0, 220)
    ax.set_title("DRAM bandwidth V-curve")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower center")
    fig.tight_layout()
    fig.savefig(dst, dpi=120)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
