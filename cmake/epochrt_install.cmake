# Installs the libraries, their headers and an exported package so that a
# host project can `find_package(epochrt)` and link `epochrt::epochrt`.
include(CMakePackageConfigHelpers)

install(TARGETS epochrt_messages epochrt_faults epochrt_runtime
                epochrt_persistence epochrt_actors epochrt
        EXPORT epochrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The public API (cmake/epochrt_public_api.cmake) and the headers it
# includes, each at its place in the tree under include/epochrt, the one
# directory the package exports being include/; beside them the short
# names and the umbrella. Nothing else: no actor, no codec, no detail/.
epochrt_public_header_closure(epochrt_installed_headers)
foreach(header ${epochrt_installed_headers})
  get_filename_component(folder ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${header}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/epochrt/${folder})
endforeach()
install(DIRECTORY ${EPOCHRT_PUBLIC_INCLUDE_DIR}/epochrt/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/epochrt
        FILES_MATCHING PATTERN "*.hpp")
install(EXPORT epochrtTargets NAMESPACE epochrt::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/epochrt)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/epochrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/epochrtConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/epochrt)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/epochrtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/epochrtConfig.cmake
              ${PROJECT_BINARY_DIR}/epochrtConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/epochrt_dependencies.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/epochrt)
