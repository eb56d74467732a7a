#pragma once

#include "interpose/private_interface.h"

namespace gleam::interpose::driver {

/// The process's one client, inside Gleam's libcudart.so.13
/// (interpose/private_interface.h). Thread-safe; never null.
inline const gleam_private_interface& client() {
  static const gleam_private_interface* x = gleam_private_interface_v1();
  return *x;
}

/// Whether the client's table has the member at byte offset `offset` (a
/// libcudart.so.13 older than this library has fewer).
inline bool client_has(size_t offset) {
  return client().size >= offset + sizeof(void*);
}

} // namespace gleam::interpose::driver
