"""Peak of allocated bytes on PyTorch's CPU allocator, from the profiler's raw memory records.

torch.profiler with `profile_memory=True` records one event per CPU allocation and free
(`[memory]`, with the pointer, the signed size and a nanosecond timestamp), from c10's
`ProfiledCPUMemoryReporter`. The aggregated views (`key_averages()`, the "Self CPU Mem" columns)
charge each allocation to an op and net short-lived buffers out inside it, so they hide
transients. This module reads the raw records instead (torch 1.13:
`prof.profiler.kineto_results.experimental_event_tree()`, allocation nodes with
`extra_fields.ptr/alloc_size`), sorts them by time and keeps its own running total:

  - an allocation adds its size and remembers (ptr -> size, op that made it);
  - a free subtracts the size remembered for that pointer *in this session*; a free of a block
    that was not allocated inside the session (made before profiling started, or in an earlier
    session) is ignored, so the total is "bytes allocated inside the session and still alive",
    which is what `torch.cuda.max_memory_allocated() - memory_allocated_at_start` measures on a
    GPU when nothing older is freed. (`extra_fields.total_allocated` is not used: c10 keeps that
    counter across sessions, so blocks of an earlier session leak into it.)

The peak and the live blocks at the peak (with the op that allocated each, its ancestors and the
stage the harness was in) are returned, so each row can be explained tensor by tensor.
`self_check()` validates the method on tensors of known size.
"""

import collections
import contextlib

STAGE_PREFIX = "memfit::"  # record_function labels that mark the harness's stages


def _walk(nodes):
    stack = list(reversed(nodes))
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _op_path(node):
    """Names of the enclosing ops/labels of an allocation, outermost first."""
    names = []
    p = node.parent
    while p is not None:
        names.append(p.name)
        p = p.parent
    return list(reversed(names))


class Trace:
    """Allocation timeline of one profiled session."""

    def __init__(self, prof):
        tree = prof.profiler.kineto_results.experimental_event_tree()
        allocs = []
        stages = []
        for order, n in enumerate(_walk(tree)):
            tag = str(n.tag)
            if tag.endswith("Allocation"):
                ef = n.extra_fields
                if str(ef.device.type) != "cpu":
                    continue
                allocs.append((n.start_time_ns, order, ef.ptr, ef.alloc_size, n))
            elif n.name.startswith(STAGE_PREFIX):
                stages.append((n.start_time_ns, n.end_time_ns, n.name[len(STAGE_PREFIX):]))
        allocs.sort(key=lambda a: (a[0], a[1]))
        stages.sort()
        self.stages = stages
        self.events = allocs

    def stage_at(self, t_ns):
        """Innermost stage label whose range holds t_ns."""
        best = ""
        for start, end, name in self.stages:
            if start <= t_ns <= end:
                best = name
        return best

    def analyse(self, after_ns=None):
        """Running total over the session: returns a dict with peak, final, per-stage peaks,
        and the blocks alive at the peak. With `after_ns`, the peak is taken over the events
        after that time only (the total still counts every block allocated in the session:
        the harness excludes the model-building stage's transients this way)."""
        live = {}
        total = 0
        peak = 0
        peak_index = -1
        stage_peaks = collections.OrderedDict()
        stage_peak_index = {}
        ignored_frees = 0
        for i, (t, _, ptr, size, node) in enumerate(self.events):
            if size > 0:
                if ptr in live:  # a pointer reused without a recorded free (not expected)
                    total -= live[ptr][0]
                live[ptr] = (size, i)
                total += size
            else:
                blk = live.pop(ptr, None)
                if blk is None:
                    ignored_frees += 1
                    continue
                total -= blk[0]
            stage = self.stage_at(t)
            if total > stage_peaks.get(stage, -1):
                stage_peaks[stage] = total
                stage_peak_index[stage] = i
            if total > peak and (after_ns is None or t > after_ns):
                peak = total
                peak_index = i
        # Replay to list the blocks alive at the peak and at each stage's own peak.
        snap_at = {peak_index: "__peak__"}
        for st, idx in stage_peak_index.items():
            snap_at.setdefault(idx, st)
        snaps = {}
        alive = {}

        def listing(alive):
            out = []
            for ptr, (size, j) in alive.items():
                t, _, _, _, node = self.events[j]
                out.append({"bytes": size, "stage": self.stage_at(t), "ops": _op_path(node)})
            return out

        last = max(snap_at) if snap_at else -1
        for i, (t, _, ptr, size, node) in enumerate(self.events[:last + 1]):
            if size > 0:
                alive[ptr] = (size, i)
            else:
                alive.pop(ptr, None)
            if i in snap_at:
                snaps[i] = listing(alive)
        blocks = snaps.get(peak_index, [])
        stage_live = {st: snaps[idx] for st, idx in stage_peak_index.items() if idx in snaps}
        peak_stage = self.stage_at(self.events[peak_index][0]) if peak_index >= 0 else ""
        peak_ops = _op_path(self.events[peak_index][4]) if peak_index >= 0 else []
        return {"peak": peak, "final": total, "stage_peaks": dict(stage_peaks),
                "peak_stage": peak_stage, "peak_ops": peak_ops, "live_at_peak": blocks,
                "live_at_stage_peaks": stage_live,
                "ignored_frees": ignored_frees, "events": len(self.events)}

    def total_at(self, t_ns, inclusive=True):
        """Bytes alive (allocated in the session) at time t_ns (events at t_ns included or not)."""
        live = {}
        for t, _, ptr, size, _ in self.events:
            if t > t_ns or (t == t_ns and not inclusive):
                break
            if size > 0:
                live[ptr] = size
            else:
                live.pop(ptr, None)
        return sum(live.values())

    def total_at_stage_start(self, stage):
        """Bytes alive (allocated in the session) when `stage` began."""
        start = next((s for s, _, n in self.stages if n == stage), None)
        return None if start is None else self.total_at(start, inclusive=False)


