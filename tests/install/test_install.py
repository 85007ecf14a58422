#!/usr/bin/env python3
"""install.consumer: `cmake --install` of the current build into a temporary prefix, then a consumer project built
against it (docs/building.md).

Checks, in order:
  1. the installed layout: bin/dpointnet (and bin/dpointnet-mpi when the build has it), the library, the CMake package
     files, and include/dpointnet holding exactly the public headers of cmake/public_headers.txt and the project
     headers they include (no MPI code), each include prefixed "dpointnet/..." and resolving inside include/;
  2. the installed `dpointnet --version` prints the version of CMakeLists.txt's project() line;
  3. the version file accepts that version and its major.minor, and refuses the next minor (0.x) / major;
  4. tests/install/consumer configures with -DCMAKE_PREFIX_PATH=<prefix>;<Kokkos prefix>, finds dpointnet in the
     prefix and Kokkos in the given Kokkos prefix, compiles with no path into the source or build tree, builds, and
     its output (version, dt, tstop, steps, neurons, edges of the bundled BMTK example) equals what this script
     reads from CMakeLists.txt, the config it writes and the SONATA files (h5py);
  5. a C++-only project (no C, so no FindHDF5) also finds the package and gets the target.
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(msg):
    print(f"install.consumer: FAIL: {msg}", flush=True)
    sys.exit(1)


def run(cmd, what, cwd=None, env=None):
    t0 = time.time()
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(f"[{time.time() - t0:5.1f} s] {what}: {' '.join(cmd)}", flush=True)
    if p.returncode != 0:
        print(p.stdout[-6000:])
        fail(f"{what} exited {p.returncode}")
    return p.stdout


def project_version(source_dir):
    text = open(os.path.join(source_dir, "CMakeLists.txt")).read()
    m = re.search(r"^project\(\s*dpointnet\s+VERSION\s+([0-9][0-9.]*)", text, re.M)
    if not m:
        fail("no project(dpointnet VERSION x.y.z) line in CMakeLists.txt")
    return m.group(1)


def find_one(prefix, pattern):
    hits = []
    for root, _, files in os.walk(prefix):
        hits += [os.path.join(root, f) for f in files if re.fullmatch(pattern, f)]
    if len(hits) != 1:
        fail(f"expected one file matching {pattern} under {prefix}, found {hits}")
    return hits[0]


def check_layout(prefix, source_dir, mpi_driver):
    for exe in ["dpointnet"] + (["dpointnet-mpi"] if mpi_driver else []):
        path = os.path.join(prefix, "bin", exe)
        if not os.access(path, os.X_OK):
            fail(f"{path} is not installed")
    if not mpi_driver and os.path.exists(os.path.join(prefix, "bin", "dpointnet-mpi")):
        fail("dpointnet-mpi installed although the build has no MPI driver")
    lib = find_one(prefix, r"libdpointnet_core\.(a|so)")
    cfg = find_one(prefix, r"dpointnetConfig\.cmake")
    find_one(prefix, r"dpointnetConfigVersion\.cmake")
    find_one(prefix, r"dpointnetTargets\.cmake")

    # the public headers and, transitively, the project headers they include ("dpointnet/..."), read from the
    # sources here independently of the install rules
    src = os.path.join(source_dir, "src")
    public = [ln.strip() for ln in open(os.path.join(source_dir, "cmake", "public_headers.txt"))
              if ln.strip() and not ln.startswith("#")]
    want, todo = set(), list(public)
    while todo:
        rel = todo.pop()
        if rel in want:
            continue
        want.add(rel)
        for line in open(os.path.join(src, rel)):
            m = re.match(r'\s*#\s*include\s+"dpointnet/([^"]+)"', line)
            if m:
                todo.append(m.group(1))
    if any(rel.startswith(os.path.join("parallel", "mpi") + os.sep) for rel in want):
        fail("a public header includes MPI code (src/parallel/mpi)")
    inc = os.path.join(prefix, "include", "dpointnet")
    have = set()
    for root, _, files in os.walk(inc):
        have |= {os.path.relpath(os.path.join(root, f), inc) for f in files}
    if want != have:
        fail(f"installed headers differ from the public headers and their includes: missing {sorted(want - have)}, "
             f"extra {sorted(have - want)}")
    unresolved, unprefixed = [], []
    for rel in sorted(have):
        for line in open(os.path.join(inc, rel)):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            if not m.group(1).startswith("dpointnet/"):
                unprefixed.append(f"{rel}: {m.group(1)}")
            elif not os.path.isfile(os.path.join(prefix, "include", m.group(1))):
                unresolved.append(f"{rel}: {m.group(1)}")
    if unprefixed:
        fail(f"installed headers include project headers without the dpointnet/ prefix: {unprefixed}")
    if unresolved:
        fail(f"installed headers include files that are not installed: {unresolved}")
    n_src = sum(f.endswith((".hpp", ".h")) for _, _, fs in os.walk(src) for f in fs)
    print(f"public: {len(public)} headers; installed with what they include: {len(have)} of the {n_src} in src/")
    print(f"layout: {len(have)} headers under {inc}, {os.path.relpath(lib, prefix)}, {os.path.relpath(cfg, prefix)}")
    return cfg


def check_version_file(cmake, cfg, version, tmp):
    major, minor = (int(x) for x in version.split(".")[:2])
    # newer requests never match; an older minor matches only from 1.0 on (SameMinorVersion before, SameMajorVersion)
    cases = {version: True, f"{major}.{minor}": True, f"{major + 1}.0": False, f"{major}.{minor + 1}": False}
    if major == 0 and minor > 0:
        cases[f"0.{minor - 1}"] = False
    elif major > 0:
        cases[f"{major - 1}.0"] = False
        if minor > 0:
            cases[f"{major}.{minor - 1}"] = True
    script = os.path.join(tmp, "version_check.cmake")
    for req, expect in cases.items():
        parts = (req.split(".") + ["0", "0", "0"])[:4]
        with open(script, "w") as f:
            f.write(f'set(PACKAGE_FIND_VERSION "{req}")\n')
            for name, val in zip(["MAJOR", "MINOR", "PATCH", "TWEAK"], parts):
                f.write(f'set(PACKAGE_FIND_VERSION_{name} "{val}")\n')
            f.write(f'set(PACKAGE_FIND_VERSION_COUNT {len(req.split("."))})\nset(CMAKE_SIZEOF_VOID_P 8)\n')
            f.write(f'include("{os.path.join(os.path.dirname(cfg), "dpointnetConfigVersion.cmake")}")\n')
            f.write('message("compatible=${PACKAGE_VERSION_COMPATIBLE}")\n')
        out = subprocess.run([cmake, "-P", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
        got = "compatible=TRUE" in out
        if got != expect:
            fail(f"version file: request {req} against {version}: compatible {got}, expected {expect}\n{out}")
    print(f"version file: {sorted(cases.items())} as expected")


def expected_network(config_path):
    """Recurrent neurons and all edges of the SONATA network a config names, counted with h5py."""
    import h5py

    sim = json.load(open(config_path))
    circuit_path = sim["network"]
    circuit = json.load(open(circuit_path))
    base = os.path.dirname(circuit_path)
    manifest = {k: v for k, v in circuit.get("manifest", {}).items()}

    def expand(p):
        for _ in range(5):
            for k, v in manifest.items():
                p = p.replace(k, v)
        return os.path.normpath(os.path.join(base, p))

    neurons = 0
    for entry in circuit["networks"]["nodes"]:
        with open(expand(entry["node_types_file"])) as f:
            types = {int(r["node_type_id"]): r["model_type"] for r in csv.DictReader(f, delimiter=" ")}
        with h5py.File(expand(entry["nodes_file"]), "r") as h:
            for pop in h["nodes"].values():
                neurons += sum(1 for t in pop["node_type_id"][()] if types[int(t)] != "virtual")
    edges = 0
    for entry in circuit["networks"]["edges"]:
        with h5py.File(expand(entry["edges_file"]), "r") as h:
            edges += sum(len(pop["source_node_id"]) for pop in h["edges"].values())
    return neurons, edges


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cmake", required=True)
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--config", default="Release")
    ap.add_argument("--generator", default="Unix Makefiles")
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--c", required=True)
    ap.add_argument("--kokkos-prefix", required=True, help="Kokkos (and Kokkos Kernels) prefixes, ',' or ';' between")
    ap.add_argument("--mpi-driver", type=int, default=0)
    ap.add_argument("--cxx-flags", default="")
    ap.add_argument("--c-flags", default="")
    ap.add_argument("--exe-linker-flags", default="")
    ap.add_argument("--jobs", default="2")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args()
    a.source_dir, a.build_dir = os.path.abspath(a.source_dir), os.path.abspath(a.build_dir)
    version = project_version(a.source_dir)
    src_real, build_real = os.path.realpath(a.source_dir), os.path.realpath(a.build_dir)

    tmp = tempfile.mkdtemp(prefix="dpointnet-install-")
    try:
        prefix = os.path.join(tmp, "prefix")
        run([a.cmake, "--install", a.build_dir, "--prefix", prefix, "--config", a.config], "install")
        cfg = check_layout(prefix, a.source_dir, a.mpi_driver)

        out = run([os.path.join(prefix, "bin", "dpointnet"), "--version"], "installed dpointnet --version")
        if out.splitlines()[0] != f"dpointnet {version}":
            fail(f"installed dpointnet --version prints {out.splitlines()[0]!r}, CMakeLists.txt says {version}")

        check_version_file(a.cmake, cfg, version, tmp)

        kokkos_prefixes = [p for p in re.split(r"[;,]", a.kokkos_prefix) if p]
        consumer = os.path.join(tmp, "consumer-build")
        common = ["-G", a.generator, f"-DCMAKE_BUILD_TYPE={a.config}", f"-DCMAKE_CXX_COMPILER={a.cxx}",
                  f"-DCMAKE_PREFIX_PATH={';'.join([prefix] + kokkos_prefixes)}",
                  "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF", f"-DCMAKE_CXX_FLAGS={a.cxx_flags}",
                  f"-DCMAKE_EXE_LINKER_FLAGS={a.exe_linker_flags}"]
        out = run([a.cmake, "-S", os.path.join(HERE, "consumer"), "-B", consumer, f"-DCMAKE_C_COMPILER={a.c}",
                   f"-DCMAKE_C_FLAGS={a.c_flags}",
                   f"-DDPOINTNET_REQUIRED_VERSION={version}", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"] + common,
                  "consumer configure")
        m = re.search(r"consumer: dpointnet (\S+) from (\S+); Kokkos (\S+) from (\S+)", out)
        if not m:
            fail(f"no 'consumer:' line in the consumer's configure output:\n{out}")
        if m.group(1) != version or not os.path.realpath(m.group(2)).startswith(os.path.realpath(prefix) + os.sep):
            fail(f"consumer found dpointnet {m.group(1)} in {m.group(2)}, expected {version} in {prefix}")
        if not any(os.path.realpath(m.group(4)).startswith(os.path.realpath(p) + os.sep) for p in kokkos_prefixes):
            fail(f"consumer found Kokkos in {m.group(4)}, not in the given prefixes {kokkos_prefixes}")
        for c in json.load(open(os.path.join(consumer, "compile_commands.json"))):
            cmd = c.get("command", " ".join(c.get("arguments", [])))
            for tree in (src_real, build_real):
                if re.search(r"(-I|-isystem\s*)" + re.escape(tree) + r"(/|\s|$)", cmd):
                    fail(f"the consumer compiles with an include path into {tree}: {cmd}")
        run([a.cmake, "--build", consumer, "-j", a.jobs, "--config", a.config], "consumer build")

        data = os.path.join(a.source_dir, "tests", "data", "bmtk", "point_450glifs")
        dt, tstop = 0.5, 250.0
        sim = os.path.join(tmp, "sim.json")
        with open(sim, "w") as f:
            json.dump({"network": os.path.join(data, "config.circuit.json"), "run": {"dt": dt, "tstop": tstop},
                       "inputs": {"LGN_spikes": {"input_type": "spikes", "module": "sonata",
                                                 "input_file": os.path.join(data, "inputs", "lgn_spikes.h5"),
                                                 "node_set": "lgn"}},
                       "output": {"output_dir": os.path.join(tmp, "out")}}, f)
        exe = [p for p in (os.path.join(consumer, "consumer"), os.path.join(consumer, a.config, "consumer"))
               if os.path.exists(p)]
        if not exe:
            fail("the consumer executable was not built")
        env = dict(os.environ, OMP_PROC_BIND="false", OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
        out = run([exe[0], sim], "consumer run", env=env).strip()
        print(f"consumer: {out}")
        neurons, edges = expected_network(sim)
        want = (f"dpointnet {version} kokkos \\S+ dt {dt:g} tstop {tstop:g} steps {round(tstop / dt)} "
                f"neurons {neurons} edges {edges}")
        if not re.fullmatch(want, out):
            fail(f"consumer printed {out!r}, expected {want!r}")

        cxx_only = os.path.join(tmp, "cxx-only")
        os.makedirs(cxx_only)
        with open(os.path.join(cxx_only, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.16)\nproject(cxx_only LANGUAGES CXX)\n"
                    "find_package(dpointnet REQUIRED)\nif(NOT TARGET dpointnet::dpointnet)\n"
                    "  message(FATAL_ERROR \"no dpointnet::dpointnet\")\nendif()\n"
                    "message(STATUS \"cxx-only: ${dpointnet_EXECUTABLE}\")\n")
        out = run([a.cmake, "-S", cxx_only, "-B", os.path.join(cxx_only, "b")] + common, "C++-only configure")
        if f"cxx-only: {os.path.join(prefix, 'bin', 'dpointnet')}" not in out:
            fail(f"C++-only project: dpointnet_EXECUTABLE is not {prefix}/bin/dpointnet:\n{out}")

        # The caller's Kokkos_ROOT / CMAKE_PREFIX_PATH decide which Kokkos the package gets (the build's Kokkos is
        # only a last hint); another Kokkos version, or one without a backend of the build, is refused with a reason.
        kokkos_version = m.group(3)
        cases = [("99.0.0", "SERIAL", "-DKokkos_ROOT", "but Kokkos 99.0.0 was found"),
                 ("99.0.0", "SERIAL", "-DCMAKE_PREFIX_PATH", "but Kokkos 99.0.0 was found"),
                 (kokkos_version, "NO_SUCH_BACKEND", "-DKokkos_ROOT", "has no ")]
        for n, (kv, devices, how, reason) in enumerate(cases):
            other = os.path.join(tmp, f"other-kokkos-{n}")
            fake = os.path.join(other, "lib", "cmake", "Kokkos")
            os.makedirs(fake)
            with open(os.path.join(fake, "KokkosConfig.cmake"), "w") as f:
                f.write(f"set(Kokkos_VERSION {kv})\nset(Kokkos_DEVICES {devices})\n")
            with open(os.path.join(fake, "KokkosConfigVersion.cmake"), "w") as f:
                f.write(f"set(PACKAGE_VERSION {kv})\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n")
            args = [x for x in common if not x.startswith("-DCMAKE_PREFIX_PATH=")]
            args += [f"-DKokkos_ROOT={other}", f"-DCMAKE_PREFIX_PATH={prefix}"] if how == "-DKokkos_ROOT" else [
                f"-DCMAKE_PREFIX_PATH={prefix};{other}"]
            p = subprocess.run([a.cmake, "-S", cxx_only, "-B", os.path.join(other, "build")] + args,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if p.returncode == 0 or reason not in " ".join(p.stdout.split()):
                fail(f"a Kokkos {kv} with devices {devices} given by {how[2:]} was not refused ({reason!r}):\n"
                     f"{p.stdout}")
            print(f"refused: Kokkos {kv} ({devices}) given by {how[2:]}")
        print("install.consumer: PASS")
    finally:
        if a.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
