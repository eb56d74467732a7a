#include "interpose/blas/library_call.hpp"

namespace gleam::interpose::blas {

library_call::library_call(uint32_t id, const char* name, const handle_state& handle)
  : interpose::library_call(traits(), id, name,
                            handle.pointer_mode == CUBLAS_POINTER_MODE_DEVICE) {
  value(handle.id);
}

} // namespace gleam::interpose::blas
