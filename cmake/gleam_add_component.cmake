# gleam_add_component(<name>
#     [SHARED]
#     SOURCES <files...>
#     [PROTOS <.proto files...>]
#     [DEPS <targets...>]            # public link dependencies
#     [PRIVATE_DEPS <targets...>])
#
# Declares the library target gleam_<name> for one folder. Headers are
# included by path from the repository root ("cache_store/chunk_store.hpp"),
# generated files from the build root. Warnings are on everywhere and are
# errors when GLEAM_WERROR is set.
function(gleam_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(GLEAM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(gleam_add_component name)
  cmake_parse_arguments(arg "SHARED" "" "SOURCES;PROTOS;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target gleam_${name})
  set(kind STATIC)
  if(arg_SHARED)
    set(kind SHARED)
  endif()
  set(generated)
  foreach(proto IN LISTS arg_PROTOS)
    get_filename_component(abs "${proto}" ABSOLUTE)
    file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${abs}")
    string(REGEX REPLACE "\\.proto$" "" stem "${rel}")
    set(out_cc "${PROJECT_BINARY_DIR}/${stem}.pb.cc")
    set(out_h "${PROJECT_BINARY_DIR}/${stem}.pb.h")
    add_custom_command(
      OUTPUT "${out_cc}" "${out_h}"
      COMMAND protobuf::protoc --proto_path=${PROJECT_SOURCE_DIR}
              --cpp_out=${PROJECT_BINARY_DIR} "${abs}"
      DEPENDS "${abs}" protobuf::protoc
      COMMENT "protoc ${rel}")
    list(APPEND generated "${out_cc}")
  endforeach()
  add_library(${target} ${kind} ${arg_SOURCES} ${generated})
  target_include_directories(${target} PUBLIC
    "${PROJECT_SOURCE_DIR}" "${PROJECT_BINARY_DIR}")
  target_link_libraries(${target} PUBLIC ${arg_DEPS} PRIVATE ${arg_PRIVATE_DEPS})
  if(generated)
    target_link_libraries(${target} PUBLIC protobuf::libprotobuf)
    # Generated code is not ours to lint.
    set_source_files_properties(${generated} PROPERTIES COMPILE_OPTIONS "-Wno-all;-Wno-extra")
  endif()
  gleam_set_warnings(${target})
endfunction()

# gleam_add_binary(<name> SOURCES <files...> DEPS <targets...>)
function(gleam_add_binary name)
  cmake_parse_arguments(arg "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE ${arg_DEPS})
  set_target_properties(${name} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/bin")
  gleam_set_warnings(${name})
endfunction()

# gleam_add_test(<name> SOURCES <files...> DEPS <targets...>)
#
# One Catch2 binary, two CTest entries: <name> runs every test case not
# hidden ([.], run by hand) and not
# tagged [gpu]; <name>_gpu runs the [gpu] ones, carries the CTest label
# "gpu" and reports "skipped" (exit code 77) on a machine without a GPU.
function(gleam_add_test name)
  cmake_parse_arguments(arg "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${arg_SOURCES})
  target_link_libraries(${name} PRIVATE gleam_test_support ${arg_DEPS})
  set_target_properties(${name} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY "${PROJECT_BINARY_DIR}/tests")
  gleam_set_warnings(${name})
  add_test(NAME ${name} COMMAND ${name} "~[gpu]~[.]")
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300
    ENVIRONMENT "GLEAM_BUILD_DIR=${PROJECT_BINARY_DIR};GLEAM_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
  add_test(NAME ${name}_gpu COMMAND ${name} "[gpu]")
  set_tests_properties(${name}_gpu PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT 900
    ENVIRONMENT "GLEAM_BUILD_DIR=${PROJECT_BINARY_DIR};GLEAM_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endfunction()
