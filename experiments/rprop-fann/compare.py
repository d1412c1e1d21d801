"""wulf's RPROP against FANN 2.2's: a table (stdout) and the test-error curves (rprop-fann.png).

    compare.py FOLDER      # FOLDER/records from run.sh
"""
import csv
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SETS = ["parity8", "two-spiral", "diabetes", "building", "thyroid", "mushroom"]


def wulf_curve(path):
    """(epochs, train mse, test mse) of a wulf record: exact passes after each update."""
    history = json.loads(path.read_text())["history"]
    return ([h["iteration"] for h in history], [h["train_error"] for h in history], [h["test_error"] for h in history])


def fann_curve(path):
    rows = list(csv.DictReader(path.open()))
    return ([int(r["epoch"]) for r in rows], [float(r["train_mse"]) for r in rows], [float(r["test_mse"]) for r in rows])


def parting(path):
    """run.sh's compare_with_fann: first difference, differing weights, other signs, largest difference."""
    lines = path.read_text().rstrip("\n").split("\n")
    field = lambda i: lines[i].split(":", 1)[1].split()  # noqa: E731
    return {"first": lines[0], "differ": set(field(1)), "other_sign": set(field(2)), "largest": float(field(3)[0])}


def why(name, derivative, p):
    if p["first"] == "same":
        return f"{name}, {derivative} derivative: the same weights, to the bit, after every epoch"
    found = "all of them among" if p["differ"] <= p["other_sign"] else f"{len(p['differ'] - p['other_sign'])} not among"
    return (f"{name}, {derivative} derivative: after epoch {p['first']}, {len(p['differ'])} weights differ, "
            f"{found} the {len(p['other_sign'])} whose gradient sign_check.py finds of another sign in FANN")


def main(folder):
    records = pathlib.Path(folder) / "records"
    fig, axes = plt.subplots(1, len(SETS), figsize=(4 * len(SETS), 3.6))
    print("wulf --learning rprop against FANN 2.2 RPROP (iRprop-), same starting weights, N-16-M sigmoid, mse, double.")
    print("1st diff: the first epoch after which the weights differ, wulf given FANN's float parameters, with wulf's")
    print("exact sigmoid derivative and (as FANN) with --sigmoid-derivative fann; max |dw|: after the last epoch.")
    print()
    print(f"{'':<11} {'':>6} {'test mse after the last epoch':^44}  {'best test mse':^21}  {'1st diff':^15}  "
          f"{'max |dw|':^17}")
    print(f"{'set':<11} {'epochs':>6} {'wulf':>10} {'sim np 4':>10} {'as FANN':>10} {'FANN':>10}  {'wulf':>10} "
          f"{'FANN':>10}  {'exact':>7} {'as FANN':>7}  {'exact':>8} {'as FANN':>8}")
    reasons = []
    for ax, name in zip(axes, SETS):
        e_w, _, te_w = wulf_curve(records / f"{name}-wulf.json")
        _, _, te_s = wulf_curve(records / f"{name}-wulf-sim4.json")
        e_ff, _, te_ff = wulf_curve(records / f"{name}-wulf-fann-floats.json")
        e_af, _, te_af = wulf_curve(records / f"{name}-wulf-as-fann.json")
        e_f, _, te_f = fann_curve(records / f"{name}-fann.csv")
        exact = parting(records / f"{name}-first-difference.txt")
        as_fann = parting(records / f"{name}-as-fann.txt")
        reasons += [why(name, "exact", exact), why(name, "FANN's", as_fann)]
        print(f"{name:<11} {e_w[-1]:>6} {te_w[-1]:>10.6f} {te_s[-1]:>10.6f} {te_af[-1]:>10.6f} {te_f[-1]:>10.6f}  "
              f"{min(te_w[1:]):>10.6f} {min(te_f[1:]):>10.6f}  {exact['first']:>7} {as_fann['first']:>7}  "
              f"{exact['largest']:>8.3g} {as_fann['largest']:>8.3g}")
        ax.plot(e_f, te_f, label="FANN 2.2", color="black", linewidth=2.4)
        ax.plot(e_af, te_af, label="wulf as FANN", color="tab:red", linewidth=1.2)
        ax.plot(e_ff, te_ff, label="wulf, FANN's floats", color="tab:orange", linewidth=1, linestyle=":")
        ax.plot(e_w, te_w, label="wulf", color="tab:blue", linewidth=1, linestyle="--")
        ax.set_yscale("log")
        ax.set_title(f"{name} (1st diff: {exact['first']}; as FANN: {as_fann['first']})", fontsize=9)
        ax.set_xlabel("epoch")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("test-set mse")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    out = pathlib.Path(folder) / "rprop-fann.png"
    fig.savefig(out, dpi=110)
    print()
    print("where they part (sign_check.py at the weights both held the epoch before):")
    for line in reasons:
        print("  " + line)
    print()
    print(f"wall time of run.sh: {float((pathlib.Path(folder) / 'wall_s.txt').read_text()):.0f} s")
    print(f"figure: {out.relative_to(pathlib.Path(folder).parent.parent)}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent)
