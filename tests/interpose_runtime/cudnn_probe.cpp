// interpose_cudnn_probe LIB SCENARIO: loads LIB (a libcudart.so.13) and the
// libcudnn.so.9 next to it with dlopen, as an app would, and runs one
// scenario against a server (fake_gpu_server in the CPU tests, whose fake
// cuDNN keeps backend attributes as they arrive and computes batch
// normalization). Prints one "key=value" line per observation; exit code 0
// unless the libraries could not be used.
//
//   cudnn   a handle on an app stream (cudnnGetStream answered locally),
//           the versions, tensor descriptors and a batch-normalization
//           inference read back; backend descriptors: attributes set and
//           read back, descriptor elements, a heuristic filling the app's
//           engine configuration, a plan's workspace size, an execution
//           with its pointers in the session's memory and one with a host
//           pointer (refused by the server: the next synchronizing call's
//           error); a handle the app does not hold; the destroys
//   rnn     an RNN descriptor set and read back (answered locally, NULL
//           outputs skipped, a foreign descriptor refused), RNN data
//           descriptors, the weight space size, the weight params of the
//           two linear layers (offsets in the app's weight space, the
//           matrix descriptor filled in place), the app's weights written
//           there, the temp sizes (no reserve asked), a tanh RNN forward
//           whose output is read back, one with x in host memory (refused
//           by the server: the next synchronizing call's error), the
//           destroys
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "probe_bind.hpp"

namespace {

using gleam::test::bind;

struct cuda {
  cudaError_t (*malloc)(void**, size_t);
  cudaError_t (*memcpy)(void*, const void*, size_t, cudaMemcpyKind);
  cudaError_t (*stream_create)(cudaStream_t*);
  cudaError_t (*synchronize)();
  const char* (*error_name)(cudaError_t);
};

/// The cuDNN functions the probe binds.
#define GLEAM_PROBE_CUDNN_FUNCTIONS(X)                                          \
  X(cudnnGetErrorString)                                                        \
  X(cudnnGetVersion)                                                            \
  X(cudnnGetProperty)                                                           \
  X(cudnnCreate)                                                                \
  X(cudnnDestroy)                                                               \
  X(cudnnSetStream)                                                             \
  X(cudnnGetStream)                                                             \
  X(cudnnCreateTensorDescriptor)                                                \
  X(cudnnDestroyTensorDescriptor)                                               \
  X(cudnnSetTensor4dDescriptor)                                                 \
  X(cudnnGetTensorSizeInBytes)                                                  \
  X(cudnnBatchNormalizationForwardInference)                                    \
  X(cudnnBackendCreateDescriptor)                                               \
  X(cudnnBackendDestroyDescriptor)                                              \
  X(cudnnBackendFinalize)                                                       \
  X(cudnnBackendSetAttribute)                                                   \
  X(cudnnBackendGetAttribute)                                                   \
  X(cudnnBackendExecute)                                                        \
  X(cudnnSetTensorNdDescriptor)                                                 \
  X(cudnnGetTensorNdDescriptor)                                                 \
  X(cudnnCreateRNNDescriptor)                                                   \
  X(cudnnDestroyRNNDescriptor)                                                  \
  X(cudnnSetRNNDescriptor_v8)                                                   \
  X(cudnnGetRNNDescriptor_v8)                                                   \
  X(cudnnCreateRNNDataDescriptor)                                               \
  X(cudnnDestroyRNNDataDescriptor)                                              \
  X(cudnnSetRNNDataDescriptor)                                                  \
  X(cudnnGetRNNWeightSpaceSize)                                                 \
  X(cudnnGetRNNTempSpaceSizes)                                                  \
  X(cudnnGetRNNWeightParams)                                                    \
  X(cudnnRNNForward)

struct dnn {
#define GLEAM_PROBE_MEMBER(name) decltype(&::name) name;
  GLEAM_PROBE_CUDNN_FUNCTIONS(GLEAM_PROBE_MEMBER)
#undef GLEAM_PROBE_MEMBER
};

int run(const cuda& c, const dnn& d) {
  auto st = [&](cudnnStatus_t s) { return d.cudnnGetErrorString(s); };
  std::printf("version=%zu\n", d.cudnnGetVersion());
  // Each call is made before its results are printed: the arguments of one
  // printf are evaluated in no set order.
  int major = -1;
  auto status = d.cudnnGetProperty(MAJOR_VERSION, &major);
  std::printf("major=%s %d\n", st(status), major);
  cudaStream_t stream = nullptr;
  if (c.stream_create(&stream) != cudaSuccess)
    return 1;
  cudnnHandle_t h = nullptr;
  std::printf("create=%s\n", st(d.cudnnCreate(&h)));
  std::printf("set_stream=%s\n", st(d.cudnnSetStream(h, stream)));
  cudaStream_t got = nullptr;
  status = d.cudnnGetStream(h, &got);
  std::printf("get_stream=%s same=%d\n", st(status), got == stream);

  // Batch normalization over two NCHW float tensors: x and y 1x2x2x2, the
  // per-channel parameters 1x2x1x1.
  cudnnTensorDescriptor_t x_desc = nullptr, bn_desc = nullptr;
  std::printf("tensors=%s", st(d.cudnnCreateTensorDescriptor(&x_desc)));
  std::printf(",%s", st(d.cudnnCreateTensorDescriptor(&bn_desc)));
  std::printf(",%s", st(d.cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                                                      1, 2, 2, 2)));
  std::printf(",%s\n", st(d.cudnnSetTensor4dDescriptor(bn_desc, CUDNN_TENSOR_NCHW,
                                                        CUDNN_DATA_FLOAT, 1, 2, 1, 1)));
  size_t bytes = 0;
  status = d.cudnnGetTensorSizeInBytes(x_desc, &bytes);
  std::printf("size=%s %zu\n", st(status), bytes);
  auto device = [&](std::vector<float> v) {
    void* p = nullptr;
    c.malloc(&p, v.size() * sizeof(float));
    c.memcpy(p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice);
    return p;
  };
  void* x = device({1, 2, 3, 4, 10, 20, 30, 40});
  void* y = device(std::vector<float>(8, 0));
  void* scale = device({2, 0.5f});
  void* bias = device({1, -1});
  void* mean = device({2, 20});
  void* var = device({4, 100});
  float one = 1, zero = 0;
  std::printf("batch_norm=%s\n",
              st(d.cudnnBatchNormalizationForwardInference(h, CUDNN_BATCHNORM_SPATIAL, &one, &zero,
                                                           x_desc, x, x_desc, y, bn_desc, scale,
                                                           bias, mean, var, 0.0)));
  float out[8] = {};
  auto copied = c.memcpy(out, y, sizeof(out), cudaMemcpyDeviceToHost);
  std::printf("y=%s", c.error_name(copied));
  for (float v : out)
    std::printf(" %g", v);
  std::printf("\n");

