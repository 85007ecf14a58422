#!/usr/bin/python3
"""Preemption, with real processes: a training run that receives SIGTERM (or SIGUSR1, Slurm's
--signal=USR1@T) finishes its current update, writes a complete checkpoint, logs where to resume and exits with
code 75; resuming from that checkpoint ends with the same final checkpoint as an uninterrupted run (every dataset
bitwise equal).

Serial: the signal goes to the process. With --ranks N (N > 1): SIGTERM goes to rank N-1 only, so the stop must
be agreed on by all ranks (a reduced flag): every rank stops at the same update and only the chief writes.

  test_preemption.py --bin build/dpointnet [--mpi-bin build/dpointnet-mpi --ranks 2] [--signal USR1]
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_common import MPI_ENV, MPIRUN, make_network, parse_binaries, read_h5, report, run, train_config  # noqa: E402

STEPS = 40
GLOBAL_BATCH = 4


def rank_pids(launcher_pid, n, timeout=60):
    """The pids of the ranks started by mpirun (its descendants with OMPI_COMM_WORLD_RANK), by rank."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        found = {}
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
                stat = open(f"/proc/{pid}/stat").read()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            ranks = [e for e in env if e.startswith(b"OMPI_COMM_WORLD_RANK=")]
            if ranks and ppid == launcher_pid:
                found[int(ranks[0].split(b"=")[1])] = int(pid)
        if len(found) == n:
            return found
        time.sleep(0.05)
    raise SystemExit(f"could not find the {n} ranks of mpirun {launcher_pid}")


def rows(metrics):
    if not os.path.exists(metrics):
        return 0
    with open(metrics) as f:
        return max(0, sum(1 for ln in f if ln.strip()) - 1)


def main():
    ap = parse_binaries(mpi_required=False)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--signal", choices=["TERM", "USR1"], default="TERM")
    a = ap.parse_args()
    if a.ranks > 1 and not a.mpi_bin:
        ap.error("--mpi-bin is required with --ranks > 1")
    sig = getattr(signal, "SIG" + a.signal)
    tmp = tempfile.mkdtemp(prefix="dpointnet_preempt_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        make_network(a.bin, net, neurons=120)
        dist = {"mode": "mpi"} if a.ranks > 1 else None
        batch = GLOBAL_BATCH // a.ranks
        extra = {"save_checkpoint_every": 10}
        cfgs = {k: train_config(os.path.join(tmp, k + ".json"), net, os.path.join(tmp, k), batch, STEPS, dist,
                                extra_train=extra) for k in ("straight", "preempted")}
        launch = ([MPIRUN, "-n", str(a.ranks), "--oversubscribe", a.mpi_bin] if a.ranks > 1 else [a.bin])
        run(launch + ["train", cfgs["straight"], "--no-progress"])
        metrics = os.path.join(tmp, "preempted", "metrics.csv")
        print(f"  $ {' '.join(launch)} train {cfgs['preempted']} (signalled after 3 updates)", flush=True)
        p = subprocess.Popen(launch + ["train", cfgs["preempted"], "--no-progress"], env=MPI_ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        target = rank_pids(p.pid, a.ranks)[a.ranks - 1] if a.ranks > 1 else p.pid
        t0 = time.time()
        while rows(metrics) < 3 and p.poll() is None and time.time() - t0 < 300:
            time.sleep(0.01)
        os.kill(target, sig)
        sent_at = rows(metrics)
        out, _ = p.communicate(timeout=300)
        print(f"  signal {a.signal} sent to pid {target} after {sent_at} update(s); exit code {p.returncode}")
        if p.returncode != 75:
            fails.append(f"exit code {p.returncode}, expected 75:\n{out[-2000:]}")
        m = re.search(r"received: stopped after update (\d+) of \d+ with a complete checkpoint; resume with --resume "
                      r"(\S+)", out)
        if not m:
            fails.append("no 'stopped after update ... resume with --resume' line in the log")
            return report(fails)
        k, ck = int(m.group(1)), m.group(2)
        print(f"  stopped after update {k}; checkpoint {ck}")
        if not (sent_at <= k < STEPS) or not os.path.exists(ck):
            fails.append(f"stopped at update {k} (signal after {sent_at}), checkpoint exists: {os.path.exists(ck)}")
        if rows(metrics) != k:
            fails.append(f"metrics.csv has {rows(metrics)} rows, expected {k}")
        if a.ranks > 1:
            stops = re.findall(r"rank (\d+) replica \d+: update (\d+) samples", out)
            last = {}
            for rank, upd in stops:
                last[int(rank)] = max(last.get(int(rank), 0), int(upd))
            if sorted(last) != list(range(a.ranks)) or set(last.values()) != {k}:
                fails.append(f"the ranks stopped at different updates: {last}")
            else:
                print(f"  every rank's last update: {k}")
        leftovers = [f for f in os.listdir(os.path.dirname(ck)) if f.endswith(".tmp")]
        if leftovers:
            fails.append(f"temporary files left: {leftovers}")
        run(launch + ["train", cfgs["preempted"], "--no-progress", "--resume", ck])
        A = read_h5(os.path.join(tmp, "straight", "checkpoints", f"step_{STEPS}.h5"))
        B = read_h5(os.path.join(tmp, "preempted", "checkpoints", f"step_{STEPS}.h5"))
        diff = [key for key in A if key not in B or not np.array_equal(A[key], B[key])]
        print(f"  resumed run vs uninterrupted: {len(A)} datasets, {len(diff)} differ")
        if diff or sorted(A) != sorted(B):
            fails.append(f"final checkpoints differ: {diff}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
