"""Slope tables of the "s-" rows (issue 31): memfit's error against the measured peak of each
row, as `memfit validate --format json` gives it. Inference: one markdown row per family and
dtype, a column per batch x prompt size. Training: one row per family, a column per setting.

    python3 validation/slope_table.py validation/results/cpu-torch1.13-tf4.48-slopes.csv \\
        --memfit build/memfit
"""

import argparse
import collections
import json
import re
import subprocess

ID = re.compile(r"^s-[a-z0-9]+-(.+)-(\d+)x(\d+)$")


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
    args = parser.parse_args()
    out = subprocess.run([args.memfit, "validate", args.csv, "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    inference = collections.defaultdict(dict)  # "model dtype" -> {"b x t": (MiB, error)}
    training = collections.defaultdict(dict)   # model -> {"setting b x t": (MiB, error)}
    inf_sizes, train_cols = set(), set()
    for row in json.loads(out)["rows"]:
        m = ID.match(row.get("id", ""))
        if not m or not row.get("expressed") or row.get("class") == "load":
            continue
        variant, batch, tokens = m.group(1), int(m.group(2)), int(m.group(3))
        cell = (row["measured_bytes"] / 2**20, row["error"])
        if variant.startswith("inf-"):
            inf_sizes.add((batch, tokens))
            inference[f"{row['model']} {variant[4:]}"][(batch, tokens)] = cell
        else:
            train_cols.add((variant, batch, tokens))
            training[row["model"]][(variant, batch, tokens)] = cell
    sizes = sorted(inf_sizes, key=size_key)
    table("Inference (prefill + 4 decode steps), measured peak and memfit's error, per batch x "
          "prompt:", {k: {f"{b} x {t}": v for (b, t), v in d.items()} for k, d in
                      inference.items()}, [f"{b} x {t}" for b, t in sizes])
    cols = sorted(train_cols, key=lambda c: (c[2], c[1], c[0]))
    table("Training (two steps, peak over both), per setting and batch x sequence:",
          {k: {f"{v} {b} x {t}": c for (v, b, t), c in d.items()} for k, d in training.items()},
          [f"{v} {b} x {t}" for v, b, t in cols])


if __name__ == "__main__":
    main()
