#!/usr/bin/env python3
"""Estimate vs CPU measurement, row by row, with the memfit command that matches each row.

`memfit validate FILE.csv` reads the same rows but cannot express every setting of the CPU
matrix (AdamW foreach, pure bf16 training, the LoRA base dtype); this script runs
`memfit inference|train --format json` with the exact flags instead and prints a markdown table
(estimate, measurement, error) plus memfit's per-stage figures next to the measured stage peaks
from the traces written by `measure.py --traces`.

    python3 validation/compare_cpu.py validation/results/cpu-torch1.13-tf4.48.csv \\
        --memfit build/memfit --traces validation/results/cpu-traces > /tmp/table.md
"""

import argparse
import csv
import json
import os
import subprocess
import sys

MiB = 2 ** 20


def settings_of(text):
    out = {}
    for kv in text.split(";"):
        if "=" in kv:
            k, v = kv.split("=", 1)
            out[k] = v
    return out


def memfit_command(memfit, models, row):
    s = settings_of(row["settings"])
    config = os.path.join(models, row["model"].replace("/", "__"), "config.json")
    if row["task"] == "inference":
        cmd = [memfit, "inference", config, "--context", s["context"], "--batch", s["batch"],
               "--dtype", s["dtype"], "--attn", s.get("attn", "eager"), "--cuda-context", "0"]
    else:
        cmd = [memfit, "train", config, "--method", s["method"], "--precision", s["precision"],
               "--batch", s["batch"], "--seq", s["seq"], "--attn", s.get("attn", "eager"),
               "--checkpointing", s.get("checkpointing", "none"), "--cuda-context", "0"]
        if s.get("foreach") != "true":
            cmd.append("--no-foreach")
        if s["method"] == "lora":
            cmd += ["--lora-rank", s["rank"], "--lora-alpha", s["alpha"]]
    return cmd + ["--format", "json"]


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip().splitlines()[-1:]
    return json.loads(p.stdout), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+", help="one or more CSVs (a row id seen twice: first wins)")
    ap.add_argument("--memfit", default="build/memfit")
    ap.add_argument("--models", default="", help="default: the CSV's folder/models")
    ap.add_argument("--traces", default="")
    ap.add_argument("--format", choices=("markdown", "json"), default="markdown")
    args = ap.parse_args()
    models = args.models or os.path.join(os.path.dirname(os.path.abspath(args.csv[0])), "models")
    by_id = {}
    for path in args.csv:
        seen_here = {}
        for r in csv.DictReader(open(path)):
            if r["id"] in by_id and r["id"] not in seen_here:
                continue  # measured in an earlier file
            seen_here[r["id"]] = True
            by_id.setdefault(r["id"], {})[r["measure"]] = r
    results = []
    for sid, measures in by_id.items():
        r = measures["max_memory_allocated"]
        measured = float(r["value"]) * MiB
        loaded = float(measures["memory_after_load"]["value"]) * MiB
        cmd = memfit_command(args.memfit, models, r)
        est, err = run_json(cmd)
        res = {"id": sid, "model": r["model"], "task": r["task"], "settings": r["settings"],
               "measured": measured, "loaded": loaded, "command": " ".join(cmd[1:-2])}
        if est is None:
            res["error_text"] = " ".join(err or [])
        else:
            total = est["total_bytes"]
            res["estimate"] = total
            res["error"] = (total - measured) / measured
            res["weights_est"] = (est.get("per_gpu", {}).get("weights"))
            if r["task"] == "train":
                res["stages_est"] = {st["stage"]: st["bytes"] for st in est.get("stages", [])}
                res["peak_stage_est"] = est.get("peak_stage")
                res["components_est"] = est.get("per_gpu")
            else:
                res["components_est"] = est.get("per_gpu")
                if settings_of(r["settings"]).get("decode"):
                    alt, _ = run_json(cmd[:-2] + ["--all-logits", "--format", "json"])
                    if alt:
                        res["estimate_all_logits"] = alt["total_bytes"]
        if args.traces:
            path = os.path.join(args.traces, sid + ".json")
            if os.path.exists(path):
                t = json.load(open(path))
                res["stage_peaks"] = t.get("stage_peaks")
                res["peak_stage"] = t.get("peak_stage")
        results.append(res)
    if args.format == "json":
        json.dump(results, sys.stdout, indent=1)
        return 0
    tol = {"inference": 0.03, "train": 0.05}
    print("| id | model | settings | measured MiB | memfit MiB | error | tol | peak (measured / memfit) |")
    print("|---|---|---|---:|---:|---:|---:|---|")
    for res in results:
        s = res["settings"].replace(";device=cpu", "").replace(";", " ")
        if "estimate" not in res:
            print(f"| {res['id']} | {res['model']} | {s} | {res['measured'] / MiB:.1f} | - | "
                  f"{res.get('error_text', '')} | | |")
            continue
        flag = "" if abs(res["error"]) <= tol[res["task"]] else " **off**"
        print(f"| {res['id']} | {res['model']} | {s} | {res['measured'] / MiB:.1f} | "
              f"{res['estimate'] / MiB:.1f} | {res['error'] * 100:+.1f}%{flag} | "
              f"{tol[res['task']] * 100:.0f}% | {res.get('peak_stage', '')} / "
              f"{res.get('peak_stage_est', res.get('components_est', {}) and 'prefill')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
