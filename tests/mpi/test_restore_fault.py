#!/usr/bin/python3
"""MPI restore, chief-only outputs and fault injection, with real processes.

N ranks (--ranks, default 2; N divides the global batch 8) x batch 8/N:
1. N ranks train 6 updates straight; a second N-rank job stops after 3 (--stop-after 3); a new N-rank job
   resumes from that checkpoint and finishes: every dataset of the final checkpoints is identical, and both
   equal a serial run with the global batch 8 (relative L2 below 1e-6).
2. The output directory of an MPI run holds only the chief's files; its metrics log equals the serial run's.
3. Fault injection: DPOINTNET_FAULT_RANK=1 (0 when N = 1) DPOINTNET_FAULT_STEP=5 (checkpoint every 2
   updates): the job exits non-zero within the timeout, that rank's message is in the output, no partial
   checkpoint is left, and the last complete checkpoint (step 4) restores and finishes the run with the same
   weights as the straight run.

--carry turns on train.carry_state: the checkpoints then hold every sample slot's carried state, gathered from
the ranks by global slot, and each restore scatters it back.

  test_restore_fault.py --bin build/dpointnet --mpi-bin build/dpointnet-mpi [--ranks N] [--carry]

tests/CMakeLists.txt registers mpi.restore_fault.np1/np2/np4.
"""
import os
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpi_common  # noqa: E402
from mpi_common import (add_ranks, make_network, mpirun, parse_binaries, read_h5, rel_l2, report, run,  # noqa: E402
                        train_config)

GLOBAL_BATCH = 8


