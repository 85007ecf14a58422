#!/usr/bin/python3
"""Elastic resume, with real processes: a run of 6 updates with the global batch 8 done as
`mpirun -n 2` x batch 4 (updates 1-2), resumed on `mpirun -n 4` x batch 2 (updates 3-4), resumed serially with
batch 8 (updates 5-6), must equal the uninterrupted serial batch-8 run: every dataset of the final checkpoints
within 1e-6 relative L2 (float32; samples are keyed by their global index, only the order of the gradient sums
differs). A resume that changes the global batch (serial batch 4) is refused with exit code 2, naming
global_batch. --carry adds train.carry_state: the carried states travel by global sample slot.

  test_elastic.py --bin build/dpointnet --mpi-bin build/dpointnet-mpi [--carry]
"""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_common import make_network, mpirun, parse_binaries, read_h5, rel_l2, report, run, train_config  # noqa: E402

GLOBAL_BATCH = 8


def main():
    ap = parse_binaries()
    ap.add_argument("--carry", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_elastic_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        make_network(a.bin, net)
        extra = {"carry_state": True} if a.carry else {}
        out = os.path.join(tmp, "elastic")
        ref = train_config(os.path.join(tmp, "ref.json"), net, os.path.join(tmp, "ref"), GLOBAL_BATCH, 6,
                           extra_train=extra)
        run([a.bin, "train", ref, "--no-progress"])
        ck = lambda k: os.path.join(out, "checkpoints", f"step_{k}.h5")  # noqa: E731
        c2 = train_config(os.path.join(tmp, "np2.json"), net, out, GLOBAL_BATCH // 2, 6, {"mode": "mpi"},
                          extra_train=extra)
        mpirun(2, [a.mpi_bin, "train", c2, "--no-progress", "--stop-after", "2"])
        c4 = train_config(os.path.join(tmp, "np4.json"), net, out, GLOBAL_BATCH // 4, 6, {"mode": "mpi"},
                          extra_train=extra)
        r = mpirun(4, [a.mpi_bin, "train", c4, "--no-progress", "--stop-after", "2", "--resume", ck(2)])
        if "elastic resume: the checkpoint was written by 2 replica(s) x batch 4; continuing on 4 x 2" not in r.stderr:
            fails.append("the 4-rank resume did not log the elastic resume")
        c1 = train_config(os.path.join(tmp, "serial.json"), net, out, GLOBAL_BATCH, 6, extra_train=extra)
        run([a.bin, "train", c1, "--no-progress", "--resume", ck(4)])
        A = read_h5(os.path.join(tmp, "ref", "checkpoints", "step_6.h5"))
        B = read_h5(ck(6))
        worst = 0.0
        for key in sorted(A):
            if key.startswith("schedule/"):
                continue  # the job that wrote it: serial batch 8 in both
            if key not in B:
                fails.append(f"{key} missing after the elastic resumes")
                continue
            e = rel_l2(B[key], A[key])
            worst = max(worst, e)
            if e >= 1e-6:
                fails.append(f"{key}: relative L2 {e:.3e} against the uninterrupted run")
        print(f"  2 x 4 -> 4 x 2 -> 1 x 8 against 1 x 8 straight: {len(A)} datasets, worst relative L2 {worst:.3e}")
        if a.carry and "carried_state/records" not in B:
            fails.append("no carried state in the final checkpoint")
        c_bad = train_config(os.path.join(tmp, "bad.json"), net, os.path.join(tmp, "bad"), GLOBAL_BATCH // 2, 6,
                             extra_train=extra)
        r = run([a.bin, "train", c_bad, "--no-progress", "--resume", ck(2)], check=False)
        msg = r.stdout + r.stderr
        print(f"  resume with global batch 4: exit {r.returncode}")
        if r.returncode != 2 or "global_batch" not in msg or "global batch of 8" not in msg:
            fails.append(f"a resume with another global batch was not refused naming it: exit {r.returncode}\n{msg}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
