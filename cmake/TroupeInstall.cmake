# Exports troupe::troupe so that a consumer can find_package(troupe).
include(CMakePackageConfigHelpers)
set(TROUPE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/troupe)
install(EXPORT troupeTargets NAMESPACE troupe:: DESTINATION ${TROUPE_CMAKE_DIR})
# Where troupeConfig.cmake looks for libnccl first (troupe_core links it privately).
if(TROUPE_HAVE_NCCL)
  get_filename_component(TROUPE_NCCL_LIBRARY_DIR ${TROUPE_NCCL_LIBRARY} DIRECTORY)
endif()
configure_package_config_file(cmake/troupeConfig.cmake.in
  ${CMAKE_BINARY_DIR}/troupeConfig.cmake INSTALL_DESTINATION ${TROUPE_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/troupeConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/troupeConfig.cmake
              ${CMAKE_BINARY_DIR}/troupeConfigVersion.cmake
              cmake/FindCAF.cmake
        DESTINATION ${TROUPE_CMAKE_DIR})
