#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

#include <cuda.h>

namespace gleam::executor {

/// A handle type of a library served by generated calls: one 'handle' line
/// of its spec (interpose/spec/<lib>.spec), written into the library's
/// generated server code. Immutable, static storage.
struct library_handle_type {
  /// The C type, e.g. "curandGenerator_t" (messages).
  const char* name;
  /// Destroys handle `h` with the loaded library `api` (the library's api
  /// class); the library's status (0: success, as in every CUDA library).
  int32_t (*destroy)(void* api, void* h);
  /// Puts `h` on driver stream `stream`; the library's status. Null for
  /// types that have no stream.
  int32_t (*set_stream)(void* api, void* h, CUstream stream);
  /// A GPU of the session ('handle <type> device'): finds the library's
  /// handle of the GPU whose UUID text ("GPU-…") is `uuid` into `*h`; the
  /// library's status. Null for every other kind of handle.
  int32_t (*lookup)(void* api, const char* uuid, void** h) = nullptr;
};

/// Names a handle in a session's table: library (proto::LibraryCall::Library),
/// the type's index in its spec, and the id on the wire (a client-chosen id,
/// or the library's own pointer for address handles).
struct library_handle_key {
  int32_t library = 0;
  int32_t type = 0;
  uint64_t id = 0;

  bool operator<(const library_handle_key& o) const noexcept {
    return std::tie(library, type, id) < std::tie(o.library, o.type, o.id);
  }
};

/// One handle a generated call created in a session.
struct library_handle_entry {
  /// The library's handle.
  void* handle = nullptr;
  /// Its type; static storage.
  const library_handle_type* type = nullptr;
  /// The loaded library that made it (outlives the session).
  void* api = nullptr;
  /// A host-side object (curandCreateGeneratorHost): its results are host
  /// memory and it is never put on a stream.
  bool host = false;
  /// Client handle of the stream the app set (0: the legacy default stream).
  uint64_t stream = 0;
  /// The driver stream the library handle works on now; null until the first
  /// work on it (the library's own default, which the session never uses:
  /// the context's legacy stream is shared by every session).
  CUstream bound = nullptr;
  /// What a library's hand-written server code keeps about the handle
  /// (cuDNN: a backend descriptor's attributes, executor/cudnn_backend.cpp;
  /// cuFFT: a plan's shape in bytes, executor/cufft_plans.cpp); freed with
  /// the entry.
  std::shared_ptr<void> note;
};

/// A value handle (an integer the library made, e.g. a cufftHandle) as the
/// table keeps it: its value plus one, never null, even for the library's 0.
template <class T>
void* value_handle_ptr(T v) noexcept {
  return reinterpret_cast<void*>(static_cast<intptr_t>(v) + 1);
}

/// The library's value handle that value_handle_ptr() made `p` of.
template <class T>
T value_handle_of(void* p) noexcept {
  return static_cast<T>(reinterpret_cast<intptr_t>(p) - 1);
}

/// Every handle the generated calls of a session created, of every library
/// but cuBLAS (whose hand-written handles live in executor/blas.hpp).
using library_handle_table = std::map<library_handle_key, library_handle_entry>;

/// Host outputs of LibraryCalls kept for LibraryOutputRead, by the client's
/// hold id.
using library_held_outputs = std::map<uint64_t, std::string>;

/// What a generated call does with a handle it names (the runner orders
/// work by the session's stream rule only for `work`).
enum class handle_use {
  /// The call may issue work on the handle's stream.
  work,
  /// The call changes a setting of the handle (its stream).
  setting,
};

} // namespace gleam::executor
