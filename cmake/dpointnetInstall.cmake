# Install rules and the exported CMake package, included from the top-level CMakeLists.txt once the targets exist.
#
#   <prefix>/bin/dpointnet, <prefix>/bin/dpointnet-mpi (when built)
#   <prefix>/lib/libdpointnet_core.a                     (CMAKE_INSTALL_LIBDIR)
#   <prefix>/include/dpointnet/<layer>/<header>.hpp       (the public headers of cmake/public_headers.txt and what
#                                                          they include; consumers write #include <dpointnet/...>)
#   <prefix>/lib/cmake/dpointnet/dpointnet{Config,ConfigVersion,Targets*}.cmake
#
# find_package(dpointnet) gives dpointnet::dpointnet (the library with its include directories, compile definitions,
# options and dependencies) and finds Kokkos, Kokkos Kernels (when the build used it), HDF5, Random123,
# nlohmann_json, fmt and spdlog again (cmake/dpointnetConfig.cmake.in). The library never links MPI, so the package
# does not look for it. docs/building.md describes its use; tests/install/test_install.py tests it.
include(CMakePackageConfigHelpers)

set(DPOINTNET_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/dpointnet"
    CACHE STRING "Where the dpointnet CMake package files go, relative to the install prefix")
mark_as_advanced(DPOINTNET_INSTALL_CMAKEDIR)

set_target_properties(dpointnet_core PROPERTIES EXPORT_NAME dpointnet)
install(TARGETS dpointnet_core EXPORT dpointnetTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(_dp_install_executables dpointnet)
if(TARGET dpointnet-mpi)
  list(APPEND _dp_install_executables dpointnet-mpi)
endif()
install(TARGETS ${_dp_install_executables} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The public headers (cmake/public_headers.txt) and every header they include, transitively, keep their path below
# include/dpointnet; the rest of src/ (template bodies in detail/, the commands' internals, MPI) is not installed.
file(STRINGS "${PROJECT_SOURCE_DIR}/cmake/public_headers.txt" _dp_todo REGEX "^[a-z]")
set(_dp_headers "")
while(_dp_todo)
  list(POP_FRONT _dp_todo _h)
  if(_h IN_LIST _dp_headers)
    continue()
  endif()
  if(NOT EXISTS "${PROJECT_SOURCE_DIR}/src/${_h}")
    message(FATAL_ERROR "cmake/public_headers.txt: src/${_h} does not exist")
  endif()
  list(APPEND _dp_headers "${_h}")
  file(STRINGS "${PROJECT_SOURCE_DIR}/src/${_h}" _dp_includes REGEX "^[ \t]*#[ \t]*include[ \t]+\"dpointnet/")
  foreach(_line ${_dp_includes})
    string(REGEX REPLACE ".*\"dpointnet/([^\"]+)\".*" "\\1" _dep "${_line}")
    list(APPEND _dp_todo "${_dep}")
  endforeach()
endwhile()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/cmake/public_headers.txt")
foreach(_h ${_dp_headers})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/src/${_h}")
  get_filename_component(_dir "${_h}" DIRECTORY)
  install(FILES "${PROJECT_SOURCE_DIR}/src/${_h}" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/dpointnet/${_dir}")
endforeach()

install(EXPORT dpointnetTargets NAMESPACE dpointnet:: DESTINATION ${DPOINTNET_INSTALL_CMAKEDIR})

# Values the config file checks or re-finds with. Kokkos_DIR and the others are only last-resort hints: the
# caller's Kokkos_ROOT / CMAKE_PREFIX_PATH are searched first.
set(DPOINTNET_CONFIG_KOKKOS_VERSION "${Kokkos_VERSION}")
set(DPOINTNET_CONFIG_KOKKOS_DIR "${Kokkos_DIR}")
set(DPOINTNET_CONFIG_KOKKOS_BACKENDS "${_dp_backends}")
if(KokkosKernels_FOUND)
  set(DPOINTNET_CONFIG_KOKKOSKERNELS ON)
  set(DPOINTNET_CONFIG_KOKKOSKERNELS_DIR "${KokkosKernels_DIR}")
else()
  set(DPOINTNET_CONFIG_KOKKOSKERNELS OFF)
  set(DPOINTNET_CONFIG_KOKKOSKERNELS_DIR "")
endif()
set(DPOINTNET_CONFIG_HDF5_LIBRARIES "${HDF5_C_LIBRARIES}")
set(DPOINTNET_CONFIG_HDF5_INCLUDE_DIRS ${HDF5_C_INCLUDE_DIRS} ${HDF5_INCLUDE_DIRS})
list(REMOVE_DUPLICATES DPOINTNET_CONFIG_HDF5_INCLUDE_DIRS)
set(DPOINTNET_CONFIG_RANDOM123_INCLUDE_DIR "${RANDOM123_INCLUDE_DIR}")
if(TARGET dpointnet-mpi)
  set(DPOINTNET_CONFIG_MPI_DRIVER ON)
else()
  set(DPOINTNET_CONFIG_MPI_DRIVER OFF)
endif()

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/dpointnetConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/dpointnetConfig.cmake"
  INSTALL_DESTINATION ${DPOINTNET_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR)
# Before 1.0 a minor release may break the API (semantic versioning), so 0.x requests match the same 0.x only.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_dp_compat SameMinorVersion)
else()
  set(_dp_compat SameMajorVersion)
endif()
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/dpointnetConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_dp_compat})
install(FILES "${PROJECT_BINARY_DIR}/cmake/dpointnetConfig.cmake"
        "${PROJECT_BINARY_DIR}/cmake/dpointnetConfigVersion.cmake"
        DESTINATION ${DPOINTNET_INSTALL_CMAKEDIR})
