// cuDNN's LibraryCall ops in the executor, on the CPU: the generic runner
// over a fake driver (host memory as device memory, fake_device.hpp) and a
// fake cuDNN (tests/support/fake_cudnn.hpp) that keeps the bytes of every
// backend attribute, computes batch-normalization inference and logs each
// execution; the loader against the installed library.
#include "executor/cudnn_api.hpp"
#include "executor/executor.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "executor/cudnn_function_ids.hpp"
#include "tests/executor/fake_device.hpp"
#include "tests/executor/real_gpu.hpp"
#include "tests/support/fake_cudnn.hpp"
#include "tests/support/gpu_probe.hpp"
#include "wire/library_args.hpp"

namespace proto = gleam::proto;
namespace ids = gleam::generated::cudnn_ids;
using gleam::executor::cudnn_api;
using gleam::test::fake_backend;
using gleam::test::fake_cudnn;
using gleam::test::fake_device;
using gleam::wire::arg_packer;

namespace {

/// cuDNN's LibraryCall ops on a client of an executor (Base: the fake
/// executor or a real one, with run()).
template <class Base>
struct cudnn_calls : Base {
  /// A LibraryCall of cuDNN function `id` with `args`.
  proto::OpResult call(uint32_t id, arg_packer& args) {
    return this->run([&](proto::Op& op) {
      auto* c = op.mutable_library_call();
      c->set_library(proto::LibraryCall::CUDNN);
      c->set_function(id);
      c->set_args(args.take());
    });
  }

  /// A call that must succeed (the server's error as the message).
  void ok(uint32_t id, arg_packer& args) {
    auto r = call(id, args);
    INFO(r.error());
    REQUIRE(r.blas_status() == CUDNN_STATUS_SUCCESS);
  }

  /// A function whose only argument is a client handle id.
  proto::OpResult on(uint32_t id, uint64_t handle) {
    arg_packer p;
    p.value(handle);
    return call(id, p);
  }

  /// cudnnBackendCreateDescriptor of `type` under client id `id`.
  void backend(uint64_t id, cudnnBackendDescriptorType_t type) {
    arg_packer p;
    p.value(type);
    p.value(id);
    ok(ids::cudnnBackendCreateDescriptor, p);
  }

  /// cudnnBackendSetAttribute of plain elements (their bytes).
  template <class T>
  proto::OpResult set(uint64_t desc, cudnnBackendAttributeName_t name,
                      cudnnBackendAttributeType_t type, const std::vector<T>& values) {
    arg_packer p;
    p.value(desc);
    p.value(name);
    p.value(type);
    p.value(static_cast<int64_t>(values.size()));
    p.bytes(values.data(), values.size() * sizeof(T));
    return call(ids::cudnnBackendSetAttribute, p);
  }

  /// cudnnBackendSetAttribute of descriptor elements (client ids).
  proto::OpResult set_descriptors(uint64_t desc, cudnnBackendAttributeName_t name,
                                  const std::vector<uint64_t>& ids) {
    return set(desc, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, ids);
  }

  /// A finalized backend tensor under client id `id`: unique id `uid`,
  /// float elements 16-byte aligned, dimensions and strides (elements) as
  /// given; `by_value`: passed by value.
  void backend_tensor(uint64_t id, int64_t uid, const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& strides, bool by_value = false) {
    backend(id, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    REQUIRE(set(id, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, std::vector<int64_t>{16})
              .blas_status()
            == 0);
    if (by_value)
      REQUIRE(set(id, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, std::vector<uint8_t>{1})
                .blas_status()
              == 0);
    REQUIRE(set(id, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims).blas_status() == 0);
    REQUIRE(set(id, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides).blas_status() == 0);
    REQUIRE(set(id, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, std::vector<int64_t>{uid})
              .blas_status()
            == 0);
    REQUIRE(set(id, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE,
                std::vector<int32_t>{CUDNN_DATA_FLOAT})
              .blas_status()
            == 0);
    REQUIRE(on(ids::cudnnBackendFinalize, id).blas_status() == CUDNN_STATUS_SUCCESS);
  }

  /// cudnnBackendGetAttribute of CUDNN_ATTR_ENGINEHEUR_RESULTS of heuristic
  /// `heuristic` into the app's engine configurations `configs`.
  proto::OpResult fill(uint64_t heuristic, const std::vector<uint64_t>& configs) {
    arg_packer results;
    results.value(heuristic);
    results.value(CUDNN_ATTR_ENGINEHEUR_RESULTS);
    results.value(CUDNN_TYPE_BACKEND_DESCRIPTOR);
    results.value(static_cast<int64_t>(configs.size()));
    results.value(uint8_t{configs.empty() ? uint8_t{0} : uint8_t{1}});
    for (auto c : configs)
      results.value(c);
    return call(ids::cudnnBackendGetAttribute, results);
  }

  /// The element count of a heuristic's results (or any get's) in `r`.
  static int64_t count_of(const proto::OpResult& r) {
    int64_t count = -1;
    REQUIRE(r.library_outputs().data_size() >= 1);
    std::memcpy(&count, r.library_outputs().data(0).data(), sizeof(count));
    return count;
  }

  /// cudnnCreate under client id `id`.
  void create_handle(uint64_t id) {
    arg_packer p;
    p.value(id);
    ok(ids::cudnnCreate, p);
  }

  /// cudnnCreateTensorDescriptor under client id `id`, set to NCHW floats
  /// of n x c x h x w (cudnnSetTensor4dDescriptor).
  void legacy_tensor(uint64_t id, int n, int c, int h, int w) {
    arg_packer made;
    made.value(id);
    ok(ids::cudnnCreateTensorDescriptor, made);
    arg_packer set;
    set.value(id);
    set.value(CUDNN_TENSOR_NCHW);
    set.value(CUDNN_DATA_FLOAT);
    set.value(n);
    set.value(c);
    set.value(h);
    set.value(w);
    ok(ids::cudnnSetTensor4dDescriptor, set);
  }

  /// A device allocation holding `v` (MemAlloc, MemcpyHtoD).
  uint64_t floats(const std::vector<float>& v) {
    auto r = this->run([&](proto::Op& op) { op.mutable_mem_alloc()->set_size(v.size() * 4); });
    REQUIRE(r.status() == 0);
    auto p = r.dptr();
    auto w = this->run([&](proto::Op& op) {
      op.mutable_memcpy_htod()->set_dst(p);
      op.mutable_memcpy_htod()->set_data(
        std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4));
    });
    REQUIRE(w.status() == 0);
    return p;
  }

  /// The device operands of a batch-normalization inference.
  struct bn_operands {
    uint64_t x, y, scale, bias, mean, var;
  };

  /// Operands of a 1x2x2x2 batch normalization: x 1, 2, 3, 4 | 10, 20,
  /// 30, 40, y zeros, scale 2 | 0.5, bias 1 | -1, mean 2 | 20, variance
  /// 4 | 100: y is 0, 1, 2, 3 | -1.5, -1, -0.5, 0 (epsilon 0).
  bn_operands example_bn() {
    return {floats({1, 2, 3, 4, 10, 20, 30, 40}), floats(std::vector<float>(8, 0)),
            floats({2, 0.5f}), floats({1, -1}), floats({2, 20}), floats({4, 100})};
  }

  /// cudnnBatchNormalizationForwardInference (spatial, alpha 1 sent as
  /// `alpha_bytes` bytes, beta 0) on `handle`, x and y of tensor
  /// descriptor `data`, the parameters of `params`.
  proto::OpResult bn_inference(uint64_t handle, uint64_t data, uint64_t params,
                               const bn_operands& o, uint64_t alpha_bytes, double epsilon) {
    arg_packer p;
    p.value(handle);
    p.value(CUDNN_BATCHNORM_SPATIAL);
    double alpha = 1.0;
    float alpha_f = 1.0f, beta_f = 0.0f;
    if (alpha_bytes == 8)
      p.bytes(&alpha, 8);
    else
      p.bytes(&alpha_f, 4);
    p.bytes(&beta_f, 4);
    p.value(data);
    p.value(o.x);
    p.value(data);
    p.value(o.y);
    p.value(params);
    p.value(o.scale);
    p.value(o.bias);
    p.value(o.mean);
    p.value(o.var);
    p.value(epsilon);
    return call(ids::cudnnBatchNormalizationForwardInference, p);
  }

  /// A descriptor under client id `id` made by create function `create`.
  void made(uint32_t create, uint64_t id) {
    arg_packer p;
    p.value(id);
    ok(create, p);
  }

