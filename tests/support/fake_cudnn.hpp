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

/// An RNN descriptor of the fake (cudnnSetRNNDescriptor_v8's values that
/// it uses).
struct fake_rnn {
  cudnnRNNMode_t mode = CUDNN_RNN_TANH;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int input = 0;
  int hidden = 0;
  int layers = 0;
  double lclip = 0;
  double rclip = 0;
  cudnnRNNClipMode_t clip = CUDNN_RNN_CLIP_NONE;
};

/// An RNN data descriptor of the fake.
struct fake_rnn_data {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  cudnnRNNDataLayout_t layout{};
  int max_seq = 0;
  int batch = 0;
  int vector = 0;
  std::vector<int> lengths;
  float fill = 0;
};

/// A CTC loss descriptor of the fake.
struct fake_ctc {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  cudnnLossNormalizationMode_t norm = CUDNN_LOSS_NORMALIZATION_NONE;
  int max_label = 0;
};

/// What the fake saw, and where its device results go.
struct fake_cudnn_log {
  std::set<fake_cudnn_handle*> handles;
  std::set<fake_tensor*> tensors;
  std::set<fake_backend*> backends;
  std::set<fake_rnn*> rnns;
  std::set<fake_rnn_data*> rnn_data;
  std::set<fake_ctc*> ctcs;
  /// Spatial transformer descriptors: their data type and n, c, h, w.
  std::set<fake_tensor*> transformers;
  /// The calls of the compute functions added for RNNs, CTC loss and
  /// normalization, by name, in order.
  std::vector<std::string> computed;
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

inline fake_rnn* rnn(cudnnRNNDescriptor_t d) {
  return live<fake_rnn>(d, fake_cudnn().rnns);
}

inline fake_rnn_data* rnn_data(cudnnRNNDataDescriptor_t d) {
  return live<fake_rnn_data>(d, fake_cudnn().rnn_data);
}

inline fake_ctc* ctc(cudnnCTCLossDescriptor_t d) {
  return live<fake_ctc>(d, fake_cudnn().ctcs);
}

/// Elements of the fake's vanilla RNN weight space (one layer, one
/// direction, double bias): W (hidden x input), R (hidden x hidden), the
/// bias of W and of R (hidden each), floats, in that order.
inline size_t rnn_weights(const fake_rnn& r) {
  auto h = static_cast<size_t>(r.hidden), i = static_cast<size_t>(r.input);
  return h * i + h * h + 2 * h;
}

/// A fresh object of the fake's kind T, kept in `set`, as a handle.
template <class Handle, class T>
cudnnStatus_t make(Handle* out, std::set<T*>& set) {
  if (out == nullptr)
    return CUDNN_STATUS_BAD_PARAM;
  auto* f = new T;
  set.insert(f);
  *out = reinterpret_cast<Handle>(f);
  return CUDNN_STATUS_SUCCESS;
}

/// Destroys the fake's object behind `h` (BAD_PARAM when not live).
template <class Handle, class T>
cudnnStatus_t unmake(Handle h, std::set<T*>& set, const char* what) {
  auto* f = live<T>(h, set);
  if (f == nullptr)
    return CUDNN_STATUS_BAD_PARAM;
  set.erase(f);
  fake_cudnn().destroyed.push_back(what);
  delete f;
  return CUDNN_STATUS_SUCCESS;
}

/// y = scale * (x - mean) / sqrt(var + epsilon) + bias per channel of an
/// NCHW float tensor x (4-d), times alpha plus beta times y.
inline void normalize(const fake_tensor& xt, const void* x, void* y, const void* scale,
                      const void* bias, const void* mean, const void* var, double epsilon,
                      float alpha, float beta) {
  int n = xt.dim[0], c = xt.dim[1], hw = xt.dim[2] * xt.dim[3];
  auto bytes = static_cast<uint64_t>(n) * c * hw * sizeof(float);
  const auto* xs = host<const float>(x, bytes);
  auto* ys = host<float>(y, bytes);
  const auto* sc = host<const float>(scale, c * sizeof(float));
  const auto* bi = host<const float>(bias, c * sizeof(float));
  const auto* me = host<const float>(mean, c * sizeof(float));
  const auto* va = host<const float>(var, c * sizeof(float));
  if (xs == nullptr || ys == nullptr || sc == nullptr || bi == nullptr || me == nullptr
      || va == nullptr)
    return;
  for (int i = 0; i < n * c * hw; ++i) {
    int ch = i / hw % c;
    float norm =
      sc[ch] * (xs[i] - me[ch]) / static_cast<float>(std::sqrt(va[ch] + epsilon)) + bi[ch];
    ys[i] = alpha * norm + beta * ys[i];
  }
}

/// -log p(label | logits) of one sequence by CTC's forward recursion
/// (blank 0), the logits of time step t at probs + t * stride, softmax
/// applied first when `softmax`.
inline float ctc_loss(const float* probs, int steps, int alphabet, int stride, const int* label,
                      int length, bool softmax) {
  std::vector<int> ext(static_cast<size_t>(2 * length + 1), 0);
  for (int i = 0; i < length; ++i)
    ext[static_cast<size_t>(2 * i + 1)] = label[i];
  auto prob = [&](int t, int a) {
    const float* row = probs + static_cast<size_t>(t) * static_cast<size_t>(stride);
    if (!softmax)
      return static_cast<double>(row[a]);
    double sum = 0;
    for (int k = 0; k < alphabet; ++k)
      sum += std::exp(static_cast<double>(row[k]));
    return std::exp(static_cast<double>(row[a])) / sum;
  };
  std::vector<double> alpha(ext.size(), 0.0), next(ext.size(), 0.0);
  alpha[0] = prob(0, 0);
  if (ext.size() > 1)
    alpha[1] = prob(0, ext[1]);
  for (int t = 1; t < steps; ++t) {
    for (size_t s = 0; s < ext.size(); ++s) {
      double a = alpha[s] + (s >= 1 ? alpha[s - 1] : 0.0);
      if (s >= 2 && ext[s] != 0 && ext[s] != ext[s - 2])
        a += alpha[s - 2];
      next[s] = a * prob(t, ext[s]);
    }
    alpha.swap(next);
  }
  double p = alpha.back() + (ext.size() > 1 ? alpha[ext.size() - 2] : 0.0);
  return static_cast<float>(-std::log(p));
}

/// The costs of a CTC loss of probabilities `probs` (device memory,
/// described by `pt`: time x batch x alphabet) into `costs` (device
/// memory), the labels and lengths in host memory (NULL: nothing done).
inline void ctc_costs(const fake_tensor& pt, const fake_ctc& f, const void* probs,
                      const int* labels, const int* label_lengths, const int* input_lengths,
                      void* costs) {
  int steps = pt.dim[0], batch = pt.dim[1], alphabet = pt.dim[2];
  auto n = static_cast<uint64_t>(batch);
  auto* out = host<float>(costs, n * sizeof(float));
  const auto* p = host<const float>(
    probs, static_cast<uint64_t>(steps) * n * static_cast<uint64_t>(alphabet) * sizeof(float));
  if (labels == nullptr || label_lengths == nullptr || input_lengths == nullptr || out == nullptr
      || p == nullptr)
    return;
  for (int b = 0, at = 0; b < batch; at += label_lengths[b], ++b)
    out[b] = ctc_loss(p + b * alphabet, input_lengths[b], alphabet, batch * alphabet, labels + at,
                      label_lengths[b], f.norm == CUDNN_LOSS_NORMALIZATION_SOFTMAX);
}

} // namespace fake_cudnn_detail

