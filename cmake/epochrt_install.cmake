# Installs the libraries, their headers and an exported package so that a
# host project can `find_package(epochrt)` and link `epochrt::epochrt`.
include(CMakePackageConfigHelpers)

install(TARGETS epochrt_messages epochrt_faults epochrt_runtime
                epochrt_persistence epochrt_actors epochrt
        EXPORT epochrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# Headers keep their place in the tree under include/epochrt, the one
# directory the package exports being include/. Of actors/, only the public
# API (actors/api) is installed; no detail/ folder is, nor the strict JSON
# reader that messages/ shares with runtime/ and faults/ (nlohmann's json in
# its interface is no part of ours).
foreach(layer messages faults runtime persistence)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${layer}/
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/epochrt/${layer}
          FILES_MATCHING PATTERN "*.hpp" PATTERN "detail" EXCLUDE
                         PATTERN "schema" EXCLUDE
                         PATTERN "strict_json.hpp" EXCLUDE)
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/actors/api/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/epochrt/actors/api
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
