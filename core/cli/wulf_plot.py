"""Draws the error curves of wulf result records into one image: `wulf plot` runs it.

  wulf plot REC.json... --out F.png [--x time|iterations|np] [--log-time] [--error test|train|test-count]
                        [--labels L...] [--title T] [--xlim LO:HI] [--ylim LO:HI] [--log-error] [--mixed]

One curve per training run, read from the record's `history` (a `--strategy session` record
gives one curve per session of its sweep). `wulf plot` has already checked that every file
is a `wulf train` record and that the records are of one problem (unless --mixed); this
script checks what only the curves can tell (a record without the errors asked for, a
value that is not a number) and exits with 2 and a message naming the file, never with a
traceback. Without --error it draws the test error, or the training error where a record
has no test set, and says which. Text from a record reaches a message with its control
characters escaped.

With --x np it draws instead the time per iteration against the processors: a point per
`wulf train` record (its iterations after the first) and a line per setting of a `wulf model`
record's grid (b, overlap's bucket size and allreduce, fsdp's sharding; dashed beyond the
platform file's hosts, where the model extrapolates), one colour per setting, so that a model
and the runs that check it sit side by side.

time_s is simulated seconds for --engine sim and wall seconds for seq and real; the axis
says which. With --log-time, iteration 0 (time 0) cannot be drawn and is left out.
"""
import argparse
import json
import math
import pathlib
import sys
import unicodedata

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


def shown(value):
    """A value from a record (or an option) as a message prints it: control, format and
    line-separating characters escaped (\\x1b, \\u202e), so that no field can move the
    cursor, recolour the terminal or forge a line."""
    out = []
    for ch in str(value):
        if unicodedata.category(ch)[0] == "C" or unicodedata.category(ch) in ("Zl", "Zp"):
            out.append(ascii(ch)[1:-1])
        else:
            out.append(ch)
    return "".join(out)


def in_label(value):
    """A record's field as text in the image: matplotlib reads $...$ as mathematics, which a
    field's text must not start (a lone "$\\x" stops the drawing)."""
    return shown(value).replace("$", r"\$")


def limits(text, option, log, log_option):
    """LO:HI of an axis, either empty: finite numbers, LO below HI, and positive on a
    logarithmic axis."""
    usage = f"{option}: '{shown(text)}' is not LO:HI (e.g. 0:1500, or 100: for no upper limit)"
    parts = text.split(":")
    if len(parts) != 2:
        raise PlotError(usage)
    try:
        lo, hi = (float(v) if v.strip() else None for v in parts)
    except ValueError:
        raise PlotError(usage)
    for v in (lo, hi):
        if v is not None and not math.isfinite(v):
            raise PlotError(f"{option}: '{shown(text)}': {v} is not a finite number")
        if v is not None and log and v <= 0:
            raise PlotError(f"{option}: '{shown(text)}': {log_option} draws a logarithmic axis, whose limits "
                            "are positive")
    if lo is not None and hi is not None and not lo < hi:
        raise PlotError(f"{option}: '{shown(text)}': LO must be below HI")
    return lo, hi