  // Backend: a tensor whose attributes come back as set.
  auto create = [&](cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t b = nullptr;
    auto s = d.cudnnBackendCreateDescriptor(type, &b);
    if (s != CUDNN_STATUS_SUCCESS)
      std::printf("create_descriptor=%s\n", st(s));
    return b;
  };
  auto tensor = create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  int64_t dims[4] = {1, 2, 4, 4}, strides[4] = {32, 16, 4, 1}, uid = 7;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::printf("tensor_set=%s", st(d.cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS,
                                                              CUDNN_TYPE_INT64, 4, dims)));
  std::printf(",%s", st(d.cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_STRIDES,
                                                    CUDNN_TYPE_INT64, 4, strides)));
  std::printf(",%s", st(d.cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID,
                                                    CUDNN_TYPE_INT64, 1, &uid)));
  std::printf(",%s\n", st(d.cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_DATA_TYPE,
                                                      CUDNN_TYPE_DATA_TYPE, 1, &type)));
  int64_t back[4] = {}, count = 0;
  status = d.cudnnBackendGetAttribute(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4,
                                      &count, back);
  std::printf("tensor_get=%s count=%lld dims=%lld,%lld,%lld,%lld\n", st(status),
              static_cast<long long>(count), static_cast<long long>(back[0]),
              static_cast<long long>(back[1]), static_cast<long long>(back[2]),
              static_cast<long long>(back[3]));
  // Asked for more elements than the attribute has, the library writes the
  // ones it has and leaves the rest of the app's array alone.
  int64_t wider[6] = {-9, -9, -9, -9, -9, -9};
  status = d.cudnnBackendGetAttribute(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 6,
                                      &count, wider);
  std::printf("tensor_get_wider=%s count=%lld tail=%lld,%lld\n", st(status),
              static_cast<long long>(count), static_cast<long long>(wider[4]),
              static_cast<long long>(wider[5]));
  // An operation on it, its graph, a heuristic that fills the app's engine
  // configuration, a plan of that configuration.
  auto op = create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  auto graph = create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  auto heuristic = create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  auto config = create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  auto plan = create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  std::printf("graph=%s", st(d.cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
                                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                                         &tensor)));
  std::printf(",%s", st(d.cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op)));
  std::printf(",%s", st(d.cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
                                                    CUDNN_TYPE_HANDLE, 1, &h)));
  std::printf(",%s\n", st(d.cudnnBackendSetAttribute(heuristic,
                                                      CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph)));
  count = 0;
  status = d.cudnnBackendGetAttribute(heuristic, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &config);
  std::printf("heuristic=%s count=%lld\n", st(status), static_cast<long long>(count));
  std::printf("plan=%s",
              st(d.cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config)));
  std::printf(",%s\n", st(d.cudnnBackendFinalize(plan)));
  int64_t workspace_size = 0;
  status = d.cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                      CUDNN_TYPE_INT64, 1, &count, &workspace_size);
  std::printf("workspace=%s %lld\n", st(status), static_cast<long long>(workspace_size));
  // A descriptor the app does not hold is refused at the call.
  int not_a_descriptor[16] = {};
  void* foreign = not_a_descriptor;
  std::printf("foreign_element=%s\n",
              st(d.cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC,
                                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &foreign)));

  void* data = nullptr;
  void* workspace = nullptr;
  c.malloc(&data, 128);
  c.malloc(&workspace, static_cast<size_t>(workspace_size));
  auto pack = [&](void* pointer) {
    auto p = create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    d.cudnnBackendSetAttribute(p, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 1, &uid);
    d.cudnnBackendSetAttribute(p, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 1,
                               &pointer);
    d.cudnnBackendSetAttribute(p, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                               &workspace);
    d.cudnnBackendFinalize(p);
    return p;
  };
  auto good = pack(data);
  std::printf("execute=%s\n", st(d.cudnnBackendExecute(h, plan, good)));
  std::printf("sync=%s\n", c.error_name(c.synchronize()));
  float host[32];
  auto bad = pack(host);
  std::printf("execute_host_pointer=%s\n", st(d.cudnnBackendExecute(h, plan, bad)));
  std::printf("sync_after=%s\n", c.error_name(c.synchronize()));
  std::printf("sync_again=%s\n", c.error_name(c.synchronize()));

  int not_a_handle[16] = {};
  std::printf("foreign_handle=%s\n",
              st(d.cudnnSetStream(reinterpret_cast<cudnnHandle_t>(not_a_handle), stream)));
  for (auto b : {good, bad, plan, config, heuristic, graph, op, tensor})
    d.cudnnBackendDestroyDescriptor(b);
  std::printf("destroy=%s", st(d.cudnnDestroyTensorDescriptor(x_desc)));
  std::printf(",%s", st(d.cudnnDestroyTensorDescriptor(bn_desc)));
  std::printf(",%s\n", st(d.cudnnDestroy(h)));
  std::printf("final_sync=%s\n", c.error_name(c.synchronize()));
  return 0;
}

