# Locates every third-party dependency once and exposes it as an imported
# target named gleam::<dep>. Components link these targets only.

# --- CAF 0.17 ships no CMake package: find headers and libraries by hand.
find_path(GLEAM_CAF_INCLUDE_DIR caf/all.hpp)
find_library(GLEAM_CAF_CORE_LIBRARY NAMES caf_core)
find_library(GLEAM_CAF_IO_LIBRARY NAMES caf_io)
find_library(GLEAM_CAF_OPENSSL_LIBRARY NAMES caf_openssl)
if(NOT GLEAM_CAF_INCLUDE_DIR OR NOT GLEAM_CAF_CORE_LIBRARY OR NOT GLEAM_CAF_IO_LIBRARY)
  message(FATAL_ERROR "CAF 0.17 not found (caf/all.hpp, libcaf_core, libcaf_io). "
                      "Install it with: apt-get install libcaf-dev  (or run deploy/setup.sh)")
endif()
add_library(gleam::caf INTERFACE IMPORTED)
set_target_properties(gleam::caf PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${GLEAM_CAF_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${GLEAM_CAF_IO_LIBRARY};${GLEAM_CAF_CORE_LIBRARY}")
if(GLEAM_CAF_OPENSSL_LIBRARY)
  add_library(gleam::caf_openssl INTERFACE IMPORTED)
  set_target_properties(gleam::caf_openssl PROPERTIES
    INTERFACE_LINK_LIBRARIES "${GLEAM_CAF_OPENSSL_LIBRARY}")
endif()

find_package(Threads REQUIRED)
find_package(Protobuf REQUIRED)
find_package(fmt REQUIRED)
find_package(RocksDB CONFIG REQUIRED)
find_package(OpenSSL REQUIRED)

# gleam::<name>: a Debian library found by its header and its library,
# or a stop naming the package that installs it.
function(gleam_plain_library name header library package)
  string(TOUPPER "${name}" upper)
  find_path(GLEAM_${upper}_INCLUDE_DIR ${header})
  find_library(GLEAM_${upper}_LIBRARY NAMES ${library})
  if(NOT GLEAM_${upper}_INCLUDE_DIR OR NOT GLEAM_${upper}_LIBRARY)
    message(FATAL_ERROR "${name} not found. Install it with: apt-get install ${package}")
  endif()
  add_library(gleam::${name} INTERFACE IMPORTED)
  set_target_properties(gleam::${name} PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${GLEAM_${upper}_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${GLEAM_${upper}_LIBRARY}")
endfunction()

gleam_plain_library(xxhash xxhash.h xxhash libxxhash-dev)
gleam_plain_library(zstd zstd.h zstd libzstd-dev)

# --- CUDA 13 toolkit: headers for the interposer's types, nvcc for the test
# programs. The driver (libcuda.so.1) is never linked: the executor loads it
# at run time so that every binary also runs on machines without a GPU.
set(GLEAM_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA 13 toolkit root")
find_path(GLEAM_CUDA_INCLUDE_DIR cuda_runtime_api.h HINTS "${GLEAM_CUDA_ROOT}/include" NO_DEFAULT_PATH)
if(NOT GLEAM_CUDA_INCLUDE_DIR)
  message(FATAL_ERROR "CUDA 13 toolkit headers not found under ${GLEAM_CUDA_ROOT}/include. "
                      "Install the CUDA 13 toolkit at /usr/local/cuda or pass -DGLEAM_CUDA_ROOT=<dir>.")
endif()
add_library(gleam::cuda_headers INTERFACE IMPORTED)
set_target_properties(gleam::cuda_headers PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${GLEAM_CUDA_INCLUDE_DIR}")
find_program(GLEAM_NVCC nvcc HINTS "${GLEAM_CUDA_ROOT}/bin" NO_DEFAULT_PATH)

find_package(Python3 REQUIRED COMPONENTS Interpreter)

if(GLEAM_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()