  /// cudnnCreateTensorDescriptor under client id `id`, set to packed
  /// floats of dimensions `dims` (cudnnSetTensorNdDescriptor).
  void nd_tensor(uint64_t id, const std::vector<int>& dims) {
    made(ids::cudnnCreateTensorDescriptor, id);
    std::vector<int> strides(dims.size(), 1);
    for (size_t i = dims.size() - 1; i > 0; --i)
      strides[i - 1] = strides[i] * dims[i];
    arg_packer set;
    set.value(id);
    set.value(CUDNN_DATA_FLOAT);
    set.value(static_cast<int>(dims.size()));
    set.bytes(dims.data(), dims.size() * sizeof(int));
    set.bytes(strides.data(), strides.size() * sizeof(int));
    ok(ids::cudnnSetTensorNdDescriptor, set);
  }

  /// cudnnSetRNNDescriptor_v8 of RNN descriptor `id`: `mode` cells of
  /// `input` inputs and `hidden` outputs, one layer, one direction, double
  /// bias, floats without tensor cores, padded input and output (the
  /// unpacked layouts of rnn_data()), dropout descriptor `dropout` (0:
  /// none).
  proto::OpResult rnn(uint64_t id, cudnnRNNMode_t mode, int32_t input, int32_t hidden,
                      uint64_t dropout = 0) {
    arg_packer p;
    p.value(id);
    p.value(CUDNN_RNN_ALGO_STANDARD);
    p.value(mode);
    p.value(CUDNN_RNN_DOUBLE_BIAS);
    p.value(CUDNN_UNIDIRECTIONAL);
    p.value(CUDNN_LINEAR_INPUT);
    p.value(CUDNN_DATA_FLOAT);
    p.value(CUDNN_DATA_FLOAT);
    p.value(CUDNN_FMA_MATH);
    p.value(input);
    p.value(hidden);
    p.value(hidden);
    p.value(int32_t{1});
    p.value(dropout);
    p.value(uint32_t{CUDNN_RNN_PADDED_IO_ENABLED});
    return call(ids::cudnnSetRNNDescriptor_v8, p);
  }

  /// cudnnSetRNNDataDescriptor of `id`: sequence-major unpacked floats,
  /// every sequence `steps` long, no padding fill.
  void rnn_data(uint64_t id, int steps, int batch, int vector) {
    arg_packer p;
    p.value(id);
    p.value(CUDNN_DATA_FLOAT);
    p.value(CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED);
    p.value(steps);
    p.value(batch);
    p.value(vector);
    std::vector<int> lengths(static_cast<size_t>(batch), steps);
    p.bytes(lengths.data(), lengths.size() * sizeof(int));
    p.value(uint8_t{0});
    ok(ids::cudnnSetRNNDataDescriptor, p);
  }

  /// The host output `i` of `r` as a T.
  template <class T>
  static T output(const proto::OpResult& r, int i) {
    T v{};
    REQUIRE(r.library_outputs().data_size() > i);
    REQUIRE(r.library_outputs().data(i).size() == sizeof(T));
    std::memcpy(&v, r.library_outputs().data(i).data(), sizeof(T));
    return v;
  }

  /// cudnnGetRNNWeightParams of linear layer `layer` (pseudo layer 0),
  /// filling tensor descriptors `m` and `b`: the matrix's and the bias's
  /// device addresses.
  std::pair<uint64_t, uint64_t> weight_params(uint64_t handle, uint64_t rnn_id, uint64_t space,
                                              size_t space_size, int32_t layer, uint64_t m,
                                              uint64_t b) {
    arg_packer p;
    p.value(handle);
    p.value(rnn_id);
    p.value(int32_t{0});
    p.value(space_size);
    p.value(space);
    p.value(layer);
    p.value(m);
    p.value(uint8_t{1});
    p.value(b);
    p.value(uint8_t{1});
    auto r = call(ids::cudnnGetRNNWeightParams, p);
    INFO(r.error());
    REQUIRE(r.blas_status() == CUDNN_STATUS_SUCCESS);
    return {output<uint64_t>(r, 0), output<uint64_t>(r, 1)};
  }

  /// The device operands of an RNN forward.
  struct rnn_operands {
    uint64_t lengths, x, y, hx, hy, cx, cy, weights;
    size_t weight_bytes;
    uint64_t work;
    size_t work_bytes;
  };

  /// cudnnRNNForward (inference) of RNN `rnn_id` on data descriptors `xd`,
  /// `yd`, hidden-state descriptor `hd` and cell-state descriptor `cd` (0:
  /// none).
  proto::OpResult rnn_forward(uint64_t handle, uint64_t rnn_id, uint64_t xd, uint64_t yd,
                              uint64_t hd, uint64_t cd, const rnn_operands& o) {
    arg_packer p;
    p.value(handle);
    p.value(rnn_id);
    p.value(CUDNN_FWD_MODE_INFERENCE);
    p.value(o.lengths);
    p.value(xd);
    p.value(o.x);
    p.value(yd);
    p.value(o.y);
    p.value(hd);
    p.value(o.hx);
    p.value(o.hy);
    p.value(cd);
    p.value(o.cx);
    p.value(o.cy);
    p.value(o.weight_bytes);
    p.value(o.weights);
    p.value(o.work_bytes);
    p.value(o.work);
    p.value(size_t{0});
    p.value(uint64_t{0});
    return call(ids::cudnnRNNForward, p);
  }

  /// A device allocation holding `v` (ints).
  uint64_t ints(const std::vector<int>& v) {
    std::vector<float> bits(v.size());
    std::memcpy(bits.data(), v.data(), v.size() * sizeof(int));
    return floats(bits);
  }

  /// cudnnCTCLoss_v8 (deterministic algorithm) of CTC descriptor `ctc` on
  /// probabilities of descriptor `probs_desc`; gradients of the same
  /// descriptor at `gradients` (0: none).
  proto::OpResult ctc_loss(uint64_t handle, uint64_t ctc, uint64_t probs_desc, uint64_t probs,
                           uint64_t labels, uint64_t label_lengths, uint64_t input_lengths,
                           uint64_t costs, uint64_t work, size_t work_bytes,
                           uint64_t gradients = 0) {
    arg_packer p;
    p.value(handle);
    p.value(CUDNN_CTC_LOSS_ALGO_DETERMINISTIC);
    p.value(ctc);
    p.value(probs_desc);
    p.value(probs);
    p.value(labels);
    p.value(label_lengths);
    p.value(input_lengths);
    p.value(costs);
    p.value(gradients == 0 ? uint64_t{0} : probs_desc);
    p.value(gradients);
    p.value(work_bytes);
    p.value(work);
    return call(ids::cudnnCTCLoss_v8, p);
  }

  /// cudnnSetCTCLossDescriptor_v8 of `ctc`: floats, softmax applied,
  /// labels up to `max_label` long.
  void ctc_descriptor(uint64_t ctc, int max_label) {
    arg_packer p;
    p.value(ctc);
    p.value(CUDNN_DATA_FLOAT);
    p.value(CUDNN_LOSS_NORMALIZATION_SOFTMAX);
    p.value(CUDNN_PROPAGATE_NAN);
    p.value(max_label);
    ok(ids::cudnnSetCTCLossDescriptor_v8, p);
  }

  /// cudnnBackendExecute.
  proto::OpResult execute(uint64_t handle, uint64_t plan, uint64_t pack) {
    arg_packer p;
    p.value(handle);
    p.value(plan);
    p.value(pack);
    return call(ids::cudnnBackendExecute, p);
  }
};

/// The fake device with the fake cuDNN (tests/support/fake_cudnn.hpp)
/// attached.
struct fake_gpu : cudnn_calls<gleam::test::fake_executor> {
  cudnn_api cudnn;

  fake_gpu() {
    fake_cudnn() = gleam::test::fake_cudnn_log{};
    gleam::test::install_fake_cudnn(cudnn);
    exec->use_library(cudnn);
  }
};

constexpr uint64_t handle_id = 701;

/// The operands of a forward of the fake's tanh RNN (steps x 1 x 2 floats
/// in and out, hidden state 1 x 1 x 2, no cell state): x holding `x`, the
/// weight space `weights` of `weight_bytes`, zeros elsewhere.
template <class Gpu>
typename Gpu::rnn_operands cudnn_fake_rnn_operands(Gpu& g, const std::vector<float>& x,
                                                   uint64_t weights, size_t weight_bytes) {
  typename Gpu::rnn_operands o{};
  o.lengths = g.ints(std::vector<int>(1, static_cast<int>(x.size() / 2)));
  o.x = g.floats(x);
  o.y = g.floats(std::vector<float>(x.size(), 0));
  o.hy = g.floats({0, 0});
  o.weights = weights;
  o.weight_bytes = weight_bytes;
  o.work_bytes = 64;
  o.work = g.alloc(64);
  return o;
}

/// The fake's backend descriptor made last.
fake_backend* newest() {
  REQUIRE_FALSE(fake_cudnn().created.empty());
  return fake_cudnn().created.back();
}

/// Host bytes of `v`.
template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

} // namespace

