# The public API: the headers a host program includes. This list is the
# API. Each header gets a short name, <epochrt/NAME.hpp>, whatever folder it
# lives in; <epochrt/epochrt.hpp> includes them all. `cmake --install`
# installs these headers and the headers they include, and nothing else
# (test/package checks that every installed header is reachable from
# <epochrt/epochrt.hpp>). A header added here must not include a private
# one (a detail/ folder, actors/core, actors/remote).
set(EPOCHRT_PUBLIC_HEADERS
  # Values: tensors, job definitions, names, checkpoint records.
  messages/tensor.hpp
  messages/job_def.hpp
  messages/names.hpp
  messages/checkpoint_records.hpp
  # Fault plans (docs/fault-plans.md).
  faults/fault_errc.hpp
  faults/fault_plan.hpp
  faults/fault_injector.hpp
  # Jobs, ops and workspaces.
  runtime/runtime_errc.hpp
  runtime/job.hpp
  runtime/job_file.hpp
  runtime/op_registry.hpp
  runtime/op_context.hpp
  runtime/builtin_ops.hpp
  runtime/workspace.hpp
  runtime/epoch_limiter.hpp
  # Checkpoint directories.
  persistence/persistence_errc.hpp
  persistence/db_name.hpp
  persistence/checkpoint_listing.hpp
  persistence/metadata_handler.hpp
  persistence/commit_record.hpp
  persistence/record_keeper.hpp
  persistence/file_metadata_handler.hpp
  # Running jobs: sessions, job runner, checkpoint managers, daemons.
  actors/api/actors_errc.hpp
  actors/api/error_codes.hpp
  actors/api/configure.hpp
  actors/api/logging.hpp
  actors/api/session.hpp
  actors/api/local_session.hpp
  actors/api/distributed_session.hpp
  actors/api/node_address.hpp
  actors/api/network.hpp
  actors/api/tls_options.hpp
  actors/api/secret_file.hpp
  actors/api/node_server.hpp
  actors/api/job_runner.hpp
  actors/api/stats_json_writer.hpp
  actors/api/stop_signals.hpp
  actors/api/epoch_observer.hpp
  actors/api/job_events.hpp
  actors/api/basic_checkpoint_manager.hpp
  actors/api/checkpoint_manager.hpp
  actors/api/checkpoint_contents.hpp
  actors/api/multi_node_checkpoint_manager.hpp
  actors/api/upload_task_group_builder.hpp)

# Where the short names and the umbrella are generated; on the public
# include path in the build, installed as include/epochrt/.
set(EPOCHRT_PUBLIC_INCLUDE_DIR ${PROJECT_BINARY_DIR}/public)

# Writes <epochrt/NAME.hpp> for every public header, and <epochrt/epochrt.hpp>,
# and removes the short name of a header no longer public (the directory is
# installed as it is). configure_file rewrites a file only when it changes:
# no rebuild otherwise.
function(epochrt_generate_public_headers)
  set(umbrella_includes "")
  set(generated ${EPOCHRT_PUBLIC_INCLUDE_DIR}/epochrt/epochrt.hpp)
  foreach(header ${EPOCHRT_PUBLIC_HEADERS})
    get_filename_component(name ${header} NAME)
    list(APPEND generated ${EPOCHRT_PUBLIC_INCLUDE_DIR}/epochrt/${name})
  endforeach()
  file(GLOB existing ${EPOCHRT_PUBLIC_INCLUDE_DIR}/epochrt/*)
  foreach(file ${existing})
    if(NOT file IN_LIST generated)
      file(REMOVE ${file})
    endif()
  endforeach()
  foreach(header ${EPOCHRT_PUBLIC_HEADERS})
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${header})
      message(FATAL_ERROR "public header ${header} does not exist")
    endif()
    get_filename_component(name ${header} NAME)
    set(EPOCHRT_FORWARDED ${header})
    configure_file(${PROJECT_SOURCE_DIR}/cmake/forwarding_header.hpp.in
                   ${EPOCHRT_PUBLIC_INCLUDE_DIR}/epochrt/${name} @ONLY)
    string(APPEND umbrella_includes "#include <epochrt/${name}>\n")
  endforeach()
  set(EPOCHRT_UMBRELLA_INCLUDES ${umbrella_includes})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/epochrt.hpp.in
                 ${EPOCHRT_PUBLIC_INCLUDE_DIR}/epochrt/epochrt.hpp @ONLY)
endfunction()

# Sets `out` to the public headers and every epochrt header they include,
# transitively, as paths relative to the source tree. CMake reruns when one
# of them changes, so a new include is installed too.
function(epochrt_public_header_closure out)
  set(todo ${EPOCHRT_PUBLIC_HEADERS})
  set(found "")
  while(todo)
    list(POP_FRONT todo header)
    if(header IN_LIST found)
      continue()
    endif()
    list(APPEND found ${header})
    set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY
                 CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${header})
    file(STRINGS ${PROJECT_SOURCE_DIR}/${header} lines
         REGEX "^[ \t]*#[ \t]*include[ \t]*<epochrt/")
    foreach(line ${lines})
      string(REGEX REPLACE ".*<epochrt/([^>]+)>.*" "\\1" included "${line}")
      list(APPEND todo ${included})
    endforeach()
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