/// Fills `api` with the fake's RNN, CTC loss, normalization and spatial
/// transformer functions (install_fake_cudnn calls it): RNN descriptors
/// (cudnnSetRNNDescriptor_v8, clip v9) and RNN data descriptors (set and
/// get); a vanilla tanh RNN (one layer, one direction, double bias, floats,
/// sequence-major) with its weight space (rnn_weights), temp sizes
/// (workspace 64 bytes, reserve 32 in training, 0 in inference), weight
/// params (pseudo layer 0; linear layer 0: W and its bias, 1: R and its
/// bias, 3-d descriptors filled in place) and forward, h_t = tanh(W x_t +
/// bW + R h_{t-1} + bR); CTC loss descriptors (v8), workspace 128 bytes and
/// cudnnCTCLoss_v8's costs by the forward recursion (softmax applied for
/// CUDNN_LOSS_NORMALIZATION_SOFTMAX); per-channel normalization inference;
/// spatial transformers (noted for the server's extents) and the affine
/// grid generator. Each compute function appends its name to `computed`.
inline void install_fake_cudnn_rnn(executor::cudnn_api& api) {
  namespace d = fake_cudnn_detail;
  api.cudnnCreateRNNDescriptor = [](cudnnRNNDescriptor_t* r) {
    return d::make(r, fake_cudnn().rnns);
  };
  api.cudnnDestroyRNNDescriptor = [](cudnnRNNDescriptor_t r) {
    return d::unmake(r, fake_cudnn().rnns, "rnn");
  };
  api.cudnnCreateRNNDataDescriptor = [](cudnnRNNDataDescriptor_t* r) {
    return d::make(r, fake_cudnn().rnn_data);
  };
  api.cudnnDestroyRNNDataDescriptor = [](cudnnRNNDataDescriptor_t r) {
    return d::unmake(r, fake_cudnn().rnn_data, "rnn data");
  };
  api.cudnnSetRNNDescriptor_v8 =
    [](cudnnRNNDescriptor_t r, cudnnRNNAlgo_t, cudnnRNNMode_t mode, cudnnRNNBiasMode_t,
       cudnnDirectionMode_t, cudnnRNNInputMode_t, cudnnDataType_t type, cudnnDataType_t,
       cudnnMathType_t, int32_t input, int32_t hidden, int32_t, int32_t layers,
       cudnnDropoutDescriptor_t, uint32_t) {
      auto* f = d::rnn(r);
      if (f == nullptr || input <= 0 || hidden <= 0 || layers <= 0)
        return CUDNN_STATUS_BAD_PARAM;
      f->mode = mode;
      f->type = type;
      f->input = input;
      f->hidden = hidden;
      f->layers = layers;
      return CUDNN_STATUS_SUCCESS;
    };
  api.cudnnRNNSetClip_v9 = [](cudnnRNNDescriptor_t r, cudnnRNNClipMode_t mode, double l,
                              double h) {
    auto* f = d::rnn(r);
    if (f == nullptr || l > h)
      return CUDNN_STATUS_BAD_PARAM;
    f->clip = mode;
    f->lclip = l;
    f->rclip = h;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnRNNGetClip_v9 = [](cudnnRNNDescriptor_t r, cudnnRNNClipMode_t* mode, double* l,
                              double* h) {
    auto* f = d::rnn(r);
    if (f == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    *mode = f->clip;
    *l = f->lclip;
    *h = f->rclip;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnSetRNNDataDescriptor = [](cudnnRNNDataDescriptor_t r, cudnnDataType_t type,
                                     cudnnRNNDataLayout_t layout, int max_seq, int batch,
                                     int vector, const int* lengths, void* fill) {
    auto* f = d::rnn_data(r);
    if (f == nullptr || max_seq <= 0 || batch <= 0 || vector <= 0 || lengths == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    f->type = type;
    f->layout = layout;
    f->max_seq = max_seq;
    f->batch = batch;
    f->vector = vector;
    f->lengths.assign(lengths, lengths + batch);
    f->fill = 0;
    if (fill != nullptr)
      std::memcpy(&f->fill, fill, sizeof(float));
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnGetRNNDataDescriptor = [](cudnnRNNDataDescriptor_t r, cudnnDataType_t* type,
                                     cudnnRNNDataLayout_t* layout, int* max_seq, int* batch,
                                     int* vector, int requested, int* lengths, void* fill) {
    auto* f = d::rnn_data(r);
    if (f == nullptr || f->batch == 0)
      return CUDNN_STATUS_BAD_PARAM;
    *type = f->type;
    *layout = f->layout;
    *max_seq = f->max_seq;
    *batch = f->batch;
    *vector = f->vector;
    for (int i = 0; i < requested && i < f->batch; ++i)
      lengths[i] = f->lengths[static_cast<size_t>(i)];
    std::memcpy(fill, &f->fill, sizeof(float));
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnGetRNNWeightSpaceSize = [](cudnnHandle_t h, cudnnRNNDescriptor_t r, size_t* size) {
    auto* f = d::rnn(r);
    if (d::handle(h) == nullptr || f == nullptr || f->hidden == 0)
      return CUDNN_STATUS_BAD_PARAM;
    *size = d::rnn_weights(*f) * sizeof(float);
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnGetRNNTempSpaceSizes = [](cudnnHandle_t h, cudnnRNNDescriptor_t r,
                                     cudnnForwardMode_t mode, cudnnRNNDataDescriptor_t x,
                                     size_t* work, size_t* reserve) {
    if (d::handle(h) == nullptr || d::rnn(r) == nullptr || d::rnn_data(x) == nullptr
        || work == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    *work = 64;
    if (reserve != nullptr)
      *reserve = mode == CUDNN_FWD_MODE_TRAINING ? 32 : 0;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnGetRNNWeightParams = [](cudnnHandle_t h, cudnnRNNDescriptor_t r, int32_t layer,
                                   size_t space_size, const void* space, int32_t id,
                                   cudnnTensorDescriptor_t m_desc, void** m_addr,
                                   cudnnTensorDescriptor_t b_desc, void** b_addr) {
    auto* f = d::rnn(r);
    if (d::handle(h) == nullptr || f == nullptr || layer != 0 || (id != 0 && id != 1)
        || space_size < d::rnn_weights(*f) * sizeof(float))
      return CUDNN_STATUS_BAD_PARAM;
    int hidden = f->hidden, cols = id == 0 ? f->input : f->hidden;
    size_t offset = id == 0 ? 0 : static_cast<size_t>(hidden) * static_cast<size_t>(f->input);
    size_t bias = static_cast<size_t>(hidden) * static_cast<size_t>(f->input + hidden)
                  + static_cast<size_t>(id * hidden);
    const auto* base = static_cast<const char*>(space);
    if (m_desc != nullptr) {
      int dim[3] = {1, hidden, cols}, stride[3] = {hidden * cols, cols, 1};
      if (d::set_nd(m_desc, CUDNN_DATA_FLOAT, 3, dim, stride) != CUDNN_STATUS_SUCCESS)
        return CUDNN_STATUS_BAD_PARAM;
    }
    if (b_desc != nullptr) {
      int dim[3] = {1, hidden, 1}, stride[3] = {hidden, 1, 1};
      if (d::set_nd(b_desc, CUDNN_DATA_FLOAT, 3, dim, stride) != CUDNN_STATUS_SUCCESS)
        return CUDNN_STATUS_BAD_PARAM;
    }
    if (m_addr != nullptr)
      *m_addr = const_cast<char*>(base + offset * sizeof(float));
    if (b_addr != nullptr)
      *b_addr = const_cast<char*>(base + bias * sizeof(float));
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnRNNForward =
    [](cudnnHandle_t h, cudnnRNNDescriptor_t r, cudnnForwardMode_t, const int32_t*,
       cudnnRNNDataDescriptor_t xd, const void* x, cudnnRNNDataDescriptor_t yd, void* y,
       cudnnTensorDescriptor_t, const void* hx, void* hy, cudnnTensorDescriptor_t, const void*,
       void*, size_t space_size, const void* space, size_t, void*, size_t, void*) {
      auto* f = d::rnn(r);
      auto *xf = d::rnn_data(xd), *yf = d::rnn_data(yd);
      if (d::handle(h) == nullptr || f == nullptr || xf == nullptr || yf == nullptr
          || xf->vector != f->input || yf->vector != f->hidden
          || space_size < d::rnn_weights(*f) * sizeof(float))
        return CUDNN_STATUS_BAD_PARAM;
      if (f->mode != CUDNN_RNN_TANH || f->type != CUDNN_DATA_FLOAT)
        return CUDNN_STATUS_NOT_SUPPORTED;
      fake_cudnn().computed.push_back("cudnnRNNForward");
      size_t hidden = static_cast<size_t>(f->hidden), input = static_cast<size_t>(f->input);
      size_t batch = static_cast<size_t>(xf->batch), steps = static_cast<size_t>(xf->max_seq);
      const auto* w = d::host<const float>(space, d::rnn_weights(*f) * sizeof(float));
      const auto* xs = d::host<const float>(x, steps * batch * input * sizeof(float));
      auto* ys = d::host<float>(y, steps * batch * hidden * sizeof(float));
      const auto* h0 =
        hx == nullptr ? nullptr : d::host<const float>(hx, batch * hidden * sizeof(float));
      auto* hn = hy == nullptr ? nullptr : d::host<float>(hy, batch * hidden * sizeof(float));
      if (w == nullptr || xs == nullptr || ys == nullptr)
        return CUDNN_STATUS_SUCCESS;
      const float *W = w, *R = w + hidden * input, *bw = R + hidden * hidden, *br = bw + hidden;
      std::vector<float> state(batch * hidden, 0.0f), next(batch * hidden);
      if (h0 != nullptr)
        std::copy(h0, h0 + batch * hidden, state.begin());
      for (size_t t = 0; t < steps; ++t) {
        for (size_t b = 0; b < batch; ++b)
          for (size_t j = 0; j < hidden; ++j) {
            float a = bw[j] + br[j];
            for (size_t i = 0; i < input; ++i)
              a += W[j * input + i] * xs[(t * batch + b) * input + i];
            for (size_t k = 0; k < hidden; ++k)
              a += R[j * hidden + k] * state[b * hidden + k];
            next[b * hidden + j] = std::tanh(a);
          }
        state.swap(next);
        std::copy(state.begin(), state.end(), ys + t * batch * hidden);
      }
      if (hn != nullptr)
        std::copy(state.begin(), state.end(), hn);
      return CUDNN_STATUS_SUCCESS;
    };
  api.cudnnCreateCTCLossDescriptor = [](cudnnCTCLossDescriptor_t* c) {
    return d::make(c, fake_cudnn().ctcs);
  };
  api.cudnnDestroyCTCLossDescriptor = [](cudnnCTCLossDescriptor_t c) {
    return d::unmake(c, fake_cudnn().ctcs, "ctc");
  };
  api.cudnnSetCTCLossDescriptor_v8 = [](cudnnCTCLossDescriptor_t c, cudnnDataType_t type,
                                        cudnnLossNormalizationMode_t norm, cudnnNanPropagation_t,
                                        int max_label) {
    auto* f = d::ctc(c);
    if (f == nullptr || max_label <= 0)
      return CUDNN_STATUS_BAD_PARAM;
    f->type = type;
    f->norm = norm;
    f->max_label = max_label;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnGetCTCLossDescriptor_v8 = [](cudnnCTCLossDescriptor_t c, cudnnDataType_t* type,
                                        cudnnLossNormalizationMode_t* norm,
                                        cudnnNanPropagation_t* nan, int* max_label) {
    auto* f = d::ctc(c);
    if (f == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    *type = f->type;
    *norm = f->norm;
    *nan = CUDNN_PROPAGATE_NAN;
    *max_label = f->max_label;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnGetCTCLossWorkspaceSize_v8 = [](cudnnHandle_t h, cudnnCTCLossAlgo_t,
                                           cudnnCTCLossDescriptor_t c, cudnnTensorDescriptor_t p,
                                           cudnnTensorDescriptor_t, size_t* size) {
    if (d::handle(h) == nullptr || d::ctc(c) == nullptr || d::tensor(p) == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    *size = 128;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnCTCLoss_v8 =
    [](cudnnHandle_t h, cudnnCTCLossAlgo_t, cudnnCTCLossDescriptor_t c,
       cudnnTensorDescriptor_t pd, const void* probs, const int* labels, const int* label_lengths,
       const int* input_lengths, void* costs, cudnnTensorDescriptor_t, void*, size_t, void*) {
      auto* f = d::ctc(c);
      auto* pt = d::tensor(pd);
      if (d::handle(h) == nullptr || f == nullptr || pt == nullptr || pt->dims != 3)
        return CUDNN_STATUS_BAD_PARAM;
      fake_cudnn().computed.push_back("cudnnCTCLoss_v8");
      auto n = static_cast<uint64_t>(pt->dim[1]);
      const auto* ll = d::host<const int>(label_lengths, n * sizeof(int));
      const auto* il = d::host<const int>(input_lengths, n * sizeof(int));
      if (ll == nullptr || il == nullptr)
        return CUDNN_STATUS_SUCCESS;
      uint64_t total = 0;
      for (uint64_t b = 0; b < n; ++b)
        total += static_cast<uint64_t>(ll[b]);
      d::ctc_costs(*pt, *f, probs, d::host<const int>(labels, total * sizeof(int)), ll, il, costs);
      return CUDNN_STATUS_SUCCESS;
    };
  api.cudnnGetCTCLossWorkspaceSize = [](cudnnHandle_t h, cudnnTensorDescriptor_t p,
                                        cudnnTensorDescriptor_t, const int* labels,
                                        const int* label_lengths, const int* input_lengths,
                                        cudnnCTCLossAlgo_t, cudnnCTCLossDescriptor_t c,
                                        size_t* size) {
    if (d::handle(h) == nullptr || d::ctc(c) == nullptr || d::tensor(p) == nullptr
        || labels == nullptr || label_lengths == nullptr || input_lengths == nullptr)
      return CUDNN_STATUS_BAD_PARAM;
    *size = 96;
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnCTCLoss = [](cudnnHandle_t h, cudnnTensorDescriptor_t pd, const void* probs,
                        const int* labels, const int* label_lengths, const int* input_lengths,
                        void* costs, cudnnTensorDescriptor_t, void*, cudnnCTCLossAlgo_t,
                        cudnnCTCLossDescriptor_t c, void*, size_t) {
    auto* f = d::ctc(c);
    auto* pt = d::tensor(pd);
    if (d::handle(h) == nullptr || f == nullptr || pt == nullptr || pt->dims != 3)
      return CUDNN_STATUS_BAD_PARAM;
    fake_cudnn().computed.push_back("cudnnCTCLoss");
    d::ctc_costs(*pt, *f, probs, labels, label_lengths, input_lengths, costs);
    return CUDNN_STATUS_SUCCESS;
  };
  api.cudnnNormalizationForwardInference =
    [](cudnnHandle_t h, cudnnNormMode_t mode, cudnnNormOps_t ops, cudnnNormAlgo_t,
       const void* alpha, const void* beta, cudnnTensorDescriptor_t xd, const void* x,
       cudnnTensorDescriptor_t, const void* scale, const void* bias, cudnnTensorDescriptor_t,
       const void* mean, const void* var, cudnnTensorDescriptor_t, const void*,
       cudnnActivationDescriptor_t, cudnnTensorDescriptor_t yd, void* y, double epsilon,
       int groups) {
      auto *xt = d::tensor(xd), *yt = d::tensor(yd);
      if (d::handle(h) == nullptr || xt == nullptr || yt == nullptr || xt->dims != 4
          || groups != 1)
        return CUDNN_STATUS_BAD_PARAM;
      if (mode != CUDNN_NORM_PER_CHANNEL || ops != CUDNN_NORM_OPS_NORM
          || xt->type != CUDNN_DATA_FLOAT)
        return CUDNN_STATUS_NOT_SUPPORTED;
      fake_cudnn().computed.push_back("cudnnNormalizationForwardInference");
      float a = 0, b = 0;
      std::memcpy(&a, alpha, sizeof(float));
      std::memcpy(&b, beta, sizeof(float));
      d::normalize(*xt, x, y, scale, bias, mean, var, epsilon, a, b);
      return CUDNN_STATUS_SUCCESS;
    };
  api.cudnnCreateSpatialTransformerDescriptor = [](cudnnSpatialTransformerDescriptor_t* t) {
    return d::make(t, fake_cudnn().transformers);
  };
  api.cudnnDestroySpatialTransformerDescriptor = [](cudnnSpatialTransformerDescriptor_t t) {
    executor::cudnn_note_spatial_transformer(t, CUDNN_DATA_FLOAT, 0, nullptr);
    return d::unmake(t, fake_cudnn().transformers, "spatial transformer");
  };
  api.cudnnSetSpatialTransformerNdDescriptor =
    [](cudnnSpatialTransformerDescriptor_t t, cudnnSamplerType_t, cudnnDataType_t type, int dims,
       const int* dim) {
      auto* f = fake_cudnn_detail::live<fake_tensor>(t, fake_cudnn().transformers);
      if (f == nullptr || dims != 4)
        return CUDNN_STATUS_BAD_PARAM;
      int stride[4] = {dim[1] * dim[2] * dim[3], dim[2] * dim[3], dim[3], 1};
      f->type = type;
      f->dims = 4;
      for (int i = 0; i < 4; ++i) {
        f->dim[i] = dim[i];
        f->stride[i] = stride[i];
      }
      executor::cudnn_note_spatial_transformer(t, type, dims, dim);
      return CUDNN_STATUS_SUCCESS;
    };
  api.cudnnSpatialTfGridGeneratorForward = [](cudnnHandle_t h,
                                              cudnnSpatialTransformerDescriptor_t t,
                                              const void* theta, void* grid) {
    auto* f = fake_cudnn_detail::live<fake_tensor>(t, fake_cudnn().transformers);
    if (d::handle(h) == nullptr || f == nullptr || f->dims != 4)
      return CUDNN_STATUS_BAD_PARAM;
    fake_cudnn().computed.push_back("cudnnSpatialTfGridGeneratorForward");
    auto n = static_cast<uint64_t>(f->dim[0]), rows = static_cast<uint64_t>(f->dim[2]),
         cols = static_cast<uint64_t>(f->dim[3]);
    const auto* th = d::host<const float>(theta, n * 6 * sizeof(float));
    auto* g = d::host<float>(grid, n * rows * cols * 2 * sizeof(float));
    if (th == nullptr || g == nullptr)
      return CUDNN_STATUS_SUCCESS;
    for (uint64_t b = 0; b < n; ++b)
      for (uint64_t i = 0; i < rows; ++i)
        for (uint64_t j = 0; j < cols; ++j) {
          float xs = cols > 1 ? -1.0f + 2.0f * static_cast<float>(j) / static_cast<float>(cols - 1)
                              : 0.0f;
          float ys = rows > 1 ? -1.0f + 2.0f * static_cast<float>(i) / static_cast<float>(rows - 1)
                              : 0.0f;
          const float* m = th + b * 6;
          float* out = g + ((b * rows + i) * cols + j) * 2;
          out[0] = m[0] * xs + m[1] * ys + m[2];
          out[1] = m[3] * xs + m[4] * ys + m[5];
        }
    return CUDNN_STATUS_SUCCESS;
  };
}

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
      d::normalize(*xt, x, y, scale, bias, mean, var, epsilon, call.alpha, call.beta);
      return CUDNN_STATUS_SUCCESS;
    };
  install_fake_cudnn_rnn(api);
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
