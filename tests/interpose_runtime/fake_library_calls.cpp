#include "tests/interpose_runtime/fake_library_calls.hpp"

#include <cublas_api.h>

#include <cstring>
#include <string>

#include "executor/blas_api.hpp"
#include "executor/library_call.hpp"

namespace gleam::test {

namespace {

/// The memory and pointer mode of the call being run (one thread).
thread_local const fake_memory* current = nullptr;
thread_local bool device_scalars = false;

template <class T>
T* host(const T* device, uint64_t n) {
  bool known = false;
  auto* p = (*current)(reinterpret_cast<uintptr_t>(device), n * sizeof(T), &known);
  return reinterpret_cast<T*>(p);
}

template <class T>
T* scalar(const T* p) {
  return device_scalars ? host(p, 1) : const_cast<T*>(p);
}

executor::blas_api& fake_api() {
  static executor::blas_api api;
  static bool filled = false;
  if (filled)
    return api;
  filled = true;
  api.cublasSaxpy_v2 = [](cublasHandle_t, int n, const float* alpha, const float* x, int incx,
                          float* y, int incy) {
    auto* X = host(x, static_cast<uint64_t>(n) * incx);
    auto* Y = host(y, static_cast<uint64_t>(n) * incy);
    if (X == nullptr || Y == nullptr)
      return CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < n; ++i)
      Y[i * incy] += *scalar(alpha) * X[i * incx];
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSdot_v2 = [](cublasHandle_t, int n, const float* x, int incx, const float* y,
                         int incy, float* result) {
    auto* X = host(x, static_cast<uint64_t>(n) * incx);
    auto* Y = host(y, static_cast<uint64_t>(n) * incy);
    float sum = 0;
    for (int i = 0; X != nullptr && Y != nullptr && i < n; ++i)
      sum += X[i * incx] * Y[i * incy];
    *scalar(result) = sum;
    return CUBLAS_STATUS_SUCCESS;
  };
  api.cublasSgemv_v2 = [](cublasHandle_t, cublasOperation_t t, int m, int n, const float* alpha,
                          const float* A, int lda, const float* x, int incx, const float* beta,
                          float* y, int incy) {
    int rows = t == CUBLAS_OP_N ? m : n, cols = t == CUBLAS_OP_N ? n : m;
    auto* a = host(A, static_cast<uint64_t>(lda) * n);
    auto* X = host(x, static_cast<uint64_t>(cols) * incx);
    auto* Y = host(y, static_cast<uint64_t>(rows) * incy);
    if (a == nullptr || X == nullptr || Y == nullptr)
      return CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < rows; ++i) {
      float sum = 0;
      for (int j = 0; j < cols; ++j)
        sum += (t == CUBLAS_OP_N ? a[i + j * lda] : a[j + i * lda]) * X[j * incx];
      Y[i * incy] = *scalar(alpha) * sum + *scalar(beta) * Y[i * incy];
    }
    return CUBLAS_STATUS_SUCCESS;
  };
  return api;
}

constexpr int32_t invalid_value = 1;
constexpr int32_t not_supported = 801;

class fake_env final : public executor::library_call_env {
public:
  fake_env(const fake_memory& memory, bool device, proto::OpResult& r)
    : library_call_env(device), memory_(memory), r_(r) {
  }
  void* handle(uint64_t id) override {
    // Any non-zero id stands for a handle; the fake library ignores it.
    return reinterpret_cast<void*>(static_cast<uintptr_t>(id));
  }
  bool device(uint64_t ptr, uint64_t bytes, const char* what) override {
    bool known = bytes == 0;
    if (!known)
      memory_(ptr, bytes, &known);
    if (!known)
      fail(CUBLAS_STATUS_INVALID_VALUE, invalid_value,
           std::string(what) + ": outside the fake server's memory");
    return known;
  }
  bool device_array(uint64_t ptr, int64_t count, uint64_t bytes_each,
                    const char* what) override {
    // The fake's memory is host memory: the array's pointers are read
    // directly, each checked like device().
    if (count <= 0)
      return true;
    if (!device(ptr, static_cast<uint64_t>(count) * 8, what))
      return false;
    bool known = false;
    auto* array = memory_(ptr, static_cast<uint64_t>(count) * 8, &known);
    for (int64_t i = 0; array != nullptr && i < count; ++i) {
      uint64_t p = 0;
      std::memcpy(&p, array + i * 8, 8);
      if (!device(p, bytes_each, what))
        return false;
    }
    return true;
  }
  void report(int status, const char* function) override {
    r_.set_blas_status(status);
    if (status == CUBLAS_STATUS_SUCCESS)
      take_outputs(*r_.mutable_library_outputs());
    else
      r_.set_status(invalid_value);
  }
  void malformed(const char* function) override {
    fail(CUBLAS_STATUS_INVALID_VALUE, invalid_value,
         std::string(function) + ": the packed arguments do not match");
  }
  void unavailable(const char* function) override {
    fail(CUBLAS_STATUS_NOT_SUPPORTED, not_supported,
         std::string(function) + " is missing from this server's cuBLAS");
  }

protected:
  void invalid(std::string detail) override {
    fail(CUBLAS_STATUS_INVALID_VALUE, invalid_value, std::move(detail));
  }

private:
  void fail(cublasStatus_t st, int32_t cu, std::string detail) {
    r_.set_blas_status(st);
    r_.set_status(cu);
    r_.set_error(std::move(detail));
  }

  const fake_memory& memory_;
  proto::OpResult& r_;
};

} // namespace

void fake_library_call(const fake_memory& memory, const proto::LibraryCall& op,
                       proto::OpResult& r) {
  if (op.library() == proto::LibraryCall::CURAND)
    return fake_curand_call(memory, op, r);
  if (op.library() == proto::LibraryCall::CUDNN)
    return fake_cudnn_call(memory, op, r);
  current = &memory;
  device_scalars = op.device_scalars();
  fake_env env(memory, op.device_scalars(), r);
  wire::arg_reader in(op.args());
  if (!executor::run_generated_cublas(fake_api(), env, op.function(), in)) {
    r.set_blas_status(CUBLAS_STATUS_NOT_SUPPORTED);
    r.set_status(not_supported);
    r.set_error("unknown cuBLAS function id");
  }
  current = nullptr;
}

} // namespace gleam::test