@contextlib.contextmanager
def profiled():
    """`with profiled() as holder:` ... then `holder.trace` is the Trace of the session."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    class Holder:
        trace = None

    h = Holder()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        yield h
    h.trace = Trace(prof)
    del prof
    torch  # keep the import visible to linters


@contextlib.contextmanager
def stage(name):
    """Marks a stage of the harness in the trace. `torch.profiler.record_function` allocates a
    4-byte handle tensor and a 288-byte block per use (torch 1.13), which would show in the
    totals; the `_new` entry point returns a script object and allocates nothing."""
    import torch
    handle = torch.ops.profiler._record_function_enter_new(STAGE_PREFIX + name, None)
    try:
        yield
    finally:
        torch.ops.profiler._record_function_exit._RecordFunction(handle)


def group_live(blocks, top=25):
    """Live blocks grouped by (stage, innermost interesting op), largest first."""
    groups = collections.Counter()
    counts = collections.Counter()
    for b in blocks:
        ops = [o for o in b["ops"] if not o.startswith(STAGE_PREFIX)]
        # innermost op that is not a generic allocation wrapper
        generic = {"aten::empty", "aten::empty_strided", "aten::empty_like", "aten::zeros",
                   "aten::zeros_like", "aten::resize_", "aten::to", "aten::_to_copy",
                   "aten::clone", "aten::contiguous", "aten::copy_", "aten::new_empty",
                   "aten::new_empty_strided", "aten::new_zeros", "aten::full", "aten::ones",
                   "aten::ones_like", "aten::full_like"}
        inner = [o for o in ops if o not in generic]
        label = " > ".join(ops[-3:]) if not inner else " > ".join(
            ([ops[ops.index(inner[-1]) - 1]] if ops.index(inner[-1]) > 0 else []) + ops[ops.index(inner[-1]):][:3])
        key = (b["stage"], label)
        groups[key] += b["bytes"]
        counts[key] += 1
    out = []
    for (st, label), nbytes in groups.most_common(top):
        out.append({"stage": st, "where": label, "bytes": nbytes, "blocks": counts[(st, label)]})
    return out


def self_check(verbose=True):
    """Checks the method on allocations of known size; returns a list of failures."""
    import torch

    failures = []
    MiB = 1 << 20

    def expect(name, got, want):
        ok = got == want
        if verbose:
            print(f"  {'ok ' if ok else 'BAD'} {name}: {got} (expected {want})")
        if not ok:
            failures.append(f"{name}: {got} != {want}")

    outside = torch.empty(3 * MiB, dtype=torch.uint8)  # allocated before any session
    # 1. a known pattern: 1 MiB, +2 MiB (peak 3), free 1, +0.5 (2.5), free all.
    with profiled() as h:
        with stage("a"):
            a = torch.empty(MiB, dtype=torch.uint8)
            b = torch.empty(2 * MiB, dtype=torch.uint8)
        with stage("b"):
            del a
            c = torch.empty(MiB // 2, dtype=torch.uint8)
            del b, c
        del outside  # a free of a block from before the session: ignored
    r = h.trace.analyse()
    expect("known pattern peak", r["peak"], 3 * MiB)
    expect("known pattern final", r["final"], 0)
    expect("stage a peak", r["stage_peaks"].get("a"), 3 * MiB)
    # a stage's peak is the highest total reached by an event inside it: free a (2 MiB), +c
    expect("stage b peak", r["stage_peaks"].get("b"), int(2.5 * MiB))
    # 2. a short-lived transient inside one op: (x * 2).sum() of 4 MiB float32 -> peak 8 MiB
    #    (x and the product), invisible in the aggregated per-op view.
    with profiled() as h:
        x = torch.ones(MiB)  # 4 MiB
        s = (x * 2).sum()
        del x
    r = h.trace.analyse()
    # while both 4 MiB tensors are alive: the Python scalar 2 wrapped as a 0-dim int64 tensor
    # (8 bytes) and sum()'s float32 result (4 bytes).
    expect("transient product peak", r["peak"], 8 * MiB + 8 + 4)
    # 3. two sessions in one process: a block made in session 1 and kept alive must not be
    #    counted in session 2, and freeing it in session 2 must not lower session 2's total.
    with profiled() as h1:
        kept = torch.empty(5 * MiB, dtype=torch.uint8)
    with profiled() as h2:
        y = torch.empty(MiB, dtype=torch.uint8)
        del kept
        z = torch.empty(2 * MiB, dtype=torch.uint8)
        del y, z
    r1, r2 = h1.trace.analyse(), h2.trace.analyse()
    expect("session 1 peak", r1["peak"], 5 * MiB)
    expect("session 2 peak (session 1's block excluded)", r2["peak"], 3 * MiB)
    expect("session 2 ignored frees", r2["ignored_frees"], 1)
    # 4. autograd: y = (w * x).sum(); backward allocates w.grad (4 MiB) and the product's grad.
    with profiled() as h:
        w = torch.ones(MiB, requires_grad=True)  # 4 MiB
        with stage("fwd"):
            loss = (w * 3.0).sum()  # product 4 MiB, freed after sum (not saved: w*scalar)
        with stage("bwd"):
            loss.backward()
    r = h.trace.analyse()
    expect("autograd: weight + grad alive at end", r["final"] >= 8 * MiB, True)
    del s, w, loss
    return failures
