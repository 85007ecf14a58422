#!/usr/bin/env python3
"""cli.version: `dpointnet --version` against values from outside the binary: the version of CMakeLists.txt's
project() line, the Kokkos version and backends CMake found at configure time, whether dpointnet-mpi was built.
Also: it exits 0 without a subcommand and without starting Kokkos, and `dpointnet info` prints the same text (with
the concurrency of the started Kokkos on the execution-space line). With --mpi-bin: `dpointnet-mpi --version` (run
as a singleton, without mpirun) prints the same text plus an MPI line naming the library version that `mpiexec
--version` reports."""
import argparse
import os
import re
import subprocess
import sys


def fail(msg):
    print(f"cli.version: FAIL: {msg}", flush=True)
    sys.exit(1)


def version_tuple(v):
    return tuple(int(x) for x in v.split("."))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--kokkos-version", required=True, help="Kokkos_VERSION as CMake found it")
    ap.add_argument("--kokkos-backends", required=True, help="kokkos_check's backends, ',' or ';' between")
    ap.add_argument("--mpi-driver", type=int, required=True)
    ap.add_argument("--mpi-bin", default="", help="dpointnet-mpi, when built")
    ap.add_argument("--mpiexec", default="mpiexec")
    a = ap.parse_args()

    text = open(os.path.join(a.source_dir, "CMakeLists.txt")).read()
    m = re.search(r"^project\(\s*dpointnet\s+VERSION\s+([0-9][0-9.]*)", text, re.M)
    if not m:
        fail("no project(dpointnet VERSION x.y.z) line in CMakeLists.txt")
    version = m.group(1)
    backends = [b for b in re.split(r"[;,\s]+", a.kokkos_backends) if b]

    # OMP_PROC_BIND unset on purpose for --version: Kokkos is not started, so it cannot warn about it.
    env = {k: v for k, v in os.environ.items() if k != "OMP_PROC_BIND"}
    p = subprocess.run([a.bin, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode != 0:
        fail(f"--version exited {p.returncode}: {p.stderr}")
    if p.stderr.strip():
        fail(f"--version wrote to stderr (Kokkos started?): {p.stderr!r}")
    lines = p.stdout.splitlines()
    print(p.stdout)
    if lines[0] != f"dpointnet {version}":
        fail(f"first line {lines[0]!r}, CMakeLists.txt project() says {version}")
    fields = dict(line.split(": ", 1) for line in lines[2:] if ": " in line)
    if not lines[1].startswith("Kokkos ") or version_tuple(lines[1][7:]) != version_tuple(a.kokkos_version):
        fail(f"second line {lines[1]!r}, CMake found Kokkos {a.kokkos_version}")
    if set(fields.get("Kokkos backends", "").split()) != set(backends):
        fail(f"backends {fields.get('Kokkos backends')!r}, CMake found {a.kokkos_backends}")
    if not set(fields.get("precisions", "").split()[:2]) == {"float32", "float64"}:
        fail(f"precisions line {fields.get('precisions')!r}")
    space = fields.get("default execution space", "")
    shapes = fields.get("kernel shapes", "")
    # device shapes on a device backend, or when DPOINTNET_KERNEL_SHAPE=device asks for them everywhere
    device = any(b in backends for b in ("CUDA", "HIP", "SYCL", "OPENMPTARGET")) or \
        os.environ.get("DPOINTNET_KERNEL_SHAPE") == "device"
    if not shapes.startswith(f"{space}: {'device' if device else 'host'}"):
        fail(f"kernel shapes {shapes!r} for default space {space!r} (device backend: {device})")
    want_mpi = "built" if a.mpi_driver else "not built"
    if fields.get("MPI driver dpointnet-mpi") != want_mpi:
        fail(f"MPI driver line {fields.get('MPI driver dpointnet-mpi')!r}, expected {want_mpi!r}")

    env = dict(os.environ, OMP_PROC_BIND="false")
    q = subprocess.run([a.bin, "info"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if q.returncode != 0:
        fail(f"info exited {q.returncode}: {q.stderr}")
    info = q.stdout.splitlines()
    strip = [re.sub(r" \(concurrency \d+\)$", "", line) for line in info]
    if strip != lines or not any(re.search(r"\(concurrency \d+\)$", line) for line in info):
        fail(f"info does not print --version's text with the concurrency:\n{q.stdout}")
    if a.mpi_driver and not a.mpi_bin:
        fail("dpointnet-mpi was built but --mpi-bin was not given")
    if a.mpi_bin:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        r = subprocess.run([a.mpi_bin, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        if r.returncode != 0:
            fail(f"dpointnet-mpi --version exited {r.returncode}: {r.stderr}")
        mlines = r.stdout.splitlines()
        print(r.stdout)
        if mlines[:len(lines)] != lines:
            fail("dpointnet-mpi --version does not start with dpointnet --version's text")
        ref = subprocess.run([a.mpiexec, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env).stdout
        m = re.search(r"(\d+\.\d+\.\d+)", ref)
        mpi = [x for x in mlines[len(lines):] if x.startswith("MPI: ")]
        if not m or not mpi or m.group(1) not in mpi[0]:
            fail(f"dpointnet-mpi's MPI line {mpi!r} does not name the version mpiexec reports ({ref.strip()!r})")
    print("cli.version: PASS")


if __name__ == "__main__":
    main()
