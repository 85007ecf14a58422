#!/usr/bin/env python3
"""packaging.spack_recipe: spack/package.py without Spack (none is installed here; the recipe is NOT verified
against a real Spack). The recipe must byte-compile, load with minimal stand-ins for Spack's classes and
directives, declare the expected variants and dependencies, with Kokkos getting the same +openmp/+cuda/
cuda_arch, and its cmake_args must map the variants to options that CMakeLists.txt really has."""
import argparse
import importlib.util
import os
import py_compile
import re
import sys
import tempfile
import types

sys.dont_write_bytecode = True

RECORD = {"depends_on": [], "variant": [], "conflicts": [], "version": []}
CUDA_ARCHS = ("50", "60", "70", "80", "86", "90", "90a")


def fail(msg):
    print(f"packaging.spack_recipe: FAIL: {msg}", flush=True)
    sys.exit(1)


class Prefix(str):
    @property
    def include(self):
        return Prefix(os.path.join(self, "include"))


class Dep:
    def __init__(self, name):
        self.prefix = Prefix(f"/spack/opt/{name}")
        self.kokkos_cxx = f"/spack/opt/{name}/bin/nvcc_wrapper"


class FakeSpec:
    """Only what the recipe's cmake_args use: satisfies('+a~b'), variants, spec[dep]."""

    def __init__(self, variants):
        self.variants = variants

    def satisfies(self, s):
        for sign, name in re.findall(r"([+~])(\w+)", s):
            if bool(self.variants.get(name, False)) != (sign == "+"):
                return False
        return True

    def __getitem__(self, name):
        return Dep(name)


def install_stubs():
    spack = types.ModuleType("spack")
    pkg = types.ModuleType("spack.package")

    def directive(kind):
        def record(*args, **kwargs):
            RECORD[kind].append((args, kwargs))

        return record

    class CMakePackage:
        def define(self, name, value):
            kind = "BOOL" if isinstance(value, bool) else "STRING"
            value = ("ON" if value else "OFF") if isinstance(value, bool) else value
            return f"-D{name}:{kind}={value}"

        def define_from_variant(self, name, variant):
            return self.define(name, self.spec.variants[variant])

        def __getitem__(self, name):
            return Dep(name)

    class CudaPackage:
        cuda_arch_values = CUDA_ARCHS

    pkg.CMakePackage, pkg.CudaPackage = CMakePackage, CudaPackage
    for kind in ("depends_on", "variant", "conflicts", "version"):
        setattr(pkg, kind, directive(kind))
    pkg.maintainers = pkg.license = lambda *a, **k: None
    spack.package = pkg
    sys.modules["spack"], sys.modules["spack.package"] = spack, pkg
    return CMakePackage, CudaPackage


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--recipe", required=True)
    ap.add_argument("--cmakelists", required=True)
    a = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        py_compile.compile(a.recipe, cfile=os.path.join(tmp, "package.pyc"), doraise=True)
    cmake_pkg, cuda_pkg = install_stubs()
    spec = importlib.util.spec_from_file_location("dpointnet_recipe", a.recipe)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cls = getattr(mod, "Dpointnet", None)
    if cls is None or not issubclass(cls, cmake_pkg) or not issubclass(cls, cuda_pkg):
        fail("no class Dpointnet(CMakePackage, CudaPackage)")

    variants = {args[0]: kw.get("default") for args, kw in RECORD["variant"]}
    for v in ("mpi", "openmp"):
        if v not in variants:
            fail(f"no variant {v!r} (variants: {sorted(variants)})")
    deps = [(args[0], kw.get("when")) for args, kw in RECORD["depends_on"]]
    names = {re.match(r"[\w-]+", d).group() for d, _ in deps}
    for need in ("kokkos", "hdf5", "cli11", "nlohmann-json", "random123", "spdlog", "fmt", "mpi", "cmake"):
        if need not in names:
            fail(f"no depends_on({need!r})")
    for want in [("kokkos+openmp", "+openmp"), ("kokkos~openmp", "~openmp"), ("kokkos~cuda", "~cuda"),
                 ("mpi", "+mpi")] + [(f"kokkos+cuda cuda_arch={x}", f"+cuda cuda_arch={x}") for x in CUDA_ARCHS]:
        if want not in deps:
            fail(f"no depends_on({want[0]!r}, when={want[1]!r})")
    if not any(d.startswith("kokkos+cuda") and w == "+cuda" for d, w in deps):
        fail("no depends_on('kokkos+cuda...', when='+cuda')")

    cmake_text = open(a.cmakelists).read()
    options = set(re.findall(r"^option\((\w+)", cmake_text, re.M))
    for combo in ({"mpi": True, "openmp": True, "native": False, "cuda": False, "kokkos_kernels": False},
                  {"mpi": False, "openmp": False, "native": True, "cuda": True, "kokkos_kernels": True}):
        pkg = cls.__new__(cls)
        pkg.spec = FakeSpec(combo)
        pkg.run_tests = False
        args = pkg.cmake_args()
        defs = dict(re.fullmatch(r"-D(\w+):\w+=(.*)", x).groups() for x in args)
        for name in defs:
            if name.startswith("DPOINTNET_") and name not in options:
                fail(f"cmake_args sets {name}, which CMakeLists.txt has no option() for")
        if defs.get("DPOINTNET_ENABLE_MPI") != ("ON" if combo["mpi"] else "OFF"):
            fail(f"{combo}: DPOINTNET_ENABLE_MPI={defs.get('DPOINTNET_ENABLE_MPI')}")
        if defs.get("DPOINTNET_NATIVE_ARCH") != ("ON" if combo["native"] else "OFF"):
            fail(f"{combo}: DPOINTNET_NATIVE_ARCH={defs.get('DPOINTNET_NATIVE_ARCH')}")
        if defs.get("Kokkos_ROOT") != Dep("kokkos").prefix:
            fail(f"{combo}: Kokkos_ROOT={defs.get('Kokkos_ROOT')}")
        if combo["cuda"] != (defs.get("CMAKE_CXX_COMPILER") == Dep("kokkos").kokkos_cxx):
            fail(f"{combo}: CMAKE_CXX_COMPILER={defs.get('CMAKE_CXX_COMPILER')} (Kokkos' nvcc_wrapper with +cuda)")
        for name in ("RANDOM123_INCLUDE_DIR", "KokkosKernels"):
            if name not in cmake_text:
                fail(f"cmake_args refers to {name}, which CMakeLists.txt does not use")
        print(f"{combo}: {' '.join(args)}")
    print("packaging.spack_recipe: PASS (stand-ins only; not verified against a real Spack)")


if __name__ == "__main__":
    main()