def number(value):
    """value as a float; None for null; a PlotError's text for anything else (a string, a
    list, true) as the caller names it. An integer too large for a float is infinite."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{shown(json.dumps(value)[:40])}, not a number"
    try:
        return float(value)
    except OverflowError:
        return math.inf


def default_label(config, mixed):
    """engine, p, b, strategy and platform: the settings a figure of seed 000 compares."""
    engine = config.get("engine", "?")
    parts = [in_label(engine) if engine != "seq" else "sequential"]
    if engine != "seq":
        parts.append(f"p={in_label(config.get('np'))}")
    parts.append(f"b={in_label(config.get('block'))}")
    strategy = config.get("strategy")
    if strategy == "average":
        parts.append(f"average a={in_label(config.get('average_interval'))}")
    elif strategy not in (None, "block", "sequential", "session"):
        parts.append(in_label(strategy))
    platform = config.get("platform")
    if platform:
        parts.append(in_label(pathlib.Path(str(platform)).stem))
    label = " ".join(parts)
    if mixed:
        label = f"{in_label(config.get('problem'))} ({in_label(config.get('error_metric'))}): {label}"
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


def as_list(value, where, what):
    if value is None:
        return []
    if not isinstance(value, list):
        raise PlotError(f"{where}: its {what} is {shown(type(value).__name__)}, not a list")
    return value


def curves_of(path, record, mixed):
    """[(label, ranks or None, history, where)] of one record."""
    config = record["config"]
    if config.get("strategy") == "session":
        # Each session trains alone on one rank: its settings tell the curves apart.
        base = "session" + (f" {in_label(pathlib.Path(str(config['platform'])).stem)}" if config.get("platform") else "")
        if mixed:
            base = f"{in_label(config.get('problem'))} ({in_label(config.get('error_metric'))}): {base}"
        out = []
        for i, s in enumerate(as_list(record.get("sessions"), path, "sessions")):
            if not isinstance(s, dict):
                raise PlotError(f"{path}: sessions[{i}] is not an object")
            settings = []
            for key in ("eta", "alpha", "block", "seed"):
                v = number(s.get(key))
                settings.append(f"{key if key != 'block' else 'b'}={v:g}" if isinstance(v, float) else
                                f"{key if key != 'block' else 'b'}={in_label(s.get(key))}")
            where = f"{path} (session {shown(s.get('index', i))})"
            out.append((f"{base} {' '.join(settings)}", None, as_list(s.get("history"), where, "history"), where))
        if not out:
            raise PlotError(f"{path}: a session record without sessions")
        return out
    return [(default_label(config, mixed), config.get("np", 1), as_list(record.get("history"), path, "history"), path)]


def points(history, key, x_key, log_time, where):
    """The (x, y) of every entry of history where both are finite numbers (null: not
    measured, as in iteration 0, is left out). An entry that is not an object, or a value that
    is no number, is a PlotError naming where and the entry."""
    xs, ys = [], []
    for i, h in enumerate(history):
        if not isinstance(h, dict):
            raise PlotError(f"{where}: history[{i}] is not an object")
        x, y = number(h.get(x_key)), number(h.get(key))
        for k, v in ((x_key, x), (key, y)):
            if isinstance(v, str):
                raise PlotError(f"{where}: history[{i}].{k} is {v}")
        if x is None or y is None or not math.isfinite(x) or not math.isfinite(y):
            continue
        if log_time and x <= 0:
            continue
        xs.append(x)
        ys.append(y)
    return xs, ys


def missing_reason(where, config, error):
    problem = shown(config.get("problem"))
    if config.get("numerics") is False:
        return f"{where}: it was run with --numerics off, so its history holds times but no errors"
    if error in ("test", "test-count") and not config.get("test_patterns"):
        return f"{where}: problem {problem} has no test set; draw its training error (--error train)"
    if error == "test-count":
        return (f"{where}: no counts of wrong test patterns in its history (problem {problem} is "
                "not a classifier, or a session record); draw --error test")
    return f"{where}: no {ERRORS[error][1]} in its history"


def chosen_error(runs, x_key, log_time, out):
    """Without --error: the test error where every curve has one; else, where each curve has
    its training error, the training error of all (one kind of error on one axis), saying
    which records have no test set."""
    key = ERRORS["test"][0]
    lacking = [(where, config) for config, _, _, history, where in runs if not points(history, key, x_key, log_time, where)[0]]
    if not lacking:
        return "test"
    if all(points(history, ERRORS["train"][0], x_key, log_time, where)[0] for _, _, _, history, where in runs):
        for where, config in lacking:
            print(f"wulf plot: {where} has no test error (problem {shown(config.get('problem'))}): drawing the "
                  "training error", file=out)
        return "train"
    return "test"


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
        sizes = {in_label(c.get("test_patterns")) for c in configs}
        return f"{word} (of {sizes.pop()})" if len(sizes) == 1 else word
    metrics = {in_label(c.get("error_metric")) for c in configs}
    if len(metrics) != 1:
        return word
    metric = metrics.pop()
    return f"{word} ({'fraction wrong' if metric == 'class' else metric})"


def setting_label(strategy, values):
    """overlap's bucket size and allreduce, or fsdp's sharding and algorithm, as a label says them."""
    if strategy == "overlap":
        size = values.get("bucket_bytes")
        bucket = "" if size is None else "tensor" if size == 0 else f"{size / 2**20:g} MiB"
        return " ".join(in_label(v) for v in (bucket, values.get("bucket_allreduce")) if v)
    if strategy == "fsdp":
        return " ".join(in_label(v) for v in (values.get("sharding"), values.get("shard-algorithm",
                                                                                  values.get("shard_algorithm"))) if v)
    return ""


def per_iteration(record, where):
    """A wulf train record's time per iteration: the mean over the iterations after the first
    (the first may start the pipeline), or the one iteration's."""
    history = [h for h in as_list(record.get("history"), where, "history") if isinstance(h, dict)]
    times = [(number(h.get("iteration")), number(h.get("time_s"))) for h in history]
    times = [(i, t) for i, t in times if isinstance(i, float) and isinstance(t, float) and math.isfinite(t)]
    times = [(i, t) for i, t in times if i >= 1]
    if not times:
        raise PlotError(f"{where}: no iteration's time_s in its history")
    if len(times) == 1:
        return times[0][1]
    (i1, t1), (i2, t2) = times[0], times[-1]
    return (t2 - t1) / (i2 - i1)


