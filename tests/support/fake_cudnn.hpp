#pragma once

// A fake cuDNN for the CPU tests (tests/executor/cudnn_test.cpp, the fake
// GPU server's tests/interpose_runtime/fake_generic_calls.cpp): handles
// with their streams, tensor descriptors, batch-normalization inference
// computed on the memory behind device addresses, and backend descriptors
// that keep every attribute's bytes as they arrive (descriptor and handle
// elements are the fake's own objects, refused when not live), fill the
// engine configurations a heuristic is asked for, report a fixed plan
// workspace size and log each execution. Header-only: the entry points are
// plain function pointers over one process-wide log. Not thread-safe.

#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "executor/cudnn_api.hpp"

namespace gleam::test {

/// A handle of the fake.
struct fake_cudnn_handle {
  cudaStream_t stream = nullptr;
};

/// A tensor descriptor of the fake: dimensions and strides in elements.
struct fake_tensor {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int dims = 0;
  int dim[CUDNN_DIM_MAX] = {};
  int stride[CUDNN_DIM_MAX] = {};
};

/// A backend descriptor of the fake.
struct fake_backend {
  cudnnBackendDescriptorType_t type{};
  bool finalized = false;
  /// Attribute -> (attribute type, elements as they arrived).
  std::map<int, std::pair<int, std::string>> attributes;
  /// The heuristic that filled this engine configuration (null: none).
  fake_backend* filled_by = nullptr;
};

/// One cudnnBackendExecute the fake ran.
struct fake_execution {
  fake_cudnn_handle* handle = nullptr;
  fake_backend* plan = nullptr;
  fake_backend* pack = nullptr;
  cudaStream_t stream = nullptr;
};

/// One cudnnBatchNormalizationForwardInference the fake ran.
struct fake_batch_norm {
  cudnnBatchNormMode_t mode{};
  float alpha = 0;
  float beta = 0;
  double epsilon = 0;
  const void* x = nullptr;
  void* y = nullptr;
  cudaStream_t stream = nullptr;
};

/// What the fake saw, and where its device results go.
struct fake_cudnn_log {
  std::set<fake_cudnn_handle*> handles;
  std::set<fake_tensor*> tensors;
  std::set<fake_backend*> backends;
  /// Every backend descriptor made, in order (destroyed ones included).
  std::vector<fake_backend*> created;
  /// What was destroyed, in order: "handle", "tensor", "backend".
  std::vector<std::string> destroyed;
  std::vector<fake_execution> executions;
  std::vector<fake_batch_norm> batch_norms;
  /// Maps a device address to the host memory behind [p, p + bytes) (null:
  /// not backed, nothing is read or written); null: device addresses are
  /// host pointers.
  void* (*translate)(void* device, uint64_t bytes) = nullptr;
};

inline fake_cudnn_log& fake_cudnn() {
  static fake_cudnn_log log;
  return log;
}

/// The plan workspace size the fake reports (bytes).
inline constexpr int64_t fake_cudnn_workspace = 256;

namespace fake_cudnn_detail {

template <class T, class Set>
T* live(const void* p, const Set& set) {
  auto* f = static_cast<T*>(const_cast<void*>(p));
  return set.count(f) != 0 ? f : nullptr;
}

inline fake_tensor* tensor(cudnnTensorDescriptor_t d) {
  return live<fake_tensor>(d, fake_cudnn().tensors);
}

inline fake_backend* backend(const void* d) {
  return live<fake_backend>(d, fake_cudnn().backends);
}

inline fake_cudnn_handle* handle(cudnnHandle_t h) {
  return live<fake_cudnn_handle>(h, fake_cudnn().handles);
}

inline uint64_t type_bytes(cudnnDataType_t t) {
  return t == CUDNN_DATA_DOUBLE ? 8 : t == CUDNN_DATA_HALF ? 2 : 4;
}

/// The host memory behind device range [p, p + bytes).
template <class T>
T* host(const void* p, uint64_t bytes) {
  auto* d = const_cast<void*>(p);
  return static_cast<T*>(fake_cudnn().translate != nullptr ? fake_cudnn().translate(d, bytes) : d);
}

inline cudnnStatus_t set_nd(cudnnTensorDescriptor_t d, cudnnDataType_t type, int dims,
                            const int* dim, const int* stride) {
  auto* t = tensor(d);
  if (t == nullptr || dims <= 0 || dims > CUDNN_DIM_MAX)
    return CUDNN_STATUS_BAD_PARAM;
  t->type = type;
  t->dims = dims;
  for (int i = 0; i < dims; ++i) {
    t->dim[i] = dim[i];
    t->stride[i] = stride[i];
  }
  return CUDNN_STATUS_SUCCESS;
}

} // namespace fake_cudnn_detail

/// Fills `api` with the fake: version 91900 (cudart 13000, devices up to
/// 1000), the four version checks, the last error "fake cuDNN: no error";
/// handles and their streams; tensor descriptors (4d packed NCHW and Nd,
/// their getters and sizes); batch-normalization inference computed in
/// float for NCHW tensors in spatial mode; backend descriptors (create,
/// destroy, finalize, set and get attributes, execute); everything else
/// null: missing from this library.
inline void install_fake_cudnn(executor::cudnn_api& api) {
  namespace d = fake_cudnn_detail;
  api.cudnnGetVersion = [] { return size_t{91900}; };
  api.cudnnGetCudartVersion = [] { return size_t{13000}; };
  api.cudnnGetMaxDeviceVersion = [] { return size_t{1000}; };
  api.cudnnGraphVersionCheck = [] { return CUDNN_STATUS_SUCCESS; };
  api.cudnnOpsVersionCheck = [] { return CUDNN_STATUS_SUCCESS; };
  api.cudnnGetLastErrorString = [](char* message, size_t max_size) {
    std::strncpy(message, "fake cuDNN: no error", max_size);
  };
  api.cudnnCreate = [](cudnnHandle_t* h) {
    auto* f = new fake_cudnn_handle;
    fake_cudnn().handles.insert(f);
    *h = reinterpret_cast<cudnnHandle_t>(f);
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnDestroy = [](cudnnHandle_t h) {
    auto* f = d::handle(h);
    if (f == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    fake_cudnn().handles.erase(f);
    fake_cudnn().destroyed.push_back("handle");
    delete f;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnSetStream = [](cudnnHandle_t h, cudaStream_t s) {
    auto* f = d::handle(h);
    if (f == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    f->stream = s;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnCreateTensorDescriptor = [](cudnnTensorDescriptor_t* t) {
    auto* f = new fake_tensor;
    fake_cudnn().tensors.insert(f);
    *t = reinterpret_cast<cudnnTensorDescriptor_t>(f);
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnDestroyTensorDescriptor = [](cudnnTensorDescriptor_t t) {
    auto* f = d::tensor(t);
    if (f == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    fake_cudnn().tensors.erase(f);
    fake_cudnn().destroyed.push_back("tensor");
    delete f;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnSetTensor4dDescriptor = [](cudnnTensorDescriptor_t t, cudnnTensorFormat_t format,
                                      cudnnDataType_t type, int n, int c, int h, int w) {
    if (format != CUDNN_TENSOR_NCHW)
      return CUDNN_STATUS_NOT_SUPPORTED;
    int dim[4] = {n, c, h, w};
    int stride[4] = {c * h * w, h * w, w, 1};
    return d::set_nd(t, type, 4, dim, stride);
  };
  api.cudnnSetTensorNdDescriptor = [](cudnnTensorDescriptor_t t, cudnnDataType_t type, int dims,
                                      const int* dim, const int* stride) {
    return d::set_nd(t, type, dims, dim, stride);
  };
  api.cudnnGetTensorNdDescriptor = [](cudnnTensorDescriptor_t t, int requested,
                                      cudnnDataType_t* type, int* dims, int* dim, int* stride) {
    auto* f = d::tensor(t);
    if (f == nullptr || f->dims == 0)
      return CUDNN_STATUS_BAD_PARAM;
    *type = f->type;
    *dims = f->dims;
    for (int i = 0; i < requested && i < f->dims; ++i) {
      dim[i] = f->dim[i];
      stride[i] = f->stride[i];
    }
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnGetTensorSizeInBytes = [](cudnnTensorDescriptor_t t, size_t* size) {
    auto* f = d::tensor(t);
    if (f == nullptr || f->dims == 0)
      return CUDNN_STATUS_BAD_PARAM;
    size_t last = 0;
    for (int i = 0; i < f->dims; ++i)
      last += static_cast<size_t>(f->dim[i] - 1) * static_cast<size_t>(f->stride[i]);
    *size = (last + 1) * d::type_bytes(f->type);
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnBatchNormalizationForwardInference =
    [](cudnnHandle_t h, cudnnBatchNormMode_t mode, const void* alpha, const void* beta,
       cudnnTensorDescriptor_t xd, const void* x, cudnnTensorDescriptor_t yd, void* y,
       cudnnTensorDescriptor_t bnd, const void* scale, const void* bias, const void* mean,
       const void* var, double epsilon) {
      auto* hf = d::handle(h);
      auto *xt = d::tensor(xd), *yt = d::tensor(yd), *bt = d::tensor(bnd);
      if (hf == nullptr || xt == nullptr || yt == nullptr || bt == nullptr || xt->dims != 4)
        return CUDNN_STATUS_BAD_PARAM;
      if (mode != CUDNN_BATCHNORM_SPATIAL || xt->type != CUDNN_DATA_FLOAT)
        return CUDNN_STATUS_NOT_SUPPORTED;
      fake_batch_norm call;
      call.mode = mode;
      std::memcpy(&call.alpha, alpha, sizeof(float));
      std::memcpy(&call.beta, beta, sizeof(float));
      call.epsilon = epsilon;
      call.x = x;
      call.y = y;
      call.stream = hf->stream;
      fake_cudnn().batch_norms.push_back(call);
      int n = xt->dim[0], c = xt->dim[1], hw = xt->dim[2] * xt->dim[3];
      auto bytes = static_cast<uint64_t>(n) * c * hw * sizeof(float);
      const auto* xs = d::host<const float>(x, bytes);
      auto* ys = d::host<float>(y, bytes);
      const auto* sc = d::host<const float>(scale, c * sizeof(float));
      const auto* bi = d::host<const float>(bias, c * sizeof(float));
      const auto* me = d::host<const float>(mean, c * sizeof(float));
      const auto* va = d::host<const float>(var, c * sizeof(float));
      if (xs == nullptr || ys == nullptr || sc == nullptr || bi == nullptr || me == nullptr
          || va == nullptr)
        return CUDNN_STATUS_SUCCESS;
      for (int i = 0; i < n * c * hw; ++i) {
        int ch = i / hw % c;
        float norm = sc[ch] * (xs[i] - me[ch]) / static_cast<float>(std::sqrt(va[ch] + epsilon))
                     + bi[ch];
        ys[i] = call.alpha * norm + call.beta * ys[i];
      }
      return CUDNN_STATUS_SUCCESS;
    };
  api.cudnnBackendCreateDescriptor = [](cudnnBackendDescriptorType_t type,
                                        cudnnBackendDescriptor_t* out) {
    auto* f = new fake_backend;
    f->type = type;
    fake_cudnn().backends.insert(f);
    fake_cudnn().created.push_back(f);
    *out = f;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnBackendDestroyDescriptor = [](cudnnBackendDescriptor_t b) {
    auto* f = d::backend(b);
    if (f == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    fake_cudnn().backends.erase(f);
    fake_cudnn().destroyed.push_back("backend");
    delete f;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnBackendFinalize = [](cudnnBackendDescriptor_t b) {
    auto* f = d::backend(b);
    if (f == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    if (f->type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR
        && f->attributes.count(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) == 0)
      return CUDNN_STATUS_BAD_PARAM;
    f->finalized = true;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnBackendSetAttribute = [](cudnnBackendDescriptor_t b, cudnnBackendAttributeName_t name,
                                    cudnnBackendAttributeType_t type, int64_t count,
                                    const void* elements) {
    auto* f = d::backend(b);
    if (f == nullptr || f->finalized || count < 0)
      return CUDNN_STATUS_BAD_PARAM;
    uint64_t each = type == CUDNN_TYPE_BACKEND_DESCRIPTOR || type == CUDNN_TYPE_HANDLE
                        || type == CUDNN_TYPE_INT64 || type == CUDNN_TYPE_VOID_PTR
                        || type == CUDNN_TYPE_DOUBLE
                      ? 8
                      : type == CUDNN_TYPE_BOOLEAN ? 1 : 4;
    for (int64_t i = 0; i < count; ++i) {
      const void* object = static_cast<const void* const*>(elements)[i];
      if (type == CUDNN_TYPE_BACKEND_DESCRIPTOR && d::backend(object) == nullptr)
        return CUDNN_STATUS_BAD_PARAM;
      if (type == CUDNN_TYPE_HANDLE
          && d::handle(static_cast<cudnnHandle_t>(const_cast<void*>(object))) == nullptr)
        return CUDNN_STATUS_BAD_PARAM;
    }
    f->attributes[name] = {type, std::string(static_cast<const char*>(elements),
                                             static_cast<size_t>(count * each))};
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnBackendGetAttribute = [](cudnnBackendDescriptor_t b, cudnnBackendAttributeName_t name,
                                    cudnnBackendAttributeType_t type, int64_t requested,
                                    int64_t* count, void* elements) {
    auto* f = d::backend(b);
    if (f == nullptr || count == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    if (name == CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE && type == CUDNN_TYPE_INT64) {
      *count = 1;
      if (requested >= 1 && elements != nullptr)
        std::memcpy(elements, &fake_cudnn_workspace, sizeof(int64_t));
      return CUDNN_STATUS_SUCCESS;
    }
    if (name == CUDNN_ATTR_ENGINEHEUR_RESULTS && type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
      // Two configurations; the ones asked for are filled in place.
      *count = 2;
      for (int64_t i = 0; i < requested && i < 2 && elements != nullptr; ++i) {
        auto* cfg = d::backend(static_cast<void**>(elements)[i]);
        if (cfg == nullptr)
          return CUDNN_STATUS_BAD_PARAM;
        cfg->filled_by = f;
        cfg->finalized = true;
      }
      return CUDNN_STATUS_SUCCESS;
    }
    auto i = f->attributes.find(name);
    if (i == f->attributes.end() || i->second.first != type)
      return CUDNN_STATUS_BAD_PARAM;
    const auto& bytes = i->second.second;
    uint64_t each = type == CUDNN_TYPE_INT64 || type == CUDNN_TYPE_DOUBLE ? 8 : 4;
    *count = static_cast<int64_t>(bytes.size() / each);
    if (elements != nullptr)
      std::memcpy(elements, bytes.data(),
                  std::min<size_t>(bytes.size(), static_cast<size_t>(requested) * each));
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnBackendExecute = [](cudnnHandle_t h, cudnnBackendDescriptor_t plan,
                               cudnnBackendDescriptor_t pack) {
    auto* hf = d::handle(h);
    auto *pf = d::backend(plan), *vf = d::backend(pack);
    if (hf == nullptr || pf == nullptr || vf == nullptr || !pf->finalized || !vf->finalized)
      return CUDNN_STATUS_BAD_PARAM;
    fake_cudnn().executions.push_back({hf, pf, vf, hf->stream});
    return CUDNN_STATUS_SUCCESS;
  };
}

} // namespace gleam::test
