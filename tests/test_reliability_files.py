#!/usr/bin/python3
"""Filesystem failures and checkpoint integrity (and an output_dir that is a regular file), with
real processes:

* output_dir naming an existing regular file (train and simulate): exit 2, the message names output_dir and the
  file, nothing written;
* a read-only file system (a tmpfs mounted ro): exit 2 naming output_dir and "Read-only file system";
* a full file system mid-run (a 4 MiB tmpfs filled after a first checkpoint): exit 3, the message names the
  checkpoint file that could not be written, no partial file (no step_4.h5, no .tmp), step_2.h5 byte-identical;
* checkpoints refused on load (exit 2, message naming the file and what is wrong): one flipped bit in a dataset
  (checksum mismatch), a truncated file, a future format_version, a dataset without checksum;
* a non-finite gradient before update 3 (DPOINTNET_FAULT_NAN_STEP=3): exit 4 naming the surface and the update,
  no update applied, no checkpoint written after step_2.h5, which stays byte-identical.

The tmpfs cases need root and mount(8) (they fail, saying so, where mounting is not allowed).

  test_reliability_files.py --bin build/dpointnet
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "mpi"))
from mpi_common import report  # noqa: E402

ENV = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env or ENV, timeout=300)
    return r.returncode, r.stdout + r.stderr


def sha(path):
    return hashlib.sha1(open(path, "rb").read()).hexdigest()


def expect(fails, name, rc, out, code, phrases):
    missing = [p for p in phrases if p not in out]
    ok = rc == code and not missing
    print(f"  {'ok  ' if ok else 'FAIL'} {name}: exit {rc} (expected {code})" +
          (f"; missing {missing}" if missing else ""))
    if not ok:
        fails.append(f"{name}: exit {rc}, missing {missing}:\n{out[-1500:]}")


class Tmpfs:
    def __init__(self, path, opts):
        self.path, self.opts = path, opts

    def __enter__(self):
        os.makedirs(self.path, exist_ok=True)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", self.opts, "tmpfs", self.path], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"cannot mount a tmpfs at {self.path} ({r.stderr.strip()}): this test needs root "
                               "and mount(8)")
        return self

    def __exit__(self, *exc):
        subprocess.run(["umount", self.path])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_files_")
    fails = []
    try:
        net = os.path.join(tmp, "net")
        run([a.bin, "generate", "--out", net, "--neurons", "60", "--seed", "3"])
        base = json.load(open(os.path.join(net, "config.simulation.json")))
        base["network"] = os.path.join(net, base["network"])
        base["run"].update({"tstop": 30.0, "batch_size": 2, "seed": 5})
        base["train"] = {"steps": 4, "save_checkpoint_every": 2, "optimizer": {"lr": 0.01},
                         "losses": [{"type": "TargetFiringRate", "cost": 1.0, "target": 4.0}]}

        def config(name, out_dir):
            c = json.loads(json.dumps(base))
            c["output"] = {"output_dir": out_dir}
            p = os.path.join(tmp, name + ".json")
            json.dump(c, open(p, "w"))
            return p

        # output_dir is a regular file
        afile = os.path.join(tmp, "afile")
        open(afile, "w").write("not a directory\n")
        for cmd in ("train", "simulate"):
            rc, out = run([a.bin, cmd, config("file_" + cmd, os.path.join(afile, "out"))])
            expect(fails, f"{cmd}: output_dir under a regular file", rc, out, 2,
                   ["field 'output_dir'", afile + " exists and is not a directory"])
        if open(afile).read() != "not a directory\n":
            fails.append("the regular file was changed")

        # read-only file system
        ro = os.path.join(tmp, "ro")
        with Tmpfs(ro, "ro,size=1m"):
            rc, out = run([a.bin, "train", config("ro", os.path.join(ro, "out"))])
            expect(fails, "train: read-only file system", rc, out, 2, ["field 'output_dir'", "Read-only file system"])

        # full file system after a first checkpoint
        full = os.path.join(tmp, "full")
        with Tmpfs(full, "size=4m"):
            cfg = config("full", os.path.join(full, "out"))
            rc, out = run([a.bin, "train", cfg, "--stop-after", "2", "--no-progress"])
            ck = os.path.join(full, "out", "checkpoints")
            before = sha(os.path.join(ck, "step_2.h5"))
            for f in ("run_summary.json", "weights.h5", "spikes_before.h5", "spikes_after.h5"):  # (the resume removes
                p = os.path.join(full, "out", f)                                               # them: freed space)
                if os.path.exists(p):
                    os.remove(p)
            with open(os.path.join(full, "filler"), "wb") as f:  # fill it, then leave 64 KiB
                try:
                    while True:
                        f.write(b"\0" * 65536)
                        f.flush()
                except OSError:
                    pass
            os.truncate(os.path.join(full, "filler"), max(0, os.path.getsize(os.path.join(full, "filler")) - 65536))
            rc, out = run([a.bin, "train", cfg, "--no-progress", "--resume", os.path.join(ck, "step_2.h5")])
            expect(fails, "train: full file system at the next checkpoint", rc, out, 3,
                   [os.path.join(ck, "step_4.h5"), "No space left on device", "earlier checkpoints are intact"])
            left = sorted(os.listdir(ck))
            if left != ["step_2.h5"] or sha(os.path.join(ck, "step_2.h5")) != before:
                fails.append(f"after the full-disk failure: checkpoints {left}, step_2.h5 unchanged: "
                             f"{sha(os.path.join(ck, 'step_2.h5')) == before}")
            else:
                print("  ok   no partial checkpoint; step_2.h5 byte-identical")

        # damaged checkpoints
        good_cfg = config("good", os.path.join(tmp, "good"))
        run([a.bin, "train", good_cfg, "--stop-after", "2", "--no-progress"])
        good = os.path.join(tmp, "good", "checkpoints", "step_2.h5")
        resume_cfg = config("resume", os.path.join(tmp, "resumed"))

        def damaged(name, edit):
            p = os.path.join(tmp, name + ".h5")
            shutil.copy(good, p)
            edit(p)
            return p

        def flip(p):
            with h5py.File(p, "r") as f:
                off = f["surfaces/recurrent/weight"].id.get_offset()
            with open(p, "r+b") as f:
                f.seek(off + 40)
                b = f.read(1)
                f.seek(off + 40)
                f.write(bytes([b[0] ^ 0x04]))

        def truncate(p):
            os.truncate(p, os.path.getsize(p) // 2)

        def future(p):
            with h5py.File(p, "r+") as f:
                f.attrs.modify("format_version", [9])

        def no_checksum(p):
            with h5py.File(p, "r+") as f:
                del f["surfaces/recurrent/adam_m"].attrs["checksum"]

        for name, edit, phrases in (
                ("flipped bit", flip, ["/surfaces/recurrent/weight", "checksum", "corrupted"]),
                ("truncated", truncate, ["truncated.h5"]),
                ("future format", future, ["format_version", "newer dpointnet"]),
                ("missing checksum", no_checksum, ["/surfaces/recurrent/adam_m", "checksum", "is missing"])):
            p = damaged(name.replace(" ", "_"), edit)
            rc, out = run([a.bin, "train", resume_cfg, "--resume", p, "--no-progress"])
            expect(fails, f"resume from a checkpoint with a {name}", rc, out, 2, [p] + phrases)
        if os.path.exists(os.path.join(tmp, "resumed", "checkpoints")):
            fails.append("a refused resume wrote checkpoints")

        # non-finite gradient
        nan_cfg = config("nan", os.path.join(tmp, "nan"))
        rc, out = run([a.bin, "train", nan_cfg, "--no-progress"], env=dict(ENV, DPOINTNET_FAULT_NAN_STEP="3"))
        expect(fails, "non-finite gradient before update 3", rc, out, 4,
               ["surface 'recurrent'", "update 3", "nothing of it was applied"])
        ckd = os.path.join(tmp, "nan", "checkpoints")
        if sorted(os.listdir(ckd)) != ["step_2.h5"]:
            fails.append(f"checkpoints after the non-finite gradient: {sorted(os.listdir(ckd))}")
        rc, out = run([a.bin, "train", nan_cfg, "--no-progress", "--resume", os.path.join(ckd, "step_2.h5")])
        if rc != 0:
            fails.append(f"the last good checkpoint does not resume: exit {rc}\n{out[-1000:]}")
        else:
            print("  ok   the last good checkpoint (step 2) resumes and finishes")
    except RuntimeError as e:
        fails.append(str(e))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report(fails)


if __name__ == "__main__":
    sys.exit(main())
