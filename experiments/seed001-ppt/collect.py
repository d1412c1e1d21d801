#!/usr/bin/python3
"""One CSV row per PPT run of run.sh: the records' configuration, stopping status and
PPT's own account (final.strategy), with the run's wall time on this machine, and from
the history (the exact training-set MSE after every iteration) the rounds at which looser
thresholds would have been crossed (MSE 0.1, 0.05, 0.02, all 256 patterns right).

    collect.py RECORDS_DIR OUT.csv
"""
import csv
import json
import pathlib
import sys

FIELDS = ["p", "local_epoch", "seed", "status", "learned", "rounds", "rounds_per_iteration", "iterations",
          "patterns_per_node", "ppt_time_s", "rounds_s", "allgather_s", "check_s", "checks",
          "comm_share", "record_time_s", "final_train_mse", "final_class_errors",
          "rounds_mse_0.1", "rounds_mse_0.05", "rounds_mse_0.02", "rounds_all_right", "wall_s"]


def first_rounds(history, rounds_per_iteration, test):
    """Rounds (iterations x rounds per iteration) to the first iteration whose exact
    training-set errors pass test; empty if none did."""
    for h in history[1:]:
        if test(h):
            return h["iteration"] * rounds_per_iteration
    return ""


def row(path, walls):
    r = json.loads(path.read_text())
    c, f = r["config"], r["final"]
    s = f["strategy"]
    ppt_time = s["rounds_s"] + s["check_s"]
    train = f["train"]
    return {
        "p": c["np"],
        "local_epoch": int(s["local_epoch"]),
        "seed": c["seed"],
        "status": f["status"],
        "learned": int(f["status"] == "target_reached"),
        "rounds": int(s["rounds"]),
        "rounds_per_iteration": int(s["rounds_per_iteration"]),
        "iterations": f["iterations"],
        "patterns_per_node": int(s["rounds"] * s["local_epoch"]),
        "ppt_time_s": f"{ppt_time:.6f}",
        "rounds_s": f"{s['rounds_s']:.6f}",
        "allgather_s": f"{s['allgather_s']:.6f}",
        "check_s": f"{s['check_s']:.6f}",
        "checks": int(s["checks"]),
        "comm_share": f"{s['allgather_s'] / ppt_time:.5f}",
        "record_time_s": f"{f['time_s']:.6f}",
        "final_train_mse": f"{train['mse']:.6g}",
        "final_class_errors": train["class_errors"],
        "rounds_mse_0.1": first_rounds(r["history"], s["rounds_per_iteration"], lambda h: h["train_error"] <= 0.1),
        "rounds_mse_0.05": first_rounds(r["history"], s["rounds_per_iteration"], lambda h: h["train_error"] <= 0.05),
        "rounds_mse_0.02": first_rounds(r["history"], s["rounds_per_iteration"], lambda h: h["train_error"] <= 0.02),
        "rounds_all_right": first_rounds(r["history"], s["rounds_per_iteration"],
                                         lambda h: h.get("train_class_errors", 1) == 0),
        "wall_s": walls.get(path.stem, ""),
    }


def main():
    records, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    walls = {}
    wall_file = records / "wall.txt"
    if wall_file.exists():
        for line in wall_file.read_text().split("\n"):
            if line.strip():
                name, seconds = line.split()
                walls[name] = f"{float(seconds):.2f}"
    rows = [row(p, walls) for p in records.glob("p*-e*-s*.json")]
    rows.sort(key=lambda x: (x["p"], x["local_epoch"], x["seed"]))
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} runs -> {out}")


if __name__ == "__main__":
    main()
