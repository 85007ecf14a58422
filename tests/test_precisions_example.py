#!/usr/bin/python3
"""The bundled training example (input/v1_example_train.json: 100 updates) in float32, bfloat16 and float16 on the
example network generated into a temporary directory (as scripts/run-example generates it): the first update's
loss is the same (16-bit runs share float32's forward pass), and the mean loss and rate of the last 10 updates are
within the margins docs/training-update.md states (5 % each) of float32's (scripts/compare_precisions.py --check).

  test_precisions_example.py --bin build/dpointnet
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dpointnet_precisions_")
    try:
        net = os.path.join(tmp, "v1_example")
        subprocess.run([a.bin, "generate", "--out", net, "--neurons", "300", "--seed", "1", "--gzip"], check=True,
                       capture_output=True)
        c = json.load(open(os.path.join(REPO, "input", "v1_example_train.json")))
        c["network"] = os.path.join(net, "config.circuit.json")
        path = os.path.join(tmp, "train.json")
        json.dump(c, open(path, "w"), indent=1)
        r = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "compare_precisions.py"), path, "--bin",
                            a.bin, "--precisions", "float32,bfloat16,float16", "--out", os.path.join(tmp, "out"),
                            "--loss-margin", "0.05", "--rate-margin", "0.05", "--check"])
        return r.returncode
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
