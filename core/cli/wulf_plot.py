"""Draws the error curves of wulf result records into one image: `wulf plot` runs it.

  wulf plot REC.json... --out F.png [--x time|iterations] [--log-time] [--error test|train|test-count]
                        [--labels L...] [--title T] [--xlim LO:HI] [--ylim LO:HI] [--log-error] [--mixed]

One curve per training run, read from the record's `history` (a `--strategy session` record
gives one curve per session of its sweep). `wulf plot` has already checked that every file
is a `wulf train` record and that the records are of one problem (unless --mixed); this
script checks what only the curves can tell (a record without the errors asked for) and
exits with 2 and a message naming the file when one is missing.

time_s is simulated seconds for --engine sim and wall seconds for seq and real; the axis
says which. With --log-time, iteration 0 (time 0) cannot be drawn and is left out.
"""
import argparse
import json
import math
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


class PlotError(Exception):
    pass


# What --error draws: the history key, and a word for the axis.
ERRORS = {
    "test": ("test_error", "test error"),
    "train": ("train_error", "training error"),
    "test-count": ("test_class_errors", "test errors"),
}


def limits(text, option):
    try:
        lo, hi = (float(v) if v else None for v in text.split(":"))
    except ValueError:
        raise PlotError(f"{option}: '{text}' is not LO:HI (e.g. 0:1500, or 100: for no upper limit)")
    return lo, hi


def default_label(config, mixed):
    """engine, p, b, strategy and platform: the settings a figure of seed 000 compares."""
    engine = config.get("engine", "?")
    parts = [engine if engine != "seq" else "sequential"]
    if engine != "seq":
        parts.append(f"p={config.get('np')}")
    parts.append(f"b={config.get('block')}")
    strategy = config.get("strategy")
    if strategy == "average":
        parts.append(f"average a={config.get('average_interval')}")
    elif strategy not in (None, "block", "sequential", "session"):
        parts.append(str(strategy))
    platform = config.get("platform")
    if platform:
        parts.append(pathlib.Path(platform).stem)
    label = " ".join(parts)
    if mixed:
        label = f"{config.get('problem')} ({config.get('error_metric')}): {label}"
    return label