int run_rnn(const cuda& c, const dnn& d) {
  auto st = [&](cudnnStatus_t s) { return d.cudnnGetErrorString(s); };
  cudnnHandle_t h = nullptr;
  std::printf("create=%s\n", st(d.cudnnCreate(&h)));
  cudnnRNNDescriptor_t rnn = nullptr;
  std::printf("rnn=%s", st(d.cudnnCreateRNNDescriptor(&rnn)));
  std::printf(",%s\n",
              st(d.cudnnSetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_RNN_TANH,
                                            CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
                                            CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT,
                                            CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, 2, 2, 2, 1,
                                            nullptr, CUDNN_RNN_PADDED_IO_ENABLED)));
  cudnnRNNMode_t mode{};
  int32_t input = 0, hidden = 0, layers = 0;
  cudnnMathType_t math{};
  cudnnDropoutDescriptor_t dropout = reinterpret_cast<cudnnDropoutDescriptor_t>(&h);
  auto status = d.cudnnGetRNNDescriptor_v8(rnn, nullptr, &mode, nullptr, nullptr, nullptr,
                                           nullptr, nullptr, &math, &input, &hidden, nullptr,
                                           &layers, &dropout, nullptr);
  std::printf("rnn_get=%s tanh=%d fma=%d input=%d hidden=%d layers=%d dropout=%p\n", st(status),
              mode == CUDNN_RNN_TANH, math == CUDNN_FMA_MATH, input, hidden, layers,
              static_cast<void*>(dropout));
  int not_a_descriptor[16] = {};
  std::printf("rnn_get_foreign=%s\n",
              st(d.cudnnGetRNNDescriptor_v8(
                reinterpret_cast<cudnnRNNDescriptor_t>(not_a_descriptor), nullptr, &mode, nullptr,
                nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr, nullptr)));

  // Two steps of a batch of one, two values each, in and out.
  cudnnRNNDataDescriptor_t x_desc = nullptr, y_desc = nullptr;
  int lengths[1] = {2};
  float fill = -1;
  std::printf("data=%s", st(d.cudnnCreateRNNDataDescriptor(&x_desc)));
  std::printf(",%s", st(d.cudnnCreateRNNDataDescriptor(&y_desc)));
  std::printf(",%s", st(d.cudnnSetRNNDataDescriptor(x_desc, CUDNN_DATA_FLOAT,
                                                     CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 2,
                                                     1, 2, lengths, nullptr)));
  std::printf(",%s\n", st(d.cudnnSetRNNDataDescriptor(y_desc, CUDNN_DATA_FLOAT,
                                                       CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                                       2, 1, 2, lengths, &fill)));
  cudnnTensorDescriptor_t h_desc = nullptr, m_desc = nullptr, b_desc = nullptr;
  int dims[3] = {1, 1, 2}, strides[3] = {2, 2, 1};
  std::printf("tensors=%s", st(d.cudnnCreateTensorDescriptor(&h_desc)));
  std::printf(",%s", st(d.cudnnCreateTensorDescriptor(&m_desc)));
  std::printf(",%s", st(d.cudnnCreateTensorDescriptor(&b_desc)));
  std::printf(",%s\n", st(d.cudnnSetTensorNdDescriptor(h_desc, CUDNN_DATA_FLOAT, 3, dims,
                                                        strides)));
  size_t space_size = 0;
  status = d.cudnnGetRNNWeightSpaceSize(h, rnn, &space_size);
  std::printf("weight_space=%s %zu\n", st(status), space_size);
  void* space = nullptr;
  c.malloc(&space, space_size);
  // W = 0.5 I, R = 0.25 I, the bias of W 0.1, of R 0, where the weight
  // params say.
  float matrices[2][4] = {{0.5f, 0, 0, 0.5f}, {0.25f, 0, 0, 0.25f}};
  float biases[2][2] = {{0.1f, 0.1f}, {0, 0}};
  for (int32_t layer = 0; layer < 2; ++layer) {
    void* m = nullptr;
    void* b = nullptr;
    status = d.cudnnGetRNNWeightParams(h, rnn, 0, space_size, space, layer, m_desc, &m, b_desc,
                                       &b);
    std::printf("weight_params=%s m=%td b=%td\n", st(status),
                static_cast<char*>(m) - static_cast<char*>(space),
                static_cast<char*>(b) - static_cast<char*>(space));
    c.memcpy(m, matrices[layer], sizeof(matrices[layer]), cudaMemcpyHostToDevice);
    c.memcpy(b, biases[layer], sizeof(biases[layer]), cudaMemcpyHostToDevice);
  }
  cudnnDataType_t type{};
  int got_dims = 0, dim[3] = {}, stride[3] = {};
  status = d.cudnnGetTensorNdDescriptor(m_desc, 3, &type, &got_dims, dim, stride);
  std::printf("matrix=%s %dx%dx%d\n", st(status), dim[0], dim[1], dim[2]);
  size_t work_size = 0;
  status = d.cudnnGetRNNTempSpaceSizes(h, rnn, CUDNN_FWD_MODE_INFERENCE, x_desc, &work_size,
                                       nullptr);
  std::printf("temp=%s %zu\n", st(status), work_size);

  auto device = [&](std::vector<float> v) {
    void* p = nullptr;
    c.malloc(&p, v.size() * sizeof(float));
    c.memcpy(p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice);
    return p;
  };
  void* x = device({1, 2, 3, 4});
  void* y = device({0, 0, 0, 0});
  void* hy = device({0, 0});
  void* work = device(std::vector<float>(work_size / sizeof(float), 0));
  void* seq = nullptr;
  c.malloc(&seq, sizeof(int));
  c.memcpy(seq, lengths, sizeof(int), cudaMemcpyHostToDevice);
  std::printf("forward=%s\n",
              st(d.cudnnRNNForward(h, rnn, CUDNN_FWD_MODE_INFERENCE, static_cast<int32_t*>(seq),
                                   x_desc, x, y_desc, y, h_desc, nullptr, hy, nullptr, nullptr,
                                   nullptr, space_size, space, work_size, work, 0, nullptr)));
  float out[4] = {}, last[2] = {};
  auto copied = c.memcpy(out, y, sizeof(out), cudaMemcpyDeviceToHost);
  c.memcpy(last, hy, sizeof(last), cudaMemcpyDeviceToHost);
  std::printf("y=%s %.4f %.4f %.4f %.4f hy=%.4f %.4f\n", c.error_name(copied), out[0], out[1],
              out[2], out[3], last[0], last[1]);
  // An x in host memory: the server refuses it, the next synchronizing
  // call reports it.
  float host_x[4] = {1, 2, 3, 4};
  std::printf("forward_host_x=%s\n",
              st(d.cudnnRNNForward(h, rnn, CUDNN_FWD_MODE_INFERENCE, static_cast<int32_t*>(seq),
                                   x_desc, host_x, y_desc, y, h_desc, nullptr, hy, nullptr,
                                   nullptr, nullptr, space_size, space, work_size, work, 0,
                                   nullptr)));
  std::printf("sync_after=%s\n", c.error_name(c.synchronize()));
  std::printf("destroy=%s", st(d.cudnnDestroyRNNDataDescriptor(x_desc)));
  std::printf(",%s", st(d.cudnnDestroyRNNDataDescriptor(y_desc)));
  std::printf(",%s", st(d.cudnnDestroyRNNDescriptor(rnn)));
  std::printf(",%s\n", st(d.cudnnDestroy(h)));
  std::printf("final_sync=%s\n", c.error_name(c.synchronize()));
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::string scenario = argc == 3 ? argv[2] : "";
  if (scenario != "cudnn" && scenario != "rnn") {
    std::fprintf(stderr, "usage: %s LIBCUDART cudnn|rnn\n", argv[0]);
    return 2;
  }
  std::string cudart = argv[1];
  auto* rt = ::dlopen(cudart.c_str(), RTLD_NOW | RTLD_GLOBAL);
  auto dir = cudart.substr(0, cudart.rfind('/'));
  auto* lib = ::dlopen((dir + "/libcudnn.so.9").c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (rt == nullptr || lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", ::dlerror());
    return 2;
  }
  cuda c{};
  dnn d{};
  bool ok = bind(rt, "cudaMalloc", c.malloc) && bind(rt, "cudaMemcpy", c.memcpy)
            && bind(rt, "cudaStreamCreate", c.stream_create)
            && bind(rt, "cudaDeviceSynchronize", c.synchronize)
            && bind(rt, "cudaGetErrorName", c.error_name);
#define GLEAM_PROBE_BIND(name) ok = ok && bind(lib, #name, d.name);
  GLEAM_PROBE_CUDNN_FUNCTIONS(GLEAM_PROBE_BIND)
#undef GLEAM_PROBE_BIND
  if (!ok)
    return 2;
  return scenario == "rnn" ? run_rnn(c, d) : run(c, d);
}
