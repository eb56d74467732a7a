// cuSPARSE's traits for the generated stubs and the client side of the
// spec's pointer-mode check.
#include "interpose/cusparse/library.hpp"

#include "actors/proto/ops.pb.h"
#include "interpose/cusparse_export.hpp"

namespace gleam::interpose::cusparse {

cusparseStatus_t from_cuda(cudaError_t x) noexcept {
  static constexpr cuda_error_statuses statuses{
    CUSPARSE_STATUS_SUCCESS,          CUSPARSE_STATUS_NOT_INITIALIZED,
    CUSPARSE_STATUS_ALLOC_FAILED,     CUSPARSE_STATUS_INVALID_VALUE,
    CUSPARSE_STATUS_NOT_INITIALIZED,  CUSPARSE_STATUS_NOT_SUPPORTED,
    CUSPARSE_STATUS_EXECUTION_FAILED, CUSPARSE_STATUS_INTERNAL_ERROR,
  };
  return static_cast<cusparseStatus_t>(status_of_cuda(x, statuses));
}

const library_traits traits{
  proto::LibraryCall::CUSPARSE,
  "cuSPARSE",
  CUSPARSE_STATUS_SUCCESS,
  CUSPARSE_STATUS_INVALID_VALUE,
  CUSPARSE_STATUS_NOT_INITIALIZED,
  CUSPARSE_STATUS_ALLOC_FAILED,
  CUSPARSE_STATUS_NOT_SUPPORTED,
  CUSPARSE_STATUS_INTERNAL_ERROR,
  [](cudaError_t x) noexcept { return static_cast<int32_t>(from_cuda(x)); },
};

bool cusparse_host_scalars(const client_view&, cusparseHandle_t h) noexcept {
  // The generated stub found the handle live before its checks.
  if (h->pointer_mode == CUSPARSE_POINTER_MODE_HOST)
    return true;
  report_library_unsupported("cuSPARSE in CUSPARSE_POINTER_MODE_DEVICE",
                             "alpha and beta travel as host values; set "
                             "CUSPARSE_POINTER_MODE_HOST");
  return false;
}

} // namespace gleam::interpose::cusparse
