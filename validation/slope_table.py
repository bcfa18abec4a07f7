"""Slope tables of the "s-" rows (issue 31; `--prefix q` or `g` for the QLoRA-style and the
64-step generation rows): memfit's error against the measured peak of each row, as
`memfit validate --format json` gives it. Inference: one markdown row per family and
dtype, a column per batch x prompt size. Training: one row per family, a column per setting.

    python3 validation/slope_table.py validation/results/cpu-torch1.13-tf4.48-slopes.csv \\
        --memfit build/memfit [--plots docs/img/slopes]

With --plots DIR it also draws one SVG per family into DIR (memory against the tokens of a
batch, measured and estimated, per dtype and batch size; training, measured and estimated per
setting) and prints the markdown that shows them. The plots need matplotlib (Debian:
python3-matplotlib, run with /usr/bin/python3); the tables need nothing beyond the standard
library.
"""

import argparse
import collections
import json
import re
import subprocess

def id_pattern(prefix):
    return re.compile(rf"^{prefix}-[a-z0-9]+-(.+)-(\d+)x(\d+)$")


def size_key(size):
    batch, tokens = size
    return (batch, tokens)


def table(title, cells, columns):
    print(f"{title}\n")
    print("| model | " + " | ".join(columns) + " |")
    print("|---|" + "---:|" * len(columns))
    for name, by_col in cells.items():
        row = [f"{by_col[c][0]:.1f} MiB, {by_col[c][1] * 100:+.1f}%" if c in by_col else ""
               for c in columns]
        print(f"| {name} | " + " | ".join(row) + " |")
    print()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--memfit", default="build/memfit")
    parser.add_argument("--plots", help="a folder for one SVG plot per family (matplotlib)")
    parser.add_argument("--prefix", default="s", help="the rows' id prefix (s, q, g)")
    parser.add_argument("--decode", type=int, default=4, help="decode steps, for the title")
    args = parser.parse_args()
    ID = id_pattern(args.prefix)
    out = subprocess.run([args.memfit, "validate", args.csv, "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    inference = collections.defaultdict(dict)  # "model dtype" -> {"b x t": (MiB, error)}
    training = collections.defaultdict(dict)   # model -> {"setting b x t": (MiB, error)}
    inf_sizes, train_cols = set(), set()
    points = []  # (model, variant, batch, tokens, measured MiB, estimated MiB)
    for row in json.loads(out)["rows"]:
        m = ID.match(row.get("id", ""))
        if not m or not row.get("expressed") or row.get("class") == "load":
            continue
        variant, batch, tokens = m.group(1), int(m.group(2)), int(m.group(3))
        cell = (row["measured_bytes"] / 2**20, row["error"])
        points.append((row["model"], variant, batch, tokens, row["measured_bytes"] / 2**20,
                       row["estimate_bytes"] / 2**20))
        if row.get("class") == "inference":
            inf_sizes.add((batch, tokens))
            dtype = variant.split("-")[-1]
            inference[f"{row['model']} {dtype}"][(batch, tokens)] = cell
        else:
            train_cols.add((variant, batch, tokens))
            training[row["model"]][(variant, batch, tokens)] = cell
    sizes = sorted(inf_sizes, key=size_key)
    if inference:
        table(f"Inference (prefill + {args.decode} decode steps), measured peak and memfit's "
              "error, per batch x context:", {k: {f"{b} x {t}": v for (b, t), v in d.items()} for k, d in
                          inference.items()}, [f"{b} x {t}" for b, t in sizes])
    cols = sorted(train_cols, key=lambda c: (c[2], c[1], c[0]))
    if training:
        table("Training (two steps, peak over both), per setting and batch x sequence:",
              {k: {f"{v} {b} x {t}": c for (v, b, t), c in d.items()}
               for k, d in training.items()},
              [f"{v} {b} x {t}" for v, b, t in cols])
    if args.plots:
        plot_families(points, args.plots)


def is_inf(variant):
    """An inference row's variant: "inf-<dtype>" (s-) or "gen64-<dtype>" (g-)."""
    return variant.startswith(("inf-", "gen"))


def slug(model):
    return re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-")


def plot_families(points, folder):
    """One SVG per family: an inference panel per dtype (x: the batch's tokens, batch x prompt;
    a line per batch size, measured as markers, memfit's estimate as a dashed line) and, where
    the family has training rows, a panel of measured and estimated peaks per setting."""
    import os
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "memfit",
                                "font.size": 8})
    os.makedirs(folder, exist_ok=True)
    families = collections.defaultdict(list)
    for p in points:
        families[p[0]].append(p)
    print("Per family: memory against the tokens of a batch (batch x context), measured (circles)\n"
          "and memfit's estimate (crosses, dashed), per dtype and batch size, and the training "
          "settings\n(measured and estimated peaks side by side):\n")
    for model, rows in families.items():
        dtypes = sorted({v.split("-")[-1] for _, v, *_ in rows if is_inf(v)}, reverse=True)
        train = sorted({(v, b, t) for _, v, b, t, *_ in rows if not is_inf(v)},
                       key=lambda c: (c[2], c[1], c[0]))
        panels = len(dtypes) + (1 if train else 0)
        fig, axes = plt.subplots(1, panels, figsize=(3.2 * panels, 2.6), squeeze=False)
        for ax, dtype in zip(axes[0], dtypes):
            top = 0.0
            for batch, colour in ((1, "tab:blue"), (4, "tab:orange"), (2, "tab:green")):
                pts = sorted((b * t, m, e) for _, v, b, t, m, e in rows
                             if is_inf(v) and v.split("-")[-1] == dtype and b == batch)
                if not pts:
                    continue
                xs = [p[0] for p in pts]
                top = max([top] + [max(p[1], p[2]) for p in pts])
                ax.plot(xs, [p[1] for p in pts], "o", color=colour, markerfacecolor="none",
                        markersize=8, label=f"batch {batch} measured")
                ax.plot(xs, [p[2] for p in pts], "x--", color=colour,
                        label=f"batch {batch} memfit")
            ax.set_title(f"inference {dtype}")
            ax.set_xlabel("batch x context tokens")
            ax.set_ylabel("peak MiB")
            ax.set_ylim(0, top * 1.2)  # room above the highest point, whose marker is not cut
            ax.margins(x=0.1)
            ax.legend(fontsize=6, loc="lower right")
        if train:
            ax = axes[0][-1]
            labels = [f"{v}\n{b}x{t}" for v, b, t in train]
            measured = [next(m for _, v2, b2, t2, m, _e in rows if (v2, b2, t2) == c)
                        for c in train]
            estimated = [next(e for _, v2, b2, t2, _m, e in rows if (v2, b2, t2) == c)
                         for c in train]
            xs = range(len(train))
            ax.bar([x - 0.2 for x in xs], measured, 0.4, label="measured")
            ax.bar([x + 0.2 for x in xs], estimated, 0.4, label="memfit")
            ax.set_xticks(list(xs), labels, fontsize=5)
            ax.set_title("training (two steps)")
            ax.set_ylabel("peak MiB")
            ax.legend(fontsize=6)
        fig.suptitle(model, fontsize=9)
        fig.tight_layout()
        path = os.path.join(folder, slug(model) + ".svg")
        fig.savefig(path, metadata={"Date": None})
        plt.close(fig)
        print(f"![{model}: measured and estimated peaks]({os.path.relpath(path, 'docs')})\n")


if __name__ == "__main__":
    main()
