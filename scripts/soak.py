#!/usr/bin/python3
"""Soak test (docs/reliability.md, "Soak"): a long training run on a small generated network, with a checkpoint
every --every updates, its resident memory sampled from /proc while it runs. Checks, and prints:

* resident memory flat: the process's own high-water mark of resident memory (VmHWM, which no sampling can
  miss) at the end of the run at most 5 % above its value at the middle. Peaks, not samples: glibc returns freed
  heap to the system at times (RSS dips by a checkpoint's buffers and comes back), so a single sample is no
  baseline, and sampled peaks miss short ones (a run judged by them failed with 6.8 % "growth" when the first
  half's largest sample missed the peak that the second half's caught); a leak raises the later peak. The
  sampled peaks of the two halves (after a 10 % warm-up) are printed too;
* every checkpoint complete: each step_K.h5 opens, holds /step = K and a checksum on every dataset;
* the metrics log complete: one row per update, steps 1 .. N in order.

  /usr/bin/python3 scripts/soak.py --bin build/dpointnet [--updates 2000] [--every 50] [--neurons 60]

Under scripts/test-sanitize (DPOINTNET_SANITIZER_BUILD=1 in the environment) the run is 60 updates with a checkpoint
every 10 (LeakSanitizer finds a leak of every update in one update as in a thousand) and the resident-memory figure is printed but not judged: AddressSanitizer holds freed blocks back in its quarantine
(up to 256 MiB), so RSS there is no leak measure; LeakSanitizer checks every allocation at exit instead, and
the regular build's run judges the RSS.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import h5py


def rss_kib(pid):
    """(VmRSS, VmHWM) of a running process in KiB, or None."""
    try:
        rss = hwm = None
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
        return (rss, hwm) if rss is not None and hwm is not None else None
    except OSError:
        pass
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--updates", type=int, default=2000)
    ap.add_argument("--every", type=int, default=50)
    ap.add_argument("--neurons", type=int, default=60)
    a = ap.parse_args()
    sanitized = os.environ.get("DPOINTNET_SANITIZER_BUILD") == "1"
    if sanitized:
        a.updates, a.every = min(a.updates, 60), min(a.every, 10)
    tmp = tempfile.mkdtemp(prefix="dpointnet_soak_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        subprocess.run([a.bin, "generate", "--out", net, "--neurons", str(a.neurons), "--seed", "9"], check=True,
                       capture_output=True)
        c = json.load(open(os.path.join(net, "config.simulation.json")))
        c["network"] = os.path.join(net, c["network"])
        c["run"].update({"tstop": 40.0, "batch_size": 2, "seed": 3})
        c["output"] = {"output_dir": os.path.join(tmp, "out")}
        c["train"] = {"steps": a.updates, "save_checkpoint_every": a.every, "checkpoint_interval": 10,
                      "losses": [{"type": "TargetFiringRate", "cost": 1.0, "target": 4.0},
                                 {"type": "VoltageRegularization", "cost": 0.1}],
                      "optimizer": {"lr": 0.001}}
        cfg = os.path.join(tmp, "soak.json")
        json.dump(c, open(cfg, "w"))
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"), OMP_PROC_BIND="false")
        t0 = time.time()
        p = subprocess.Popen([a.bin, "train", cfg, "--no-progress"], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        metrics = os.path.join(tmp, "out", "metrics.csv")
        samples = []  # (updates done, RSS KiB, high-water mark KiB)
        while p.poll() is None:
            r = rss_kib(p.pid)
            done = 0
            if os.path.exists(metrics):
                with open(metrics) as f:
                    done = max(0, sum(1 for ln in f if ln.strip()) - 1)
            if r is not None:
                samples.append((done, r[0], r[1]))
            time.sleep(0.05)
        err = p.stderr.read()
        wall = time.time() - t0
        if p.returncode != 0:
            fails.append(f"the run exited {p.returncode}: {err[-2000:]}")
        early = [r for d, r, h in samples if a.updates // 10 < d <= a.updates // 2]
        late = [r for d, r, h in samples if d > a.updates // 2]
        low = min((r for d, r, h in samples if d > a.updates // 10), default=0)
        if not early or not late:
            fails.append(f"too few RSS samples ({len(samples)})")
        else:
            base, peak = max(early), max(late)
            hwm_mid = max(h for d, r, h in samples if d <= a.updates // 2)
            hwm_end = max(h for d, r, h in samples)
            growth = (hwm_end - hwm_mid) / hwm_mid
            print(f"resident memory: high-water mark {hwm_mid / 1024:.1f} MiB at update {a.updates // 2}, "
                  f"{hwm_end / 1024:.1f} MiB at the end: growth {100 * growth:.2f} % (sampled peaks "
                  f"{base / 1024:.1f} MiB in updates {a.updates // 10 + 1}..{a.updates // 2}, {peak / 1024:.1f} MiB "
                  f"after; lowest sample {low / 1024:.1f} MiB; {len(samples)} samples)")
            if sanitized:
                print("  (not judged under AddressSanitizer: its quarantine holds freed memory; LSan checks leaks)")
            elif growth > 0.05:
                fails.append(f"resident memory grew by {100 * growth:.2f} % after the middle of the run")
        with open(metrics) as f:
            steps = [int(ln.split(",")[0]) for ln in list(f)[1:] if ln.strip()]
        print(f"metrics.csv: {len(steps)} rows")
        if steps != list(range(1, a.updates + 1)):
            fails.append(f"metrics.csv rows are not steps 1..{a.updates}")
        ck = os.path.join(tmp, "out", "checkpoints")
        names = sorted(os.listdir(ck), key=lambda n: int(n[5:-3]) if n.startswith("step_") else -1)
        expected = [f"step_{k}.h5" for k in range(a.every, a.updates + 1, a.every)]
        if a.updates % a.every:
            expected.append(f"step_{a.updates}.h5")
        if names != expected:
            fails.append(f"checkpoints {names[:3]}... differ from the {len(expected)} expected")
        bad = 0
        for n in names:
            with h5py.File(os.path.join(ck, n), "r") as f:
                ds = []
                f.visititems(lambda k, o: ds.append(o) if isinstance(o, h5py.Dataset) else None)
                ok = int(f["step"][0]) == int(n[5:-3]) and all("checksum" in d.attrs for d in ds)
            bad += not ok
        print(f"checkpoints: {len(names)} files, {len(names) - bad} complete (step and checksums)")
        if bad:
            fails.append(f"{bad} checkpoint(s) incomplete")
        print(f"{a.updates} updates in {wall:.1f} s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in fails:
        print("FAIL: " + f)
    print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
