# Spack recipe for dpointnet (docs/building.md, "Spack"). Copy this directory's package.py into a Spack package
# repository as packages/dpointnet/package.py (or use `spack repo create`, see the docs).
#
# NOT VERIFIED AGAINST A REAL SPACK: the project's tests only compile this file and load it with stand-ins for
# Spack's classes and directives (tests/install/test_spack_recipe.py), checking that it maps its variants to the
# project's CMake options. Written for Spack 0.22 and newer (language virtuals "c"/"cxx"; Spack >= 1.0 keeps the
# build systems in spack_repo.builtin, imported below when present).
import re

try:  # Spack >= 1.0: build systems live in the builtin package repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
except ImportError:  # Spack 0.x: they come with spack.package
    from spack.package import CMakePackage, CudaPackage

from spack.package import *  # noqa: F401,F403  (version, variant, depends_on, conflicts, ...)


class Dpointnet(CMakePackage, CudaPackage):
    """Simulator and trainer (backpropagation through time) for GLIF point-neuron networks read from SONATA files,
    written in Kokkos for CUDA GPUs and OpenMP CPUs, with sample-parallel training over MPI."""

    homepage = "https://example.invalid/dpointnet"
    # No public repository is recorded in the project: set `git` to your clone's URL, or build a local clone with
    # `spack develop --path /path/to/dpointnet dpointnet@main` (docs/building.md).
    git = "https://example.invalid/dpointnet.git"

    version("main", branch="main")

    variant("mpi", default=True, description="Build dpointnet-mpi, the sample-parallel MPI driver")
    variant("openmp", default=True, description="Kokkos OpenMP backend (the host execution space)")
    variant("native", default=False, description="Host code for the build machine's vector ISA (-march=native)")
    variant("kokkos_kernels", default=False, description="Link Kokkos Kernels (only the SpMV benchmark uses it)")

    depends_on("c", type="build")  # CMake's FindHDF5 needs C
    depends_on("cxx", type="build")
    depends_on("cmake@3.16:", type="build")

    depends_on("kokkos@3.4:")
    depends_on("kokkos+openmp", when="+openmp")
    depends_on("kokkos~openmp", when="~openmp")
    depends_on("kokkos~cuda", when="~cuda")
    # A CUDA Kokkos compiles through its nvcc_wrapper (+wrapper), which becomes this build's C++ compiler too.
    depends_on("kokkos+cuda+wrapper", when="+cuda")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={_arch}", when=f"+cuda cuda_arch={_arch}")
    conflicts("+cuda", when="cuda_arch=none", msg="name the GPU: cuda_arch=90 (H100/H200), 80 (A100), ...")
    # run.precision float64 uses double atomics (compute capability 6.0 or newer).
    for _arch in CudaPackage.cuda_arch_values:
        if int(re.match(r"\d+", _arch).group()) < 60:
            conflicts(f"cuda_arch={_arch}", when="+cuda", msg="float64 atomics need compute capability 6.0 or newer")
    # Kokkos 4.6 does not compile against CUDA 13 without a patch (docs/building.md).
    conflicts("^kokkos@:4.6", when="+cuda ^cuda@13:", msg="with CUDA 13 use Kokkos 4.7 or newer")
    depends_on("kokkos-kernels", when="+kokkos_kernels")
    depends_on("kokkos-kernels+openmp", when="+kokkos_kernels+openmp")
    for _arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos-kernels+cuda cuda_arch={_arch}", when=f"+kokkos_kernels+cuda cuda_arch={_arch}")

    depends_on("hdf5@1.10:")
    depends_on("cli11@2.1:")
    depends_on("nlohmann-json@3:")
    depends_on("random123")
    depends_on("spdlog")
    depends_on("fmt")
    depends_on("mpi", when="+mpi")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("DPOINTNET_ENABLE_MPI", "mpi"),
            self.define_from_variant("DPOINTNET_NATIVE_ARCH", "native"),
            # The test suite needs GoogleTest, Python with numpy/h5py/torch and mpirun; benchmarks are not installed.
            self.define("DPOINTNET_ENABLE_TESTS", False),
            self.define("DPOINTNET_ENABLE_BENCHMARKS", False),
            self.define("DPOINTNET_FUZZ_REPLAY", False),
            self.define("Kokkos_ROOT", spec["kokkos"].prefix),
            self.define("RANDOM123_INCLUDE_DIR", spec["random123"].prefix.include),
        ]
        if spec.satisfies("+kokkos_kernels"):
            args.append(self.define("KokkosKernels_ROOT", spec["kokkos-kernels"].prefix))
        else:
            args.append(self.define("CMAKE_DISABLE_FIND_PACKAGE_KokkosKernels", True))
        if spec.satisfies("+cuda"):
            # kokkos_cxx: Kokkos' nvcc_wrapper, as the kokkos package gives it to its dependents
            args.append(self.define("CMAKE_CXX_COMPILER", self["kokkos"].kokkos_cxx))
        return args