def main():
    ap = add_ranks(parse_binaries(), 2, divides=GLOBAL_BATCH)
    ap.add_argument("--carry", action="store_true", help="train.carry_state in every run")
    a = ap.parse_args()
    n = a.ranks
    local = GLOBAL_BATCH // n
    fault_rank = 1 if n > 1 else 0
    print(f"  {n} rank(s) x batch {local} against serial batch {GLOBAL_BATCH}; fault injected on rank {fault_rank}",
          flush=True)
    tmp = tempfile.mkdtemp(prefix="dpointnet_mpi_restore_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        make_network(a.bin, net)
        dist = {"mode": "mpi"}
        extra = {"save_checkpoint_every": 2}
        if a.carry:
            extra["carry_state"] = True
        c_straight = train_config(os.path.join(tmp, "straight.json"), net, os.path.join(tmp, "straight"), local, 6,
                                  dist, extra_train=extra)
        c_int = train_config(os.path.join(tmp, "int.json"), net, os.path.join(tmp, "int"), local, 6, dist,
                             extra_train=extra)
        c_serial = train_config(os.path.join(tmp, "serial.json"), net, os.path.join(tmp, "serial"), GLOBAL_BATCH, 6,
                                extra_train=extra)
        mpirun(n, [a.mpi_bin, "train", c_straight, "--no-progress"])
        mpirun(n, [a.mpi_bin, "train", c_int, "--no-progress", "--stop-after", "3"])
        ck3 = os.path.join(tmp, "int", "checkpoints", "step_3.h5")
        mpirun(n, [a.mpi_bin, "train", c_int, "--no-progress", "--resume", ck3])
        run([a.bin, "train", c_serial, "--no-progress"])
        A = read_h5(os.path.join(tmp, "straight", "checkpoints", "step_6.h5"))
        B = read_h5(os.path.join(tmp, "int", "checkpoints", "step_6.h5"))
        S = read_h5(os.path.join(tmp, "serial", "checkpoints", "step_6.h5"))
        for k in sorted(A):
            same = np.array_equal(A[k], B[k])
            if k.startswith("schedule/"):  # the job that wrote it: N ranks x 8/N here, 1 x 8 serially
                if not same:
                    fails.append(f"resume: {k} differs")
                continue
            e = rel_l2(A[k], S[k])
            print(f"  {k}: resumed == straight: {same}; vs serial batch 8: relative L2 {e:.3e}")
            if not same:
                fails.append(f"resume: {k} differs")
            if e >= 1e-6:
                fails.append(f"serial equivalence: {k} relative L2 {e:.3e}")
        if a.carry and ("carried_state/records" not in A or A["carried_state/records"].shape[0] != GLOBAL_BATCH):
            fails.append("the checkpoint holds no carried state of the 8 sample slots")
        if np.array_equal(A["surfaces/recurrent/weight"], A["surfaces/recurrent/initial_weight"]):
            fails.append("weights did not move: comparison vacuous")
        # the metrics log of the N-rank run equals the serial global-batch run's (all but timing columns)
        import csv
        ma = list(csv.DictReader(open(os.path.join(tmp, "straight", "metrics.csv"))))
        ms = list(csv.DictReader(open(os.path.join(tmp, "serial", "metrics.csv"))))
        cols = [c for c in ms[0] if not (c in ("seconds", "peak_rss_mib") or c.endswith("_s"))]  # not timings
        worst = 0.0
        for ra, rb in zip(ma, ms):
            for c in cols:
                x, y = float(ra[c]), float(rb[c])
                worst = max(worst, abs(x - y) / abs(y) if y != 0 else abs(x - y))
        print(f"  metrics.csv {n} rank(s) vs serial batch {GLOBAL_BATCH}: {len(ma)} rows, worst relative difference {worst:.3e}")
        if len(ma) != 6 or len(ms) != 6 or worst >= 1e-6:
            fails.append(f"metrics differ from the serial run (worst {worst:.3e})")
        # chief-only outputs
        expected = {"metrics.csv", "checkpoints", "network", "log.txt", "train_config.resolved.json", "rates.h5",
                    "run_summary.json", "weights.h5", "spikes_before.h5", "spikes_after.h5"}  # (the run report's)
        found = set(os.listdir(os.path.join(tmp, "straight")))
        print(f"  output directory of the {n}-rank run: {sorted(found)}")
        if found != expected:
            fails.append(f"unexpected output files: {sorted(found ^ expected)}")
        # fault injection
        c_fault = train_config(os.path.join(tmp, "fault.json"), net, os.path.join(tmp, "fault"), local, 6, dist,
                               extra_train=extra)
        mpi_common.MPI_ENV.update(DPOINTNET_FAULT_RANK=str(fault_rank), DPOINTNET_FAULT_STEP="5")
        t0 = time.time()
        r = mpirun(n, [a.mpi_bin, "train", c_fault, "--no-progress"], check=False, timeout=120)
        dt = time.time() - t0
        del mpi_common.MPI_ENV["DPOINTNET_FAULT_RANK"], mpi_common.MPI_ENV["DPOINTNET_FAULT_STEP"]
        msg = [l for l in (r.stdout + r.stderr).splitlines() if "injected fault" in l]
        print(f"  fault run: exit code {r.returncode} after {dt:.1f} s; message: {msg[:1]}")
        if r.returncode == 0:
            fails.append("the faulty job exited 0")
        if not any(f"rank {fault_rank}" in l for l in msg):
            fails.append(f"rank {fault_rank}'s message is missing")
        cks = sorted(os.listdir(os.path.join(tmp, "fault", "checkpoints")))
        print(f"  checkpoints left: {cks}")
        if any(c.endswith(".tmp") for c in cks):
            fails.append("a partial checkpoint was left")
        if "step_4.h5" not in cks:
            fails.append("the last complete checkpoint (step 4) is missing")
        else:
            mpirun(n, [a.mpi_bin, "train", c_fault, "--no-progress", "--resume",
                       os.path.join(tmp, "fault", "checkpoints", "step_4.h5")])
            F = read_h5(os.path.join(tmp, "fault", "checkpoints", "step_6.h5"))
            for k in sorted(A):
                if not np.array_equal(A[k], F[k]):
                    fails.append(f"after the fault and restore: {k} differs from the straight run")
            print("  restored from step 4 after the fault and finished: identical to the straight run"
                  if not any("after the fault" in f for f in fails) else "  restore after fault differs")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