def read_record(path):
    """The record at path; a file that is no JSON text wulf could have written is a PlotError
    naming it. `wulf plot` has checked every file already, but this script may be run on its
    own, or a file may change in between: deep nesting (200 000 '[') would otherwise end in
    Python's RecursionError, and bytes that are not UTF-8 in a message without the file."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except RecursionError:
        raise PlotError(f"{path}: nested too deep to be a wulf record")
    except UnicodeDecodeError as e:
        raise PlotError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})")
    except json.JSONDecodeError as e:
        raise PlotError(f"{path}: not a JSON record: {e}")


def curves_of(path, record, mixed):
    """[(label, ranks or None, history, where)] of one record."""
    config = record["config"]
    if config.get("strategy") == "session":
        # Each session trains alone on one rank: its settings tell the curves apart.
        base = "session" + (f" {pathlib.Path(config['platform']).stem}" if config.get("platform") else "")
        if mixed:
            base = f"{config.get('problem')} ({config.get('error_metric')}): {base}"
        out = []
        for s in record.get("sessions", []):
            label = f"{base} eta={s['eta']:g} alpha={s['alpha']:g} b={s['block']} seed={s['seed']}"
            out.append((label, None, s.get("history", []), f"{path} (session {s['index']})"))
        if not out:
            raise PlotError(f"{path}: a session record without sessions")
        return out
    return [(default_label(config, mixed), config.get("np", 1), record.get("history", []), path)]


def points(history, key, x_key, log_time):
    xs, ys = [], []
    for h in history:
        y = h.get(key)
        x = h.get(x_key)
        if y is None or x is None or not math.isfinite(y):
            continue
        if log_time and x <= 0:
            continue
        xs.append(x)
        ys.append(y)
    return xs, ys


def missing_reason(where, config, error):
    if config.get("numerics") is False:
        return f"{where}: it was run with --numerics off, so its history holds times but no errors"
    if error in ("test", "test-count") and not config.get("test_patterns"):
        return f"{where}: problem {config.get('problem')} has no test set; draw its training error (--error train)"
    if error == "test-count":
        return (f"{where}: no counts of wrong test patterns in its history (problem {config.get('problem')} is "
                "not a classifier, or a session record); draw --error test")
    return f"{where}: no {ERRORS[error][1]} in its history"


def axis_label_time(engines, x):
    if x == "iterations":
        return "iterations (passes over the training set)"
    kinds = {"simulated" if e == "sim" else "wall" for e in engines}
    if kinds == {"simulated"}:
        return "simulated time (s)"
    if kinds == {"wall"}:
        return "wall time (s)"
    return "time (s): simulated (sim), wall (seq, real)"


def axis_label_error(configs, error):
    word = ERRORS[error][1]
    if error == "test-count":
        sizes = {c.get("test_patterns") for c in configs}
        return f"{word} (of {sizes.pop()})" if len(sizes) == 1 else word
    metrics = {c.get("error_metric") for c in configs}
    if len(metrics) != 1:
        return word
    metric = metrics.pop()
    return f"{word} ({'fraction wrong' if metric == 'class' else metric})"


def main(argv):
    ap = argparse.ArgumentParser(prog="wulf plot", description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--x", choices=["time", "iterations"], default="time")
    ap.add_argument("--log-time", action="store_true")
    ap.add_argument("--log-error", action="store_true")
    ap.add_argument("--error", choices=sorted(ERRORS), default="test")
    ap.add_argument("--labels", nargs="+")
    ap.add_argument("--title")
    ap.add_argument("--xlim")
    ap.add_argument("--ylim")
    ap.add_argument("--mixed", action="store_true")
    a = ap.parse_args(argv)

    key = ERRORS[a.error][0]
    x_key = "time_s" if a.x == "time" else "iteration"
    configs, engines, curves = [], [], []
    for path in a.records:
        record = read_record(path)
        if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
            raise PlotError(f"{path}: not a wulf result record (JSON without config)")
        config = record["config"]
        configs.append(config)
        engines.append(config.get("engine"))
        for label, p, history, where in curves_of(path, record, a.mixed):
            xs, ys = points(history, key, x_key, a.log_time)
            if not xs:
                raise PlotError(missing_reason(where, config, a.error))
            curves.append({"label": label, "p": p, "x": xs, "y": ys, "where": where})

    if a.labels is not None:
        if len(a.labels) != len(curves):
            raise PlotError(f"--labels: {len(a.labels)} labels for {len(curves)} curve{'s' if len(curves) != 1 else ''} "
                            "(one label per curve, in the order of the records; a session record has one per session)")
        for c, label in zip(curves, a.labels):
            c["label"] = label
    else:  # two runs with the same settings (another seed, say) keep their curves apart
        count = {}
        for c in curves:
            count[c["label"]] = count.get(c["label"], 0) + 1
        for c in curves:
            if count[c["label"]] > 1:
                c["label"] += f" [{pathlib.Path(c['where']).name}]"

    fig, ax = plt.subplots(figsize=(8, 5))
    one_cpu = 0
    for c in curves:
        # seed 000: "the reference line for one processor is shown as a solid line"; more
        # one-processor curves (say real beside simulated) stay solid in other shades
        if c["p"] == 1:
            style = dict(color=("black", "dimgrey", "darkgrey")[min(one_cpu, 2)], linewidth=1.8,
                         linestyle=("-", ":", "-.")[min(one_cpu, 2)])
            one_cpu += 1
        else:
            style = dict(linewidth=1.2, linestyle="--")
        ax.plot(c["x"], c["y"], label=c["label"], **style)
    if a.log_time:
        ax.set_xscale("log")
    if a.log_error:
        ax.set_yscale("log")
    if a.xlim:
        ax.set_xlim(*limits(a.xlim, "--xlim"))
    if a.ylim:
        ax.set_ylim(*limits(a.ylim, "--ylim"))
    ax.set_xlabel(axis_label_time(engines, a.x))
    ax.set_ylabel(axis_label_error(configs, a.error))
    problems = sorted({c.get("problem") for c in configs})
    ax.set_title(a.title if a.title is not None else ", ".join(problems))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wulf plot: {len(curves)} curve{'s' if len(curves) != 1 else ''} -> {a.out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except PlotError as e:
        print(f"wulf plot: error: {e}", file=sys.stderr)
        sys.exit(2)
    except (OSError, ValueError, KeyError) as e:
        print(f"wulf plot: error: {e}", file=sys.stderr)
        sys.exit(2)
