# Installable packages: troupe.pc for pkg-config, and a Debian package built
# by CPack (`cpack -G DEB` in the build tree, or the `package` target) holding
# what `cmake --install` installs: the headers, the static libraries, the
# CMake package files, troupe.pc, troupe-launch and troupe-sim.

# -- pkg-config ------------------------------------------------------------------
# The libraries are static: troupe.pc names each one, dependents first, then
# what they link (CAF and Boost.Context have no .pc files of their own).
set(TROUPE_PC_GPU_LIBS "")
if(TROUPE_HAVE_CUDA)
  string(APPEND TROUPE_PC_GPU_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -lcublas -lcudart")
endif()
if(TROUPE_HAVE_NCCL)
  get_filename_component(troupe_nccl_dir ${TROUPE_NCCL_LIBRARY} DIRECTORY)
  if(NOT troupe_nccl_dir STREQUAL CUDAToolkit_LIBRARY_DIR)
    string(APPEND TROUPE_PC_GPU_LIBS " -L${troupe_nccl_dir}")
  endif()
  string(APPEND TROUPE_PC_GPU_LIBS " -lnccl")
endif()
configure_file(cmake/troupe.pc.in ${CMAKE_BINARY_DIR}/troupe.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/troupe.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# -- Debian package -----------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME troupe-dev)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "troupe developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "TensorFlow's tf.distribute model in C++, as an actor system on CAF")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
# What a consumer's build needs: the static libraries' dependencies and the
# headers troupeConfig.cmake and troupe.pc find.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libcaf-dev (>= 0.17), libboost-context-dev, libeigen3-dev, zlib1g-dev, libssl-dev (>= 3), libucx-dev, pkg-config")
# CUDA and NCCL are no Debian packages here (/usr/local/cuda): a package built
# with them says so rather than depending on them.
if(TROUPE_HAVE_CUDA)
  set(CPACK_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION_SUMMARY}.
 Built with CUDA: programs linking it need the CUDA runtime, cuBLAS and NCCL (/usr/local/cuda).")
endif()
include(CPack)
