#!/usr/bin/python3
"""scripts/plot_training.py on a synthetic output directory: training.png alone, with rates.h5 the per-node-type
rate-distribution PNG (one panel per node type, --rates-out; one per group with a RateDistribution group_by), and a
malformed rates.h5 refused."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "plot_training.py")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def write_metrics(out_dir):
    with open(os.path.join(out_dir, "metrics.csv"), "w") as f:
        f.write("step,loss,TargetFiringRate,rate_hz,grad_norm,samples_per_s,seconds\n")
        for s in range(1, 6):
            f.write(f"{s},{1.0 / s:g},{0.8 / s:g},{4.0 + 0.2 * s:g},{2.0 / s:g},{10 + s},{0.5 * s:g}\n")


def write_rates(path, last_len=None, observed=True, target=True):
    rng = np.random.default_rng(3)
    ids = np.array([100] * 30 + [200] * 17, dtype=np.int64)
    rng.shuffle(ids)
    n = ids.size
    with h5py.File(path, "w") as f:
        f["node_type_id"] = ids
        g = f.create_group("rates_hz")
        g["first"] = rng.gamma(2.0, 3.0, n)
        g["last"] = rng.gamma(2.0, 2.5, n if last_len is None else last_len)
        g.attrs["first_update"] = 1
        g.attrs["last_update"] = 5
        if observed:  # type 100 has an observed distribution, type 200 falls back to /target_hz
            f["observed/100"] = np.sort(rng.gamma(2.0, 2.0, 40))
        if target:
            f["target_hz"] = np.full(n, 5.0)


def run(args):
    r = subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, OMP_NUM_THREADS="1", MPLBACKEND="Agg"))
    return r.returncode, r.stdout + r.stderr


def png_ok(path, min_bytes=5000):
    if not os.path.isfile(path):
        return f"{path} was not written"
    with open(path, "rb") as f:
        head = f.read(8)
    size = os.path.getsize(path)
    if head != PNG_MAGIC:
        return f"{path} is not a PNG (starts {head!r})"
    return None if size >= min_bytes else f"{path} is implausibly small ({size} bytes)"


def case_no_rates(tmp, fails):
    d = os.path.join(tmp, "plain")
    os.makedirs(d)
    write_metrics(d)
    rc, out = run([d])
    if rc != 0:
        return fails.append(f"no rates.h5: exit {rc}: {out}")
    e = png_ok(os.path.join(d, "training.png"))
    if e:
        fails.append(e)
    if os.path.exists(os.path.join(d, "rate_distributions.png")) or "rate_distributions" in out:
        fails.append("no rates.h5: a rate-distribution PNG was written")
    if out.strip().splitlines() != [f"wrote {os.path.join(d, 'training.png')}"]:
        fails.append(f"no rates.h5: unexpected output {out!r}")


def case_rates(tmp, fails, observed, rates_out):
    d = os.path.join(tmp, f"rates_{int(observed)}_{int(rates_out)}")
    os.makedirs(d)
    write_metrics(d)
    write_rates(os.path.join(d, "rates.h5"), observed=observed)
    png = os.path.join(tmp, f"custom_{int(observed)}.png") if rates_out else os.path.join(d, "rate_distributions.png")
    rc, out = run([d] + (["--rates-out", png] if rates_out else []))
    tag = f"rates.h5 (observed={observed}, --rates-out={rates_out})"
    if rc != 0:
        return fails.append(f"{tag}: exit {rc}: {out}")
    for p in (os.path.join(d, "training.png"), png):
        e = png_ok(p)
        if e:
            fails.append(f"{tag}: {e}")
    if f"wrote {os.path.join(d, 'training.png')}" not in out.splitlines():
        fails.append(f"{tag}: training.png not reported: {out!r}")
    m = re.search(r"^wrote (.+) \((\d+) node-type panels\)$", out, re.M)
    if not m or m.group(1) != png or int(m.group(2)) != 2:
        fails.append(f"{tag}: expected 'wrote {png} (2 node-type panels)', got {out!r}")
    if rates_out and os.path.exists(os.path.join(d, "rate_distributions.png")):
        fails.append(f"{tag}: the default PNG was written despite --rates-out")


def case_group_by(tmp, fails):
    """rates.h5 of a RateDistribution grouped by the node-types column ei: types 100 and 200 form group e,
    type 300 group i; one panel per group."""
    d = os.path.join(tmp, "group_by")
    os.makedirs(d)
    write_metrics(d)
    rng = np.random.default_rng(4)
    ids = np.array([100] * 12 + [200] * 9 + [300] * 7, dtype=np.int64)
    with h5py.File(os.path.join(d, "rates.h5"), "w") as f:
        f["node_type_id"] = ids
        g = f.create_group("rates_hz")
        g["first"], g["last"] = rng.gamma(2.0, 3.0, ids.size), rng.gamma(2.0, 2.5, ids.size)
        g.attrs["first_update"], g.attrs["last_update"] = 1, 5
        obs = f.create_group("observed")
        obs.attrs["group_by"] = "ei"
        for name, types in (("e", [100, 200]), ("i", [300])):
            obs[name] = np.sort(rng.gamma(2.0, 2.0, 30))
            obs[name].attrs["node_type_ids"] = np.array(types, np.uint32)
    rc, out = run([d])
    png = os.path.join(d, "rate_distributions.png")
    if rc != 0:
        return fails.append(f"group_by: exit {rc}: {out}")
    e = png_ok(png)
    if e:
        fails.append(f"group_by: {e}")
    if f"wrote {png} (2 ei panels)" not in out.splitlines():
        fails.append(f"group_by: expected 'wrote {png} (2 ei panels)', got {out!r}")


def case_bad(tmp, fails):
    d = os.path.join(tmp, "bad")
    os.makedirs(d)
    write_metrics(d)
    path = os.path.join(d, "rates.h5")
    write_rates(path, last_len=46)
    rc, out = run([d])
    if rc == 0 or "/rates_hz/last" not in out or path not in out:
        fails.append(f"wrong-length /rates_hz/last: exit {rc}, output {out!r}")
    with h5py.File(path, "a") as f:
        del f["rates_hz/last"]
    rc, out = run([d])
    if rc == 0 or "missing dataset /rates_hz/last" not in out:
        fails.append(f"missing /rates_hz/last: exit {rc}, output {out!r}")


def main():
    tmp = tempfile.mkdtemp(prefix="dpointnet_plot_")
    cases = [lambda f: case_no_rates(tmp, f), lambda f: case_rates(tmp, f, True, False),
             lambda f: case_rates(tmp, f, False, True), lambda f: case_group_by(tmp, f), lambda f: case_bad(tmp, f)]
    passed = failed = 0
    try:
        for c in cases:
            fails = []
            c(fails)
            for e in fails:
                print("FAIL: " + e)
            passed, failed = passed + (not fails), failed + bool(fails)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
