#include "interpose/blas/library_call.hpp"

#include <cstring>
#include <string>

#include "actors/proto/ops.pb.h"

namespace gleam::interpose::blas {

library_call::library_call(uint32_t id, const char* name, const handle_state& handle)
  : id_(id), name_(name), device_mode_(handle.pointer_mode == CUBLAS_POINTER_MODE_DEVICE) {
  args_.value(handle.id);
}

cublasStatus_t library_call::scalar(const void* p, uint64_t bytes, bool send, void* back) {
  if (bytes == 0 || bytes > max_scalar_bytes) {
    report_unsupported(name_, "a scalar of a data type whose size Gleam does not know");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (device_mode_) {
    args_.address(p);
    return CUBLAS_STATUS_SUCCESS;
  }
  return host(p, bytes, send, back);
}

cublasStatus_t library_call::host(const void* p, uint64_t bytes, bool send, void* back) {
  if (bytes == 0 || bytes > max_scalar_bytes) {
    report_unsupported(name_, "a host parameter of a size Gleam does not send");
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (p == nullptr)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (send)
    args_.bytes(p, bytes);
  if (back != nullptr)
    outputs_.emplace_back(back, bytes);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t library_call::scalar_in(const void* p, uint64_t bytes) {
  return scalar(p, bytes, true, nullptr);
}

cublasStatus_t library_call::scalar_out(void* p, uint64_t bytes) {
  return scalar(p, bytes, false, p);
}

cublasStatus_t library_call::scalar_inout(void* p, uint64_t bytes) {
  return scalar(p, bytes, true, p);
}

cublasStatus_t library_call::host_in(const void* p, uint64_t bytes) {
  return host(p, bytes, true, nullptr);
}

cublasStatus_t library_call::host_out(void* p, uint64_t bytes) {
  return host(p, bytes, false, p);
}

cublasStatus_t library_call::host_inout(void* p, uint64_t bytes) {
  return host(p, bytes, true, p);
}

cublasStatus_t library_call::finish() noexcept {
  try {
    proto::Op op;
    auto* c = op.mutable_library_call();
    c->set_library(proto::LibraryCall::CUBLAS);
    c->set_function(id_);
    c->set_args(args_.take());
    c->set_device_scalars(device_mode_);
    if (outputs_.empty())
      return submit(std::move(op));
    proto::OpResult r;
    auto st = run(std::move(op), &r);
    if (st != CUBLAS_STATUS_SUCCESS)
      return st;
    const auto& data = r.library_outputs().data();
    if (static_cast<size_t>(data.size()) != outputs_.size())
      return CUBLAS_STATUS_INTERNAL_ERROR;
    for (size_t i = 0; i < outputs_.size(); ++i)
      if (data[static_cast<int>(i)].size() != outputs_[i].second)
        return CUBLAS_STATUS_INTERNAL_ERROR;
    for (size_t i = 0; i < outputs_.size(); ++i)
      std::memcpy(outputs_[i].first, data[static_cast<int>(i)].data(), outputs_[i].second);
    return CUBLAS_STATUS_SUCCESS;
  } catch (...) {
    return CUBLAS_STATUS_INTERNAL_ERROR;
  }
}

} // namespace gleam::interpose::blas
