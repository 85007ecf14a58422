# Install and packaging (docs/building.md), included from tests/CMakeLists.txt:
#   install.consumer        cmake --install into a temporary prefix, a consumer project built against it and run
#   cli.version             dpointnet --version against CMakeLists.txt's project() version and the configure results
#   packaging.spack_recipe  spack/package.py compiles, loads with stand-ins for Spack, maps variants to CMake options
set(_dp_install_py /usr/bin/python3)

# The prefixes of the Kokkos (and Kokkos Kernels) the build used, as a caller would give them in CMAKE_PREFIX_PATH.
# Lists go to the scripts comma-separated (add_test would split a ";" list into arguments). The consumer gets the
# build's compiler flags (a sanitizer build's library needs its runtime in the consumer too).
set(_dp_kokkos_prefixes "")
foreach(_dir "${Kokkos_DIR}" "${KokkosKernels_DIR}")
  if(_dir)
    string(REGEX REPLACE "/(lib|lib64|lib/[^/]+|share)/cmake/[^/]+/?$" "" _p "${_dir}")
    list(APPEND _dp_kokkos_prefixes "${_p}")
  endif()
endforeach()
list(REMOVE_DUPLICATES _dp_kokkos_prefixes)
string(REPLACE ";" "," _dp_kokkos_prefixes_arg "${_dp_kokkos_prefixes}")
if(TARGET dpointnet-mpi)
  set(_dp_has_mpi_driver 1)
  set(_dp_mpi_bin_arg "--mpi-bin=$<TARGET_FILE:dpointnet-mpi>" "--mpiexec=${MPIEXEC_EXECUTABLE}")
else()
  set(_dp_has_mpi_driver 0)
endif()
string(REPLACE ";" "," _dp_backends_arg "${_dp_backends}")

add_test(NAME install.consumer
         COMMAND ${_dp_install_py} ${CMAKE_CURRENT_SOURCE_DIR}/install/test_install.py --cmake ${CMAKE_COMMAND}
                 --build-dir ${CMAKE_BINARY_DIR} --source-dir ${CMAKE_SOURCE_DIR} --config $<CONFIG>
                 --generator ${CMAKE_GENERATOR} --cxx ${CMAKE_CXX_COMPILER} --c ${CMAKE_C_COMPILER}
                 --kokkos-prefix "${_dp_kokkos_prefixes_arg}" --mpi-driver ${_dp_has_mpi_driver}
                 "--cxx-flags=${CMAKE_CXX_FLAGS}" "--c-flags=${CMAKE_C_FLAGS}"
                 "--exe-linker-flags=${CMAKE_EXE_LINKER_FLAGS}")
add_test(NAME cli.version
         COMMAND ${_dp_install_py} ${CMAKE_CURRENT_SOURCE_DIR}/install/test_version.py --bin $<TARGET_FILE:dpointnet>
                 --source-dir ${CMAKE_SOURCE_DIR} --kokkos-version ${Kokkos_VERSION}
                 --kokkos-backends "${_dp_backends_arg}" --mpi-driver ${_dp_has_mpi_driver} ${_dp_mpi_bin_arg})
add_test(NAME packaging.spack_recipe
         COMMAND ${_dp_install_py} ${CMAKE_CURRENT_SOURCE_DIR}/install/test_spack_recipe.py
                 --recipe ${CMAKE_SOURCE_DIR}/spack/package.py --cmakelists ${CMAKE_SOURCE_DIR}/CMakeLists.txt)
set_tests_properties(install.consumer cli.version packaging.spack_recipe PROPERTIES
  ENVIRONMENT "OMP_NUM_THREADS=1;OMP_PROC_BIND=false" TIMEOUT 300 LABELS install)