def scaling_series(path, record):
    """[(label, kind, [(p, seconds per iteration)])]: a wulf train record's point (kind
    "sim", "real" or "seq"), a wulf model record's lines, one per setting of its grid."""
    config = record["config"]
    platform = pathlib.Path(str(config.get("platform", ""))).stem
    if config.get("command") == "train":
        p = number(config.get("np", 1))
        strategy = config.get("strategy", "block")
        values = dict(config, bucket_bytes=config.get("bucket_bytes"))
        share = number(config.get("block"))
        parts = [in_label(strategy), f"b={share:g}" if isinstance(share, float) else "",
                 setting_label(strategy, values), in_label(platform)]
        return [(" ".join(x for x in parts if x), in_label(config.get("engine", "?")), [(p, per_iteration(record, path))])]
    strategy = config.get("strategy", "overlap")
    series = {}
    for i, cell in enumerate(as_list(record.get("grid"), path, "grid")):
        if not isinstance(cell, dict):
            raise PlotError(f"{path}: grid[{i}] is not an object")
        p, b, t = (number(cell.get(k)) for k in ("p", "b", "time_s"))
        for k, v in (("p", p), ("b", b), ("time_s", t)):
            if not isinstance(v, float):
                raise PlotError(f"{path}: grid[{i}].{k} is {v}")
        parts = [in_label(strategy), f"b={b:g}", setting_label(strategy, dict(config, **cell)),
                 in_label(platform)]
        kind = "model, extrapolated" if cell.get("extrapolated") is True else "model"
        series.setdefault((" ".join(x for x in parts if x), kind), []).append((p, t))
    return [(label, kind, sorted(points)) for (label, kind), points in series.items()]