TEST_CASE("a cuDNN handle lives in the session: created, used, refused once destroyed",
          "[executor][cudnn]") {
  fake_gpu g;
  g.create_handle(handle_id);
  REQUIRE(fake_cudnn().handles.size() == 1);
  // An id in use names no new handle.
  arg_packer again;
  again.value(handle_id);
  CHECK(g.call(ids::cudnnCreate, again).blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK(fake_cudnn().handles.size() == 1);

  // A handle the session does not hold: CUDNN_STATUS_BAD_PARAM, as cuDNN
  // answers for one that is not a handle, and the library is not called.
  arg_packer stream;
  stream.value(handle_id + 1);
  stream.value(uint64_t{0});
  auto unknown = g.call(ids::cudnnSetStream, stream);
  CHECK(unknown.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK(unknown.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK_THAT(unknown.error(),
             Catch::Contains("cudnnHandle_t 702 is not a handle of this session"));

  REQUIRE(g.on(ids::cudnnDestroy, handle_id).blas_status() == CUDNN_STATUS_SUCCESS);
  CHECK(fake_cudnn().handles.empty());
  CHECK(g.on(ids::cudnnDestroy, handle_id).blas_status() == CUDNN_STATUS_BAD_PARAM);

  // What the app leaves is destroyed with the session, what was made with
  // a handle before the handle.
  arg_packer left;
  left.value(handle_id + 2);
  g.ok(ids::cudnnCreate, left);
  g.backend(801, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  arg_packer tensor;
  tensor.value(uint64_t{802});
  g.ok(ids::cudnnCreateTensorDescriptor, tensor);
  CHECK(fake_cudnn().handles.size() == 1);
  CHECK(fake_cudnn().backends.size() == 1);
  fake_cudnn().destroyed.clear();
  g.exec->close_session(g.session);
  CHECK(fake_cudnn().handles.empty());
  CHECK(fake_cudnn().backends.empty());
  CHECK(fake_cudnn().tensors.empty());
  CHECK(fake_cudnn().destroyed == std::vector<std::string>{"tensor", "backend", "handle"});
}

TEST_CASE("cuDNN's versions and last error come back as host outputs", "[executor][cudnn]") {
  fake_gpu g;
  arg_packer none;
  auto v = g.call(ids::cudnnGetVersion, none);
  REQUIRE(v.blas_status() == CUDNN_STATUS_SUCCESS);
  REQUIRE(v.library_outputs().data_size() == 1);
  REQUIRE(v.library_outputs().data(0).size() == 3 * sizeof(size_t));
  size_t versions[3] = {};
  std::memcpy(versions, v.library_outputs().data(0).data(), sizeof(versions));
  CHECK(versions[0] == 91900);
  CHECK(versions[1] == 13000);
  CHECK(versions[2] == 1000);
  arg_packer message;
  message.value(uint64_t{64});
  auto e = g.call(ids::cudnnGetLastErrorString, message);
  REQUIRE(e.blas_status() == CUDNN_STATUS_SUCCESS);
  REQUIRE(e.library_outputs().data(0).size() == 64);
  CHECK(std::string(e.library_outputs().data(0).c_str()) == "fake cuDNN: no error");
  // A version check the fake lacks is the library's "not supported".
  auto missing = g.call(ids::cudnnAdvVersionCheck, none);
  CHECK(missing.blas_status() == CUDNN_STATUS_NOT_SUPPORTED);
  CHECK_THAT(missing.error(), Catch::Contains("cudnnAdvVersionCheck is missing"));
}

TEST_CASE("backend attributes reach the library as the app set them, descriptors and handles "
          "mapped to the session's",
          "[executor][cudnn]") {
  fake_gpu g;
  g.create_handle(handle_id);
  auto* real_handle = *fake_cudnn().handles.begin();

  std::vector<int64_t> dims{1, 2, 4, 4}, strides{32, 16, 4, 1};
  std::vector<int32_t> type{CUDNN_DATA_FLOAT};
  g.backend_tensor(11, 7, dims, strides);
  auto* tensor = newest();
  CHECK(tensor->attributes[CUDNN_ATTR_TENSOR_DIMENSIONS]
        == std::make_pair(static_cast<int>(CUDNN_TYPE_INT64), bytes_of(dims)));
  CHECK(tensor->attributes[CUDNN_ATTR_TENSOR_STRIDES].second == bytes_of(strides));
  CHECK(tensor->attributes[CUDNN_ATTR_TENSOR_DATA_TYPE].second == bytes_of(type));

  // Descriptor elements: the client's ids become the session's descriptors.
  g.backend(12, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  auto* op = newest();
  REQUIRE(g.set_descriptors(12, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, {11}).blas_status() == 0);
  std::vector<void*> mapped{tensor};
  CHECK(op->attributes[CUDNN_ATTR_OPERATION_POINTWISE_XDESC].second == bytes_of(mapped));
  g.backend(13, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  auto* graph = newest();
  REQUIRE(g.set_descriptors(13, CUDNN_ATTR_OPERATIONGRAPH_OPS, {12}).blas_status() == 0);
  // A handle element: the session's cudnnHandle_t.
  REQUIRE(g.set(13, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE,
                std::vector<uint64_t>{handle_id})
            .blas_status()
          == 0);
  std::vector<void*> handle_bytes{real_handle};
  CHECK(graph->attributes[CUDNN_ATTR_OPERATIONGRAPH_HANDLE].second == bytes_of(handle_bytes));

  // An id the session does not hold reaches no library.
  auto foreign = g.set_descriptors(12, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, {99});
  CHECK(foreign.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(foreign.error(), Catch::Contains("cudnnBackendDescriptor_t 99 is not a handle"));
  CHECK(op->attributes.count(CUDNN_ATTR_OPERATION_POINTWISE_YDESC) == 0);
  // Elements that do not fill whole elements of their type do not unpack.
  arg_packer ragged;
  ragged.value(uint64_t{11});
  ragged.value(CUDNN_ATTR_TENSOR_UNIQUE_ID);
  ragged.value(CUDNN_TYPE_INT64);
  ragged.value(int64_t{1});
  ragged.bytes("abc", 3);
  auto refused = g.call(ids::cudnnBackendSetAttribute, ragged);
  CHECK(refused.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(refused.error(), Catch::Contains("do not match its parameters"));

  // Get: plain elements come back as bytes, with the count.
  arg_packer get;
  get.value(uint64_t{11});
  get.value(CUDNN_ATTR_TENSOR_DIMENSIONS);
  get.value(CUDNN_TYPE_INT64);
  get.value(int64_t{4});
  get.value(uint8_t{1});
  auto got = g.call(ids::cudnnBackendGetAttribute, get);
  REQUIRE(got.blas_status() == CUDNN_STATUS_SUCCESS);
  REQUIRE(got.library_outputs().data_size() == 2);
  int64_t count = 0;
  std::memcpy(&count, got.library_outputs().data(0).data(), sizeof(count));
  CHECK(count == 4);
  CHECK(got.library_outputs().data(1) == bytes_of(dims));

  // Get of descriptors: the app's own descriptors are filled in place.
  g.backend(14, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  auto* heuristic = newest();
  REQUIRE(g.set_descriptors(14, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, {13}).blas_status() == 0);
  g.backend(15, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  auto* config = newest();
  auto filled = g.fill(14, {15});
  INFO(filled.error());
  REQUIRE(filled.blas_status() == CUDNN_STATUS_SUCCESS);
  REQUIRE(filled.library_outputs().data_size() == 1);
  std::memcpy(&count, filled.library_outputs().data(0).data(), sizeof(count));
  CHECK(count == 2);
  CHECK(config->filled_by == heuristic);
}

TEST_CASE("cudnnBackendExecute runs only when every pointer of the variant pack is the "
          "session's, with the extents of the plan's tensors",
          "[executor][cudnn]") {
  fake_gpu g;
  g.create_handle(handle_id);
  // Under ids base + 1 .. base + 6: tensor 7 (1x2x4x4 floats, 128 bytes;
  // `by_value`: passed by value), a pointwise operation on it, its graph, a
  // heuristic, the engine configuration the heuristic fills, and a plan of
  // that configuration, finalized.
  auto plan_of = [&](uint64_t base, bool by_value) {
    g.backend_tensor(base + 1, 7, {1, 2, 4, 4}, {32, 16, 4, 1}, by_value);
    g.backend(base + 2, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    REQUIRE(g.set_descriptors(base + 2, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, {base + 1})
              .blas_status()
            == 0);
    g.backend(base + 3, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    REQUIRE(g.set_descriptors(base + 3, CUDNN_ATTR_OPERATIONGRAPH_OPS, {base + 2}).blas_status()
            == 0);
    g.backend(base + 4, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    REQUIRE(g.set_descriptors(base + 4, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, {base + 3})
              .blas_status()
            == 0);
    g.backend(base + 5, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    REQUIRE(g.fill(base + 4, {base + 5}).blas_status() == CUDNN_STATUS_SUCCESS);
    g.backend(base + 6, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    REQUIRE(g.set_descriptors(base + 6, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, {base + 5})
              .blas_status()
            == 0);
    REQUIRE(g.on(ids::cudnnBackendFinalize, base + 6).blas_status() == CUDNN_STATUS_SUCCESS);
    return base + 6;
  };
  REQUIRE(plan_of(10, false) == 16);

  auto workspace = g.alloc(gleam::test::fake_cudnn_workspace);
  auto pack = [&](uint64_t id, uint64_t data, uint64_t ws) {
    g.backend(id, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    REQUIRE(g.set(id, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
                  std::vector<int64_t>{7})
              .blas_status()
            == 0);
    REQUIRE(g.set(id, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                  std::vector<uint64_t>{data})
              .blas_status()
            == 0);
    REQUIRE(g.set(id, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                  std::vector<uint64_t>{ws})
              .blas_status()
            == 0);
    REQUIRE(g.on(ids::cudnnBackendFinalize, id).blas_status() == CUDNN_STATUS_SUCCESS);
  };

  SECTION("a tensor inside its allocation runs, on the handle's stream") {
    pack(20, g.alloc(128), workspace);
    auto r = g.execute(handle_id, 16, 20);
    INFO(r.error());
    REQUIRE(r.blas_status() == CUDNN_STATUS_SUCCESS);
    REQUIRE(fake_cudnn().executions.size() == 1);
    // Never the context's legacy stream: the session's stand-in.
    REQUIRE_FALSE(fake_device().streams.empty());
    CHECK(fake_cudnn().executions[0].stream
          == reinterpret_cast<cudaStream_t>(fake_device().streams[0]));
  }
  SECTION("a data pointer outside the session's allocations is refused") {
    std::vector<char> elsewhere(256);
    pack(20, reinterpret_cast<uintptr_t>(elsewhere.data()), workspace);
    auto r = g.execute(handle_id, 16, 20);
    CHECK(r.blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("the data pointer of tensor 7"));
    CHECK_THAT(r.error(), Catch::Contains("outside this session's allocations"));
    CHECK(fake_cudnn().executions.empty());
  }
  SECTION("an allocation smaller than the tensor is refused") {
    pack(20, g.alloc(100), workspace);
    auto r = g.execute(handle_id, 16, 20);
    CHECK(r.blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK_THAT(r.error(), Catch::Contains("128 bytes"));
    CHECK(fake_cudnn().executions.empty());
  }
  SECTION("the extents outlive the graph, its tensors and the heuristic") {
    for (uint64_t id : {11, 12, 13, 14})
      REQUIRE(g.on(ids::cudnnBackendDestroyDescriptor, id).blas_status() == CUDNN_STATUS_SUCCESS);
    pack(20, g.alloc(100), workspace);
    auto r = g.execute(handle_id, 16, 20);
    CHECK(r.blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK_THAT(r.error(), Catch::Contains("tensor 7 (variant pack entry 0, 128 bytes)"));
    pack(21, g.alloc(128), workspace);
    CHECK(g.execute(handle_id, 16, 21).blas_status() == CUDNN_STATUS_SUCCESS);
  }
  SECTION("a workspace smaller than the plan's is refused") {
    pack(20, g.alloc(128), g.alloc(64));
    auto r = g.execute(handle_id, 16, 20);
    CHECK(r.blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK_THAT(r.error(), Catch::Contains("the plan needs 256 bytes"));
    CHECK(fake_cudnn().executions.empty());
  }
  SECTION("a by-value tensor's host pointer is refused with the reason") {
    auto by_value = plan_of(30, true);
    float value = 2;
    pack(20, reinterpret_cast<uintptr_t>(&value), workspace);
    auto r = g.execute(handle_id, by_value, 20);
    CHECK(r.blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK_THAT(r.error(), Catch::Contains("passed by value"));
  }
  SECTION("unknown handles and descriptors reach no library") {
    pack(20, g.alloc(128), workspace);
    CHECK(g.execute(handle_id + 1, 16, 20).blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK(g.execute(handle_id, 17, 20).blas_status() == CUDNN_STATUS_BAD_PARAM);
    REQUIRE(g.on(ids::cudnnBackendDestroyDescriptor, 20).blas_status() == CUDNN_STATUS_SUCCESS);
    auto r = g.execute(handle_id, 16, 20);
    CHECK(r.blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK_THAT(r.error(), Catch::Contains("cudnnBackendDescriptor_t 20 is not a handle"));
    CHECK(fake_cudnn().executions.empty());
  }
}

TEST_CASE("batch-normalization inference over tensor descriptors: values packed as the spec "
          "says, extents from the descriptors",
          "[executor][cudnn]") {
  fake_gpu g;
  g.create_handle(handle_id);
  g.legacy_tensor(31, 1, 2, 2, 2); // x and y: 8 floats
  g.legacy_tensor(32, 1, 2, 1, 1); // scale, bias, mean, variance: 2 floats
  auto o = g.example_bn();
  auto x = o.x, y = o.y;
  auto call = [&](uint64_t x_at, uint64_t alpha_bytes) {
    auto at = o;
    at.x = x_at;
    return g.bn_inference(handle_id, 31, 32, at, alpha_bytes, 0.0);
  };
  auto r = call(x, 4);
  INFO(r.error());
  REQUIRE(r.blas_status() == CUDNN_STATUS_SUCCESS);
  REQUIRE(fake_cudnn().batch_norms.size() == 1);
  CHECK(fake_cudnn().batch_norms[0].alpha == 1.0f);
  CHECK(fake_cudnn().batch_norms[0].beta == 0.0f);
  CHECK(fake_cudnn().batch_norms[0].x == reinterpret_cast<void*>(static_cast<uintptr_t>(x)));
  const auto* out = reinterpret_cast<const float*>(static_cast<uintptr_t>(y));
  // Channel 0: 2 * (x - 2) / 2 + 1; channel 1: 0.5 * (x - 20) / 10 - 1.
  CHECK(std::vector<float>(out, out + 8)
        == std::vector<float>{0, 1, 2, 3, -1.5f, -1, -0.5f, 0});

  // A scaling factor of the wrong size for float data, and x in an
  // allocation smaller than its descriptor, reach no library.
  auto wrong = call(x, 8);
  CHECK(wrong.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(wrong.error(), Catch::Contains("alpha"));
  auto small = call(g.alloc(16), 4);
  CHECK(small.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(small.error(), Catch::Contains("x: address"));
  CHECK_THAT(small.error(), Catch::Contains("+ 32 bytes is outside this session's allocations"));
  CHECK(fake_cudnn().batch_norms.size() == 1);

  // The descriptors' getters answer from the session's descriptor.
  arg_packer get;
  get.value(uint64_t{31});
  get.value(int{4});
  auto nd = g.call(ids::cudnnGetTensorNdDescriptor, get);
  REQUIRE(nd.blas_status() == CUDNN_STATUS_SUCCESS);
  REQUIRE(nd.library_outputs().data_size() == 4);
  int dims[4] = {};
  std::memcpy(dims, nd.library_outputs().data(2).data(), sizeof(dims));
  CHECK(std::vector<int>(dims, dims + 4) == std::vector<int>{1, 2, 2, 2});
}

TEST_CASE("a tanh RNN through LibraryCall ops: weight params inside the app's weight space, "
          "the forward's output; operands outside the session's allocations reach no library",
          "[executor][cudnn]") {
  fake_gpu g;
  g.create_handle(handle_id);
  constexpr int steps = 2, batch = 1, input = 2, hidden = 2;
  g.made(ids::cudnnCreateRNNDescriptor, 41);
  REQUIRE(g.rnn(41, CUDNN_RNN_TANH, input, hidden).blas_status() == CUDNN_STATUS_SUCCESS);
  g.made(ids::cudnnCreateRNNDataDescriptor, 42);
  g.made(ids::cudnnCreateRNNDataDescriptor, 43);
  g.rnn_data(42, steps, batch, input);
  g.rnn_data(43, steps, batch, hidden);
  g.nd_tensor(44, {1, batch, hidden});
  g.nd_tensor(45, {1});
  g.nd_tensor(46, {1});

  // Packed data spans the sum of its sequence lengths, unpacked data every
  // sequence padded to the longest.
  for (auto layout :
       {CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED}) {
    INFO(static_cast<int>(layout));
    auto before = fake_cudnn().rnn_data;
    g.made(ids::cudnnCreateRNNDataDescriptor, 47);
    arg_packer p;
    p.value(uint64_t{47});
    p.value(CUDNN_DATA_FLOAT);
    p.value(layout);
    p.value(int{3});
    p.value(int{2});
    p.value(int{2});
    std::vector<int> lengths{3, 1};
    p.bytes(lengths.data(), 8);
    p.value(uint8_t{0});
    g.ok(ids::cudnnSetRNNDataDescriptor, p);
    cudnnRNNDataDescriptor_t data = nullptr;
    for (auto* made : fake_cudnn().rnn_data)
      if (before.count(made) == 0)
        data = reinterpret_cast<cudnnRNNDataDescriptor_t>(made);
    REQUIRE(data != nullptr);
    CHECK(gleam::executor::cudnn_rnn_data_bytes(g.cudnn, data)
          == (layout == CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_PACKED ? 4 * 2 * 4 : 3 * 2 * 2 * 4));
    REQUIRE(g.on(ids::cudnnDestroyRNNDataDescriptor, 47).blas_status() == CUDNN_STATUS_SUCCESS);
  }

  // The data descriptor comes back as set, its padding fill sized by its
  // data type.
  arg_packer get;
  get.value(uint64_t{42});
  get.value(int{batch});
  get.value(uint8_t{1});
  auto got = g.call(ids::cudnnGetRNNDataDescriptor, get);
  INFO(got.error());
  REQUIRE(got.blas_status() == CUDNN_STATUS_SUCCESS);
  CHECK(g.output<int>(got, 2) == steps);
  CHECK(g.output<int>(got, 3) == batch);
  CHECK(g.output<int>(got, 4) == input);
  CHECK(g.output<int>(got, 5) == steps);
  CHECK(got.library_outputs().data(6).size() == sizeof(float));

  arg_packer size;
  size.value(uint64_t{handle_id});
  size.value(uint64_t{41});
  auto space = g.call(ids::cudnnGetRNNWeightSpaceSize, size);
  REQUIRE(space.blas_status() == CUDNN_STATUS_SUCCESS);
  auto space_bytes = g.output<size_t>(space, 0);
  CHECK(space_bytes == (hidden * input + hidden * hidden + 2 * hidden) * sizeof(float));

  // W = 0.5 I, R = 0.25 I, biases 0.1 and 0: the app writes them where
  // the weight params say.
  std::vector<float> weights{0.5f, 0, 0, 0.5f, 0.25f, 0, 0, 0.25f, 0.1f, 0.1f, 0, 0};
  auto w = g.floats(weights);
  auto [m0, b0] = g.weight_params(handle_id, 41, w, space_bytes, 0, 45, 46);
  CHECK(m0 == w);
  CHECK(b0 == w + 8 * sizeof(float));
  auto [m1, b1] = g.weight_params(handle_id, 41, w, space_bytes, 1, 45, 46);
  CHECK(m1 == w + 4 * sizeof(float));
  CHECK(b1 == w + 10 * sizeof(float));
  // The app's matrix descriptor was filled in place: 1 x hidden x hidden.
  arg_packer nd;
  nd.value(uint64_t{45});
  nd.value(int{3});
  auto shape = g.call(ids::cudnnGetTensorNdDescriptor, nd);
  REQUIRE(shape.blas_status() == CUDNN_STATUS_SUCCESS);
  int dims[3] = {};
  std::memcpy(dims, shape.library_outputs().data(2).data(), sizeof(dims));
  CHECK(std::vector<int>(dims, dims + 3) == std::vector<int>{1, hidden, hidden});
  // A weight space smaller than the app says is refused before the library.
  arg_packer short_space;
  short_space.value(uint64_t{handle_id});
  short_space.value(uint64_t{41});
  short_space.value(int32_t{0});
  short_space.value(space_bytes);
  short_space.value(g.alloc(space_bytes - 4));
  short_space.value(int32_t{0});
  short_space.value(uint64_t{45});
  short_space.value(uint8_t{1});
  short_space.value(uint64_t{46});
  short_space.value(uint8_t{1});
  auto refused_space = g.call(ids::cudnnGetRNNWeightParams, short_space);
  CHECK(refused_space.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(refused_space.error(), Catch::Contains("weightSpace"));

  arg_packer temp;
  temp.value(uint64_t{handle_id});
  temp.value(uint64_t{41});
  temp.value(CUDNN_FWD_MODE_INFERENCE);
  temp.value(uint64_t{42});
  temp.value(uint8_t{1});
  auto sizes = g.call(ids::cudnnGetRNNTempSpaceSizes, temp);
  REQUIRE(sizes.blas_status() == CUDNN_STATUS_SUCCESS);
  CHECK(g.output<size_t>(sizes, 0) == 64);
  CHECK(g.output<size_t>(sizes, 1) == 0);

  std::vector<float> x{1, 2, 3, 4};
  auto o = cudnn_fake_rnn_operands(g, x, w, space_bytes);
  auto r = g.rnn_forward(handle_id, 41, 42, 43, 44, 0, o);
  INFO(r.error());
  REQUIRE(r.blas_status() == CUDNN_STATUS_SUCCESS);
  // h1 = tanh(0.5 x1 + 0.1), h2 = tanh(0.5 x2 + 0.25 h1 + 0.1).
  float h10 = std::tanh(0.5f * 1 + 0.1f), h11 = std::tanh(0.5f * 2 + 0.1f);
  float h20 = std::tanh(0.5f * 3 + 0.25f * h10 + 0.1f);
  float h21 = std::tanh(0.5f * 4 + 0.25f * h11 + 0.1f);
  const auto* y = reinterpret_cast<const float*>(static_cast<uintptr_t>(o.y));
  CHECK(y[0] == Approx(h10));
  CHECK(y[1] == Approx(h11));
  CHECK(y[2] == Approx(h20));
  CHECK(y[3] == Approx(h21));
  const auto* hy = reinterpret_cast<const float*>(static_cast<uintptr_t>(o.hy));
  CHECK(hy[0] == Approx(h20));
  CHECK(hy[1] == Approx(h21));
  CHECK(fake_cudnn().computed == std::vector<std::string>{"cudnnRNNForward"});

  SECTION("x in an allocation shorter than its data descriptor") {
    auto at = o;
    at.x = g.alloc(12);
    auto refused = g.rnn_forward(handle_id, 41, 42, 43, 44, 0, at);
    CHECK(refused.blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK(refused.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(refused.error(), Catch::Contains("x: address"));
    CHECK_THAT(refused.error(), Catch::Contains("+ 16 bytes is outside this session's allocations"));
  }
  SECTION("a weight space the app says is larger than its allocation") {
    auto at = o;
    at.weight_bytes = space_bytes + 4;
    auto refused = g.rnn_forward(handle_id, 41, 42, 43, 44, 0, at);
    CHECK(refused.blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK_THAT(refused.error(), Catch::Contains("weightSpace"));
  }
  SECTION("a host pointer as the final hidden state") {
    std::vector<float> host(2);
    auto at = o;
    at.hy = reinterpret_cast<uintptr_t>(host.data());
    auto refused = g.rnn_forward(handle_id, 41, 42, 43, 44, 0, at);
    CHECK(refused.blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK_THAT(refused.error(), Catch::Contains("hy: address"));
    CHECK(host == std::vector<float>{0, 0});
  }
  SECTION("a cell-state descriptor the session does not hold") {
    auto refused = g.rnn_forward(handle_id, 41, 42, 43, 44, 99, o);
    CHECK(refused.blas_status() == CUDNN_STATUS_BAD_PARAM);
    CHECK_THAT(refused.error(), Catch::Contains("cudnnTensorDescriptor_t 99 is not a handle"));
  }
  CHECK(fake_cudnn().computed.size() == 1);

  // The session's end destroys what the app left, RNN data before RNNs.
  fake_cudnn().destroyed.clear();
  g.exec->close_session(g.session);
  CHECK(fake_cudnn().rnns.empty());
  CHECK(fake_cudnn().rnn_data.empty());
  CHECK(fake_cudnn().destroyed.front() == "rnn data");
}

TEST_CASE("CTC loss v8: the costs of the forward recursion; lengths and costs outside the "
          "session's allocations are refused",
          "[executor][cudnn]") {
  fake_gpu g;
  g.create_handle(handle_id);
  g.made(ids::cudnnCreateCTCLossDescriptor, 51);
  g.ctc_descriptor(51, 4);
  arg_packer get;
  get.value(uint64_t{51});
  auto desc = g.call(ids::cudnnGetCTCLossDescriptor_v8, get);
  REQUIRE(desc.blas_status() == CUDNN_STATUS_SUCCESS);
  CHECK(g.output<cudnnDataType_t>(desc, 0) == CUDNN_DATA_FLOAT);
  CHECK(g.output<cudnnLossNormalizationMode_t>(desc, 1) == CUDNN_LOSS_NORMALIZATION_SOFTMAX);
  CHECK(g.output<int>(desc, 3) == 4);
  // Two time steps, a batch of one, blank and one letter: uniform logits.
  g.nd_tensor(52, {2, 1, 2});
  arg_packer size;
  size.value(uint64_t{handle_id});
  size.value(CUDNN_CTC_LOSS_ALGO_DETERMINISTIC);
  size.value(uint64_t{51});
  size.value(uint64_t{52});
  size.value(uint64_t{52});
  auto ws = g.call(ids::cudnnGetCTCLossWorkspaceSize_v8, size);
  REQUIRE(ws.blas_status() == CUDNN_STATUS_SUCCESS);
  auto work_bytes = g.output<size_t>(ws, 0);
  CHECK(work_bytes == 128);
  auto probs = g.floats({0, 0, 0, 0});
  auto labels = g.ints({1}), label_lengths = g.ints({1}), input_lengths = g.ints({2});
  auto costs = g.floats({-1});
  auto work = g.alloc(work_bytes);
  auto r = g.ctc_loss(handle_id, 51, 52, probs, labels, label_lengths, input_lengths, costs, work,
                      work_bytes);
  INFO(r.error());
  REQUIRE(r.blas_status() == CUDNN_STATUS_SUCCESS);
  // Paths "1 1", "0 1" and "1 0", each 1/4: -ln(3/4).
  CHECK(*reinterpret_cast<const float*>(static_cast<uintptr_t>(costs))
        == Approx(-std::log(0.75f)));

  std::vector<char> elsewhere(64);
  auto outside = reinterpret_cast<uintptr_t>(elsewhere.data());
  auto refused = g.ctc_loss(handle_id, 51, 52, probs, labels, outside, input_lengths, costs, work,
                            work_bytes);
  CHECK(refused.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(refused.error(), Catch::Contains("labelLengths: address"));
  auto short_costs = g.ctc_loss(handle_id, 51, 52, probs, labels, label_lengths, input_lengths,
                                g.alloc(2), work, work_bytes);
  CHECK(short_costs.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(short_costs.error(), Catch::Contains("costs: address"));
  auto short_work = g.ctc_loss(handle_id, 51, 52, probs, labels, label_lengths, input_lengths,
                               costs, g.alloc(64), work_bytes);
  CHECK(short_work.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(short_work.error(), Catch::Contains("workspace"));
  CHECK(fake_cudnn().computed == std::vector<std::string>{"cudnnCTCLoss_v8"});

  // The host-array form: the labels and lengths travel with the call, the
  // server checks their sizes against its own descriptor (a batch of one:
  // one length each, the labels their sum).
  auto legacy = [&](const std::vector<int>& label_list, const std::vector<int>& lengths,
                    uint64_t out) {
    arg_packer p;
    p.value(uint64_t{handle_id});
    p.value(uint64_t{52});
    p.value(probs);
    p.bytes(label_list.data(), label_list.size() * sizeof(int));
    p.bytes(lengths.data(), lengths.size() * sizeof(int));
    int input_length = 2;
    p.bytes(&input_length, sizeof(int));
    p.value(out);
    p.value(uint64_t{0});
    p.value(uint64_t{0});
    p.value(CUDNN_CTC_LOSS_ALGO_DETERMINISTIC);
    p.value(uint64_t{51});
    p.value(work);
    p.value(work_bytes);
    return g.call(ids::cudnnCTCLoss, p);
  };
  auto host_costs = g.floats({-1});
  auto host_form = legacy({1}, {1}, host_costs);
  INFO(host_form.error());
  REQUIRE(host_form.blas_status() == CUDNN_STATUS_SUCCESS);
  CHECK(*reinterpret_cast<const float*>(static_cast<uintptr_t>(host_costs))
        == Approx(-std::log(0.75f)));
  // Labels that do not add up to the lengths reach no library.
  auto ragged = legacy({1, 1}, {1}, host_costs);
  CHECK(ragged.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(ragged.error(), Catch::Contains("hostLabels arrived with 8 bytes"));
  auto negative = legacy({7}, {-1}, host_costs);
  CHECK(negative.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK(fake_cudnn().computed
        == std::vector<std::string>{"cudnnCTCLoss_v8", "cudnnCTCLoss"});
}

TEST_CASE("normalization inference per channel and the affine grid generator over the "
          "session's descriptors",
          "[executor][cudnn]") {
  fake_gpu g;
  g.create_handle(handle_id);
  g.legacy_tensor(31, 1, 2, 2, 2);
  g.legacy_tensor(32, 1, 2, 1, 1);
  auto o = g.example_bn();
  auto normalize = [&](uint64_t y) {
    arg_packer p;
    p.value(uint64_t{handle_id});
    p.value(CUDNN_NORM_PER_CHANNEL);
    p.value(CUDNN_NORM_OPS_NORM);
    p.value(CUDNN_NORM_ALGO_STANDARD);
    float one = 1, zero = 0;
    p.bytes(&one, 4);
    p.bytes(&zero, 4);
    p.value(uint64_t{31});
    p.value(o.x);
    p.value(uint64_t{32});
    p.value(o.scale);
    p.value(o.bias);
    p.value(uint64_t{32});
    p.value(o.mean);
    p.value(o.var);
    p.value(uint64_t{0});
    p.value(uint64_t{0});
    p.value(uint64_t{0});
    p.value(uint64_t{31});
    p.value(y);
    p.value(0.0);
    p.value(int{1});
    return g.call(ids::cudnnNormalizationForwardInference, p);
  };
  auto r = normalize(o.y);
  INFO(r.error());
  REQUIRE(r.blas_status() == CUDNN_STATUS_SUCCESS);
  const auto* out = reinterpret_cast<const float*>(static_cast<uintptr_t>(o.y));
  CHECK(std::vector<float>(out, out + 8)
        == std::vector<float>{0, 1, 2, 3, -1.5f, -1, -0.5f, 0});
  auto short_y = normalize(g.alloc(28));
  CHECK(short_y.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(short_y.error(), Catch::Contains("y: address"));

  // A 1x1x2x2 transformer: the identity's grid is the corners, (x, y).
  g.made(ids::cudnnCreateSpatialTransformerDescriptor, 61);
  arg_packer set;
  set.value(uint64_t{61});
  set.value(CUDNN_SAMPLER_BILINEAR);
  set.value(CUDNN_DATA_FLOAT);
  set.value(int{4});
  std::vector<int> dims{1, 1, 2, 2};
  set.bytes(dims.data(), 16);
  g.ok(ids::cudnnSetSpatialTransformerNdDescriptor, set);
  auto grid_of = [&](uint64_t theta, uint64_t grid) {
    arg_packer p;
    p.value(uint64_t{handle_id});
    p.value(uint64_t{61});
    p.value(theta);
    p.value(grid);
    return g.call(ids::cudnnSpatialTfGridGeneratorForward, p);
  };
  auto theta = g.floats({1, 0, 0, 0, 1, 0});
  auto grid = g.floats(std::vector<float>(8, 9));
  auto made = grid_of(theta, grid);
  INFO(made.error());
  REQUIRE(made.blas_status() == CUDNN_STATUS_SUCCESS);
  const auto* points = reinterpret_cast<const float*>(static_cast<uintptr_t>(grid));
  CHECK(std::vector<float>(points, points + 8)
        == std::vector<float>{-1, -1, 1, -1, -1, 1, 1, 1});
  auto short_grid = grid_of(theta, g.alloc(28));
  CHECK(short_grid.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(short_grid.error(), Catch::Contains("grid: address"));
  CHECK(fake_cudnn().computed
        == std::vector<std::string>{"cudnnNormalizationForwardInference",
                                    "cudnnSpatialTfGridGeneratorForward"});
  // Destroyed, the transformer's dimensions are forgotten: its grid has
  // no extent the server knows.
  REQUIRE(fake_cudnn().transformers.size() == 1);
  auto* transformer =
    reinterpret_cast<cudnnSpatialTransformerDescriptor_t>(*fake_cudnn().transformers.begin());
  CHECK(gleam::executor::cudnn_grid_bytes(g.cudnn, transformer) == 32);
  REQUIRE(g.on(ids::cudnnDestroySpatialTransformerDescriptor, 61).blas_status()
          == CUDNN_STATUS_SUCCESS);
  CHECK(gleam::executor::cudnn_grid_bytes(g.cudnn, transformer)
        == gleam::wire::extents::invalid_extent);
}

TEST_CASE("cudnn_api loads the vendor's cuDNN and refuses Gleam's own", "[executor][cudnn]") {
  auto own = cudnn_api::load(gleam::test::build_path("lib"));
  REQUIRE_FALSE(own);
  CHECK_THAT(caf::to_string(own.error()), Catch::Contains("Gleam's interposer"));
  auto missing = cudnn_api::load("/nonexistent");
  REQUIRE_FALSE(missing);
  CHECK_THAT(caf::to_string(missing.error()), Catch::Contains("GLEAM_CUDNN_DIR"));
  std::string ignored;
  if (gleam::test::run_command("test -e /usr/local/cuda/lib64/libcudnn.so.9", ignored) != 0) {
    WARN("no vendor cuDNN in /usr/local/cuda/lib64; the loading half is skipped");
    return;
  }
  auto vendor = cudnn_api::load("/usr/local/cuda/lib64");
  INFO((vendor ? std::string{} : caf::to_string(vendor.error())));
  REQUIRE(vendor);
  CHECK((*vendor)->cudnnBackendExecute != nullptr);
  CHECK((*vendor)->cudnnBatchNormalizationForwardInference != nullptr);
  CHECK((*vendor)->cudnnGetCudartVersion != nullptr);
  CHECK((*vendor)->cudnnGetVersion() / 10000 == CUDNN_MAJOR);
}

// --- on the real GPU --------------------------------------------------------

namespace {

using real_gpu = cudnn_calls<gleam::test::real_client>;

/// Builds, on `g`'s session, a backend convolution of a 1x1x4x4 float input
/// (uid 'x') with a 1x1x3x3 filter (uid 'w'), padding 1, into a 1x1x4x4
/// output (uid 'y'), under ids from 100: its graph (handle `handle`),
/// heuristics, every engine configuration they give, and the plan of the
/// first configuration that finalizes. Returns the plan's id.
uint64_t convolution_plan(real_gpu& g, uint64_t handle) {
  g.backend_tensor(101, 'x', {1, 1, 4, 4}, {16, 16, 4, 1});
  g.backend_tensor(102, 'w', {1, 1, 3, 3}, {9, 9, 3, 1});
  g.backend_tensor(103, 'y', {1, 1, 4, 4}, {16, 16, 4, 1});
  g.backend(104, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  REQUIRE(g.set(104, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE,
                std::vector<int32_t>{CUDNN_DATA_FLOAT})
            .blas_status()
          == 0);
  REQUIRE(g.set(104, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE,
                std::vector<int32_t>{CUDNN_CROSS_CORRELATION})
            .blas_status()
          == 0);
  REQUIRE(g.set(104, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64,
                std::vector<int64_t>{2})
            .blas_status()
          == 0);
  for (auto name : {CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                    CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS})
    REQUIRE(g.set(104, name, CUDNN_TYPE_INT64, std::vector<int64_t>{1, 1}).blas_status() == 0);
  REQUIRE(g.on(ids::cudnnBackendFinalize, 104).blas_status() == CUDNN_STATUS_SUCCESS);
  g.backend(105, CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  REQUIRE(g.set_descriptors(105, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, {101}).blas_status()
          == 0);
  REQUIRE(g.set_descriptors(105, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, {102}).blas_status()
          == 0);
  REQUIRE(g.set_descriptors(105, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, {103}).blas_status()
          == 0);
  REQUIRE(g.set_descriptors(105, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, {104})
            .blas_status()
          == 0);
  for (auto [name, value] : {std::pair{CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, 1.0f},
                             std::pair{CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, 0.0f}})
    REQUIRE(g.set(105, name, CUDNN_TYPE_FLOAT, std::vector<float>{value}).blas_status() == 0);
  REQUIRE(g.on(ids::cudnnBackendFinalize, 105).blas_status() == CUDNN_STATUS_SUCCESS);
  g.backend(106, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  REQUIRE(g.set(106, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE,
                std::vector<uint64_t>{handle})
            .blas_status()
          == 0);
  REQUIRE(g.set_descriptors(106, CUDNN_ATTR_OPERATIONGRAPH_OPS, {105}).blas_status() == 0);
  REQUIRE(g.on(ids::cudnnBackendFinalize, 106).blas_status() == CUDNN_STATUS_SUCCESS);
  g.backend(107, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  REQUIRE(g.set_descriptors(107, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, {106}).blas_status() == 0);
  REQUIRE(g.set(107, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE,
                std::vector<int32_t>{CUDNN_HEUR_MODE_INSTANT})
            .blas_status()
          == 0);
  REQUIRE(g.on(ids::cudnnBackendFinalize, 107).blas_status() == CUDNN_STATUS_SUCCESS);
  auto announced = g.fill(107, {});
  INFO(announced.error());
  REQUIRE(announced.blas_status() == CUDNN_STATUS_SUCCESS);
  auto count = real_gpu::count_of(announced);
  REQUIRE(count > 0);
  std::vector<uint64_t> configs;
  for (int64_t i = 0; i < count; ++i) {
    configs.push_back(200 + static_cast<uint64_t>(i));
    g.backend(configs.back(), CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  }
  auto filled = g.fill(107, configs);
  REQUIRE(filled.blas_status() == CUDNN_STATUS_SUCCESS);
  auto got = real_gpu::count_of(filled);
  for (int64_t i = 0; i < got && i < count; ++i) {
    uint64_t plan = 300 + static_cast<uint64_t>(i);
    g.backend(plan, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    REQUIRE(g.set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE,
                  std::vector<uint64_t>{handle})
              .blas_status()
            == 0);
    REQUIRE(g.set_descriptors(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                              {configs[static_cast<size_t>(i)]})
              .blas_status()
            == 0);
    if (g.on(ids::cudnnBackendFinalize, plan).blas_status() == CUDNN_STATUS_SUCCESS)
      return plan;
  }
  FAIL("no engine configuration of " << got << " finalizes as a plan");
  return 0;
}

} // namespace

TEST_CASE("cuDNN on the GPU: a backend convolution and batch-normalization inference give the "
          "expected values; a short output is refused",
          "[gpu][executor][cudnn]") {
  real_gpu g;
  g.create_handle(handle_id);
  auto plan = convolution_plan(g, handle_id);
  arg_packer size;
  size.value(plan);
  size.value(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
  size.value(CUDNN_TYPE_INT64);
  size.value(int64_t{1});
  size.value(uint8_t{1});
  auto ws = g.call(ids::cudnnBackendGetAttribute, size);
  REQUIRE(ws.blas_status() == CUDNN_STATUS_SUCCESS);
  REQUIRE(ws.library_outputs().data_size() == 2);
  int64_t workspace_size = 0;
  std::memcpy(&workspace_size, ws.library_outputs().data(1).data(), sizeof(workspace_size));
  auto workspace = workspace_size > 0 ? g.alloc(static_cast<size_t>(workspace_size)) : 0;

  // Small integers: every sum is exact in float.
  std::vector<float> x(16), w(9, 1.0f), expect(16, 0.0f);
  for (int i = 0; i < 16; ++i)
    x[static_cast<size_t>(i)] = static_cast<float>(i);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      for (int dr = -1; dr <= 1; ++dr)
        for (int dc = -1; dc <= 1; ++dc)
          if (r + dr >= 0 && r + dr < 4 && c + dc >= 0 && c + dc < 4)
            expect[static_cast<size_t>(r * 4 + c)] += x[static_cast<size_t>((r + dr) * 4 + c + dc)];
  auto dx = g.upload(x.data(), 64), dw = g.upload(w.data(), 36);
  auto run_with = [&](uint64_t pack, uint64_t y) {
    g.backend(pack, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    REQUIRE(g.set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64,
                  std::vector<int64_t>{'x', 'w', 'y'})
              .blas_status()
            == 0);
    REQUIRE(g.set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                  std::vector<uint64_t>{dx, dw, y})
              .blas_status()
            == 0);
    REQUIRE(g.set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                  std::vector<uint64_t>{workspace})
              .blas_status()
            == 0);
    REQUIRE(g.on(ids::cudnnBackendFinalize, pack).blas_status() == CUDNN_STATUS_SUCCESS);
    return g.execute(handle_id, plan, pack);
  };
  auto dy = g.alloc(64);
  auto r = run_with(400, dy);
  INFO(r.error());
  REQUIRE(r.blas_status() == CUDNN_STATUS_SUCCESS);
  CHECK(g.download<float>(dy, 16) == expect);
  // An output one element short of the tensor: refused before the library.
  auto short_y = g.alloc(60);
  auto refused = run_with(401, short_y);
  CHECK(refused.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(refused.error(), Catch::Contains("the data pointer of tensor 121"));

  // Batch normalization (inference) of a 1x2x2x2 tensor.
  g.legacy_tensor(31, 1, 2, 2, 2);
  g.legacy_tensor(32, 1, 2, 1, 1);
  auto o = g.example_bn();
  auto bn = g.bn_inference(handle_id, 31, 32, o, 4, 1e-5);
  INFO(bn.error());
  REQUIRE(bn.blas_status() == CUDNN_STATUS_SUCCESS);
  auto by = o.y;
  auto out = g.download<float>(by, 8);
  std::vector<float> want{0, 1, 2, 3, -1.5f, -1, -0.5f, 0};
  for (size_t i = 0; i < 8; ++i)
    CHECK(out[i] == Approx(want[i]).margin(1e-4));
}

TEST_CASE("cuDNN on the GPU: an LSTM forward equals a host LSTM over the weights its weight "
          "params name; CTC loss of a known case",
          "[gpu][executor][cudnn]") {
  real_gpu g;
  g.create_handle(handle_id);
  constexpr int steps = 2, input = 3, hidden = 2;
  // Dropout (none): cuDNN's RNN descriptor names one.
  g.made(ids::cudnnCreateDropoutDescriptor, 40);
  arg_packer states_size;
  states_size.value(uint64_t{handle_id});
  auto ss = g.call(ids::cudnnDropoutGetStatesSize, states_size);
  REQUIRE(ss.blas_status() == CUDNN_STATUS_SUCCESS);
  auto state_bytes = real_gpu::output<size_t>(ss, 0);
  arg_packer dropout;
  dropout.value(uint64_t{40});
  dropout.value(uint64_t{handle_id});
  dropout.value(0.0f);
  dropout.value(g.alloc(state_bytes));
  dropout.value(state_bytes);
  dropout.value(static_cast<unsigned long long>(1234));
  g.ok(ids::cudnnSetDropoutDescriptor, dropout);

  g.made(ids::cudnnCreateRNNDescriptor, 41);
  auto set = g.rnn(41, CUDNN_LSTM, input, hidden, 40);
  INFO(set.error());
  REQUIRE(set.blas_status() == CUDNN_STATUS_SUCCESS);
  g.made(ids::cudnnCreateRNNDataDescriptor, 42);
  g.made(ids::cudnnCreateRNNDataDescriptor, 43);
  g.rnn_data(42, steps, 1, input);
  g.rnn_data(43, steps, 1, hidden);
  g.nd_tensor(44, {1, 1, hidden});
  g.made(ids::cudnnCreateTensorDescriptor, 45);
  g.made(ids::cudnnCreateTensorDescriptor, 46);

  arg_packer size;
  size.value(uint64_t{handle_id});
  size.value(uint64_t{41});
  auto sr = g.call(ids::cudnnGetRNNWeightSpaceSize, size);
  REQUIRE(sr.blas_status() == CUDNN_STATUS_SUCCESS);
  auto space_bytes = real_gpu::output<size_t>(sr, 0);
  std::vector<float> space(space_bytes / sizeof(float));
  for (size_t i = 0; i < space.size(); ++i)
    space[i] = 0.05f * static_cast<float>(static_cast<int>(i % 7) - 3);
  auto w = g.upload(space.data(), space_bytes);
  // Linear layers 0-3: the input weights of gates i, f, g, o; 4-7: the
  // recurrent ones; each with its bias.
  std::vector<const float*> mat(8), bias(8);
  for (int32_t layer = 0; layer < 8; ++layer) {
    auto [m, b] = g.weight_params(handle_id, 41, w, space_bytes, layer, 45, 46);
    REQUIRE(m >= w);
    REQUIRE(b >= w);
    mat[static_cast<size_t>(layer)] = space.data() + (m - w) / sizeof(float);
    bias[static_cast<size_t>(layer)] = space.data() + (b - w) / sizeof(float);
  }

  std::vector<float> x{0.5f, -1, 0.25f, 1, 0.5f, -0.5f};
  std::vector<float> h(hidden, 0), c(hidden, 0), expect;
  auto sigmoid = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  for (int t = 0; t < steps; ++t) {
    std::vector<float> gate(4 * hidden);
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < hidden; ++j) {
        float a = bias[static_cast<size_t>(k)][j] + bias[static_cast<size_t>(k + 4)][j];
        for (int i = 0; i < input; ++i)
          a += mat[static_cast<size_t>(k)][j * input + i] * x[static_cast<size_t>(t * input + i)];
        for (int i = 0; i < hidden; ++i)
          a += mat[static_cast<size_t>(k + 4)][j * hidden + i] * h[static_cast<size_t>(i)];
        gate[static_cast<size_t>(k * hidden + j)] = a;
      }
    for (int j = 0; j < hidden; ++j) {
      auto at = [&](int k) { return gate[static_cast<size_t>(k * hidden + j)]; };
      float cj = sigmoid(at(1)) * c[static_cast<size_t>(j)] + sigmoid(at(0)) * std::tanh(at(2));
      c[static_cast<size_t>(j)] = cj;
      h[static_cast<size_t>(j)] = sigmoid(at(3)) * std::tanh(cj);
    }
    expect.insert(expect.end(), h.begin(), h.end());
  }

  arg_packer temp;
  temp.value(uint64_t{handle_id});
  temp.value(uint64_t{41});
  temp.value(CUDNN_FWD_MODE_INFERENCE);
  temp.value(uint64_t{42});
  temp.value(uint8_t{1});
  auto tr = g.call(ids::cudnnGetRNNTempSpaceSizes, temp);
  REQUIRE(tr.blas_status() == CUDNN_STATUS_SUCCESS);
  real_gpu::rnn_operands o{};
  o.lengths = g.upload(std::vector<int>{steps}.data(), sizeof(int));
  o.x = g.upload(x.data(), x.size() * sizeof(float));
  o.y = g.alloc(steps * hidden * sizeof(float));
  o.hy = g.alloc(hidden * sizeof(float));
  o.cy = g.alloc(hidden * sizeof(float));
  o.weights = w;
  o.weight_bytes = space_bytes;
  o.work_bytes = real_gpu::output<size_t>(tr, 0);
  o.work = o.work_bytes > 0 ? g.alloc(o.work_bytes) : 0;
  auto r = g.rnn_forward(handle_id, 41, 42, 43, 44, 44, o);
  INFO(r.error());
  REQUIRE(r.blas_status() == CUDNN_STATUS_SUCCESS);
  auto y = g.download<float>(o.y, static_cast<size_t>(steps * hidden));
  for (size_t i = 0; i < expect.size(); ++i)
    CHECK(y[i] == Approx(expect[i]).margin(1e-5));
  auto cy = g.download<float>(o.cy, hidden);
  CHECK(cy[0] == Approx(c[0]).margin(1e-5));
  CHECK(cy[1] == Approx(c[1]).margin(1e-5));
  // An output one step short of its data descriptor: refused.
  auto at = o;
  at.y = g.alloc(hidden * sizeof(float));
  auto refused = g.rnn_forward(handle_id, 41, 42, 43, 44, 44, at);
  CHECK(refused.blas_status() == CUDNN_STATUS_BAD_PARAM);
  CHECK_THAT(refused.error(), Catch::Contains("y: address"));

  // CTC loss: two steps of uniform logits over blank and one letter, the
  // label "1": paths 11, 01, 10 of 1/4 each, -ln(3/4).
  g.made(ids::cudnnCreateCTCLossDescriptor, 51);
  g.ctc_descriptor(51, 1);
  g.nd_tensor(52, {2, 1, 2});
  arg_packer ws;
  ws.value(uint64_t{handle_id});
  ws.value(CUDNN_CTC_LOSS_ALGO_DETERMINISTIC);
  ws.value(uint64_t{51});
  ws.value(uint64_t{52});
  ws.value(uint64_t{52});
  auto wr = g.call(ids::cudnnGetCTCLossWorkspaceSize_v8, ws);
  INFO(wr.error());
  REQUIRE(wr.blas_status() == CUDNN_STATUS_SUCCESS);
  auto work_bytes = real_gpu::output<size_t>(wr, 0);
  std::vector<float> logits(4, 0.0f);
  std::vector<int> one{1}, two{2};
  auto costs = g.alloc(sizeof(float));
  auto loss = g.ctc_loss(handle_id, 51, 52, g.upload(logits.data(), 16),
                         g.upload(one.data(), 4), g.upload(one.data(), 4),
                         g.upload(two.data(), 4), costs, work_bytes > 0 ? g.alloc(work_bytes) : 0,
                         work_bytes, g.alloc(16));
  INFO(loss.error());
  REQUIRE(loss.blas_status() == CUDNN_STATUS_SUCCESS);
  CHECK(g.download<float>(costs, 1)[0] == Approx(-std::log(0.75)).margin(1e-5));
}
