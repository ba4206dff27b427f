# Finds epochrt's dependencies and gives each one a target. Used both by the
# build and, through epochrtConfig.cmake, by projects that find_package(epochrt).
include(CMakeFindDependencyMacro)

find_package(Threads REQUIRED)

# CAF 0.17 ships neither a CMake config nor a .pc file.
if(NOT TARGET CAF::core)
  find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
  find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
  find_library(CAF_IO_LIBRARY caf_io REQUIRED)
  add_library(CAF::core UNKNOWN IMPORTED)
  set_target_properties(CAF::core PROPERTIES
    IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
  add_library(CAF::io UNKNOWN IMPORTED)
  set_target_properties(CAF::io PROPERTIES
    IMPORTED_LOCATION "${CAF_IO_LIBRARY}"
    INTERFACE_LINK_LIBRARIES CAF::core)
endif()
# TLS between master and node daemons.
if(NOT TARGET CAF::openssl)
  find_library(CAF_OPENSSL_LIBRARY caf_openssl REQUIRED)
  add_library(CAF::openssl UNKNOWN IMPORTED)
  set_target_properties(CAF::openssl PROPERTIES
    IMPORTED_LOCATION "${CAF_OPENSSL_LIBRARY}"
    INTERFACE_LINK_LIBRARIES CAF::io)
endif()

# Cap'n Proto's config probes libatomic with check_library_exists, which
# compiles C: in a project that enables only CXX it fails, and says
# "libatomic not found". Probe the same thing with the C++ compiler first;
# the config skips its check when FOUND_LIBATOMIC is already defined.
if(NOT DEFINED FOUND_LIBATOMIC)
  get_property(_epochrt_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(NOT "C" IN_LIST _epochrt_languages)
    include(CheckCXXSourceCompiles)
    include(CMakePushCheckState)
    cmake_push_check_state(RESET)
    set(CMAKE_REQUIRED_LIBRARIES atomic)
    set(CMAKE_REQUIRED_QUIET ON)
    check_cxx_source_compiles("int main() { return 0; }" FOUND_LIBATOMIC)
    cmake_pop_check_state()
  endif()
  unset(_epochrt_languages)
endif()
find_dependency(CapnProto CONFIG)

# Debian's leveldb config links a plain `snappy` without pulling in its
# package; give it a target of its own before asking for leveldb.
if(NOT TARGET snappy)
  find_library(SNAPPY_LIBRARY snappy REQUIRED)
  add_library(snappy UNKNOWN IMPORTED)
  set_target_properties(snappy PROPERTIES IMPORTED_LOCATION "${SNAPPY_LIBRARY}")
endif()
find_dependency(leveldb CONFIG)

find_dependency(spdlog CONFIG)

if(NOT TARGET xxhash::xxhash)
  find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
  find_library(XXHASH_LIBRARY xxhash REQUIRED)
  add_library(xxhash::xxhash UNKNOWN IMPORTED)
  set_target_properties(xxhash::xxhash PROPERTIES
    IMPORTED_LOCATION "${XXHASH_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${XXHASH_INCLUDE_DIR}")
endif()

find_dependency(nlohmann_json CONFIG)

# HMAC and nonces for the node daemons' authentication; TLS certificates.
find_dependency(OpenSSL)