def draw_scaling(a, records):
    """--x np: the time per iteration against the processors, the models' lines and the
    runs' points in one colour per setting."""
    series = []
    for path, record in records:
        series += scaling_series(path, record)
    colours, fig = {}, plt.figure(figsize=(8, 5))
    ax = fig.add_subplot()
    merged = {}
    for label, kind, points in series:
        merged.setdefault((label, kind), []).extend(points)
    for (label, kind), points in merged.items():
        points.sort()
        colour = colours.setdefault(label, f"C{len(colours) % 10}")
        if kind == "model, extrapolated":  # beyond the platform file's hosts: dashed, from its last cell
            within = merged.get((label, "model"), [])
            points = ([max(within)] if within else []) + points
        xs, ys = [x for x, _ in points], [y for _, y in points]
        if kind.startswith("model"):
            ax.plot(xs, ys, color=colour, linewidth=1.4, linestyle="--" if kind != "model" else "-",
                    label=f"{kind}: {label}")
        else:
            ax.plot(xs, ys, color=colour, linestyle="none", marker="o", label=f"{kind}: {label}")
    if a.log_time:
        ax.set_xscale("log", base=2)
    if a.log_error:
        ax.set_yscale("log")
    ax.set_xlabel("processors p")
    ax.set_ylabel("time per iteration (s; simulated or modelled on the platform)")
    problems = sorted({in_label(r["config"].get("problem")) for _, r in records})
    ax.set_title(a.title if a.title is not None else ", ".join(problems))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wulf plot: {len(merged)} series of time per iteration against p -> {a.out}")
    return 0


def main(argv):
    ap = argparse.ArgumentParser(prog="wulf plot", description=__doc__.split("\n\n")[0])
    ap.add_argument("records", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--x", choices=["time", "iterations", "np"], default="time")
    ap.add_argument("--log-time", action="store_true")
    ap.add_argument("--log-error", action="store_true")
    ap.add_argument("--error", choices=sorted(ERRORS))  # none: test, or train where a record has no test set
    ap.add_argument("--labels", nargs="+")
    ap.add_argument("--label", action="append", help="one label (wulf plot's form: --label=TEXT per curve)")
    ap.add_argument("--title")
    ap.add_argument("--xlim")
    ap.add_argument("--ylim")
    ap.add_argument("--mixed", action="store_true")
    a = ap.parse_args(argv)
    if a.label is not None:
        a.labels = (a.labels or []) + a.label

    # The limits first: a wrong option is named before any record is read.
    xlim = limits(a.xlim, "--xlim", a.log_time, "--log-time") if a.xlim else None
    ylim = limits(a.ylim, "--ylim", a.log_error, "--log-error") if a.ylim else None
    if a.x == "np":
        records = []
        for path in a.records:
            record = read_record(path)
            if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
                raise PlotError(f"{path}: not a wulf result record (JSON without config)")
            records.append((path, record))
        return draw_scaling(a, records)
    x_key = "time_s" if a.x == "time" else "iteration"
    configs, engines, runs = [], [], []
    for path in a.records:
        record = read_record(path)
        if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
            raise PlotError(f"{path}: not a wulf result record (JSON without config)")
        config = record["config"]
        configs.append(config)
        engines.append(config.get("engine"))
        for label, p, history, where in curves_of(path, record, a.mixed):
            runs.append((config, label, p, history, where))
    error = a.error or chosen_error(runs, x_key, a.log_time, sys.stdout)
    key = ERRORS[error][0]
    curves = []
    for config, label, p, history, where in runs:
        xs, ys = points(history, key, x_key, a.log_time, where)
        if not xs:
            raise PlotError(missing_reason(where, config, error))
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
    if xlim:
        ax.set_xlim(*xlim)
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_xlabel(axis_label_time(engines, a.x))
    ax.set_ylabel(axis_label_error(configs, error))
    problems = sorted({in_label(c.get("problem")) for c in configs})
    ax.set_title(a.title if a.title is not None else ", ".join(problems))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=120)
    print(f"wulf plot: {len(curves)} curve{'s' if len(curves) != 1 else ''} of {ERRORS[error][1]} -> {a.out}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except PlotError as e:
        print(f"wulf plot: error: {e}", file=sys.stderr)
        sys.exit(2)
    except (OSError, ValueError, KeyError) as e:
        print(f"wulf plot: error: {shown(e)}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as e:  # a fault of this script or of matplotlib: one line, no traceback
        print(f"wulf plot: internal error: {type(e).__name__}: {shown(e)}", file=sys.stderr)
        sys.exit(1)
