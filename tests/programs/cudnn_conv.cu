// cuDNN 9 through the shared library, without PyTorch: a convolution built
// with the backend (graph) API as the cuDNN frontend builds it (tensors, a
// convolution descriptor, a forward operation, its graph, heuristics, the
// first engine configuration that finalizes as a plan, a variant pack with
// the plan's workspace, executed twice: on the handle's stream and on an app
// stream); the legacy API on the same data (tensor and filter descriptors, a
// convolution with the implicit-GEMM algorithm, bias addition, ReLU,
// batch-normalization inference and a training forward with its running
// statistics); and the version and property queries. Every output is
// printed (a checksum and a few values) so that a local run and a run
// through Gleam compare byte for byte; the algorithms used are
// deterministic.
#include "common.cuh"
#include "cudnn_check.cuh"

#include <cudnn.h>

#include <vector>

namespace {

gleam_program::checksum sum;

// N x C x H x W input, K x C x R x S filter, padding 1, stride 1: the
// output is N x K x H x W.
constexpr int64_t N = 2, C = 3, H = 8, W = 8, K = 4, R = 3, S = 3;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (auto& x : v)
    x = static_cast<float>(gleam_program::next_random(seed) % 2001) / 1000.0f - 1.0f;
  return v;
}

float* to_device(const std::vector<float>& v) {
  float* p = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&p, v.size() * sizeof(float)));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(float), cudaMemcpyHostToDevice));
  return p;
}

/// Copies `n` floats back, prints their sum and first values under
/// `label`, and adds them to the checksum.
void show(const char* label, const float* p, size_t n) {
  std::vector<float> v(n);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(v.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
  double total = 0;
  for (float x : v)
    total += x;
  std::printf("%s: sum %.9g first %.9g %.9g %.9g\n", label, total, static_cast<double>(v[0]),
              static_cast<double>(v[1]), static_cast<double>(v[n - 1]));
  sum.add(v.data(), n * sizeof(float));
}

cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t d = nullptr;
  GLEAM_CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d));
  return d;
}

/// A finalized backend tensor of float elements, packed NCHW.
cudnnBackendDescriptor_t tensor(int64_t uid, const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * dims[i];
  auto t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int64_t alignment = 16;
  auto rank = static_cast<int64_t>(dims.size());
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DATA_TYPE,
                                             CUDNN_TYPE_DATA_TYPE, 1, &type));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64,
                                             rank, dims.data()));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64,
                                             rank, strides.data()));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1,
                                             &uid));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
                                             CUDNN_TYPE_INT64, 1, &alignment));
  GLEAM_CUDNN_CHECK(cudnnBackendFinalize(t));
  return t;
}

/// The convolution of x and w into y with the backend API.
void backend_convolution(cudnnHandle_t handle, cudaStream_t app_stream, const float* x,
                         const float* w, float* y) {
  auto xt = tensor('x', {N, C, H, W});
  auto wt = tensor('w', {K, C, R, S});
  auto yt = tensor('y', {N, K, H, W});
  auto conv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  int64_t dims = 2, ones[2] = {1, 1}, pads[2] = {1, 1};
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
                                             CUDNN_TYPE_DATA_TYPE, 1, &compute));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                                             CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS,
                                             CUDNN_TYPE_INT64, 1, &dims));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS,
                                             CUDNN_TYPE_INT64, 2, ones));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                                             CUDNN_TYPE_INT64, 2, ones));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                                             CUDNN_TYPE_INT64, 2, pads));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                                             CUDNN_TYPE_INT64, 2, pads));
  GLEAM_CUDNN_CHECK(cudnnBackendFinalize(conv));

  auto op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  float alpha = 1.0f, beta = 0.0f;
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &xt));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &wt));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &yt));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(op,
                                             CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                                             CUDNN_TYPE_FLOAT, 1, &alpha));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
                                             CUDNN_TYPE_FLOAT, 1, &beta));
  GLEAM_CUDNN_CHECK(cudnnBackendFinalize(op));

  auto graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
                                             CUDNN_TYPE_HANDLE, 1, &handle));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op));
  GLEAM_CUDNN_CHECK(cudnnBackendFinalize(graph));

  auto heuristics = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  cudnnBackendHeurMode_t heur = CUDNN_HEUR_MODE_INSTANT;
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph));
  GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE,
                                             CUDNN_TYPE_HEUR_MODE, 1, &heur));
  GLEAM_CUDNN_CHECK(cudnnBackendFinalize(heuristics));
  int64_t count = 0;
  GLEAM_CUDNN_CHECK(cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
  std::printf("engine configurations: %s\n", count > 0 ? "some" : "none");
  GLEAM_PROGRAM_EXPECT(count > 0, "cuDNN has an engine for a 3x3 float convolution");
  std::vector<cudnnBackendDescriptor_t> configs(static_cast<size_t>(count));
  for (auto& c : configs)
    c = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  int64_t filled = 0;
  GLEAM_CUDNN_CHECK(cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &filled,
                                             configs.data()));
  GLEAM_PROGRAM_EXPECT(filled > 0 && filled <= count, "heuristics fill what they announced");

  // The first configuration that finalizes as a plan (the frontend's way).
  cudnnBackendDescriptor_t plan = nullptr;
  int64_t tried = 0;
  for (int64_t i = 0; i < filled && plan == nullptr; ++i) {
    auto p = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                               CUDNN_TYPE_HANDLE, 1, &handle));
    GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                               &configs[static_cast<size_t>(i)]));
    ++tried;
    if (cudnnBackendFinalize(p) == CUDNN_STATUS_SUCCESS)
      plan = p;
    else
      GLEAM_CUDNN_CHECK(cudnnBackendDestroyDescriptor(p));
  }
  GLEAM_PROGRAM_EXPECT(plan != nullptr, "one engine configuration finalizes");
  std::printf("plan from configuration %lld\n", static_cast<long long>(tried - 1));
  int64_t workspace_size = -1;
  GLEAM_CUDNN_CHECK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                             CUDNN_TYPE_INT64, 1, &count, &workspace_size));
  std::printf("plan workspace: %lld bytes\n", static_cast<long long>(workspace_size));
  void* workspace = nullptr;
  if (workspace_size > 0)
    GLEAM_PROGRAM_CHECK(cudaMalloc(&workspace, static_cast<size_t>(workspace_size)));

  // Executed twice, as the frontend does: a fresh variant pack each time.
  for (cudaStream_t stream : {static_cast<cudaStream_t>(nullptr), app_stream}) {
    GLEAM_PROGRAM_CHECK(cudaMemset(y, 0, N * K * H * W * sizeof(float)));
    GLEAM_CUDNN_CHECK(cudnnSetStream(handle, stream));
    auto pack = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    int64_t uids[3] = {'x', 'w', 'y'};
    void* data[3] = {const_cast<float*>(x), const_cast<float*>(w), y};
    GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                               CUDNN_TYPE_INT64, 3, uids));
    GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                               CUDNN_TYPE_VOID_PTR, 3, data));
    GLEAM_CUDNN_CHECK(cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                               CUDNN_TYPE_VOID_PTR, 1, &workspace));
    GLEAM_CUDNN_CHECK(cudnnBackendFinalize(pack));
    GLEAM_CUDNN_CHECK(cudnnBackendExecute(handle, plan, pack));
    GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
    show(stream == nullptr ? "backend conv" : "backend conv on an app stream", y, N * K * H * W);
    GLEAM_CUDNN_CHECK(cudnnBackendDestroyDescriptor(pack));
  }
  GLEAM_CUDNN_CHECK(cudnnSetStream(handle, nullptr));
  if (workspace != nullptr)
    GLEAM_PROGRAM_CHECK(cudaFree(workspace));
  for (auto d : {plan, heuristics, graph, op, conv, xt, wt, yt})
    GLEAM_CUDNN_CHECK(cudnnBackendDestroyDescriptor(d));
  for (auto c : configs)
    GLEAM_CUDNN_CHECK(cudnnBackendDestroyDescriptor(c));
}

cudnnTensorDescriptor_t nchw(int n, int c, int h, int w) {
  cudnnTensorDescriptor_t t = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreateTensorDescriptor(&t));
  GLEAM_CUDNN_CHECK(cudnnSetTensor4dDescriptor(t, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
  return t;
}

/// The same convolution with the legacy API, then a bias, a ReLU and batch
/// normalization over its output.
void legacy_layers(cudnnHandle_t handle, const float* x, const float* w, float* y) {
  auto xd = nchw(N, C, H, W), yd = nchw(N, K, H, W), bias_d = nchw(1, K, 1, 1);
  cudnnFilterDescriptor_t wd = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreateFilterDescriptor(&wd));
  GLEAM_CUDNN_CHECK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
  cudnnConvolutionDescriptor_t cd = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&cd));
  GLEAM_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                                    CUDNN_DATA_FLOAT));
  int n = 0, c = 0, h = 0, wo = 0;
  GLEAM_CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &n, &c, &h, &wo));
  std::printf("legacy output dims: %d %d %d %d\n", n, c, h, wo);
  auto algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t workspace_size = 0;
  GLEAM_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(handle, xd, wd, cd, yd, algo,
                                                            &workspace_size));
  void* workspace = nullptr;
  if (workspace_size > 0)
    GLEAM_PROGRAM_CHECK(cudaMalloc(&workspace, workspace_size));
  float one = 1.0f, zero = 0.0f;
  GLEAM_CUDNN_CHECK(cudnnConvolutionForward(handle, &one, xd, x, wd, w, cd, algo, workspace,
                                            workspace_size, &zero, yd, y));
  show("legacy conv", y, N * K * H * W);

  float* bias = to_device(random_floats(K, 41));
  GLEAM_CUDNN_CHECK(cudnnAddTensor(handle, &one, bias_d, bias, &one, yd, y));
  cudnnActivationDescriptor_t relu = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreateActivationDescriptor(&relu));
  GLEAM_CUDNN_CHECK(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU,
                                                 CUDNN_NOT_PROPAGATE_NAN, 0.0));
  GLEAM_CUDNN_CHECK(cudnnActivationForward(handle, relu, &one, yd, y, &zero, yd, y));
  show("bias and relu", y, N * K * H * W);

  // Batch normalization: per-channel parameters of a derived descriptor.
  cudnnTensorDescriptor_t bn = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreateTensorDescriptor(&bn));
  GLEAM_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(bn, yd, CUDNN_BATCHNORM_SPATIAL));
  float* scale = to_device(random_floats(K, 43));
  float* shift = to_device(random_floats(K, 47));
  std::vector<float> ones(K, 1.0f), zeros(K, 0.0f);
  float* running_mean = to_device(zeros);
  float* running_var = to_device(ones);
  float* saved_mean = to_device(zeros);
  float* saved_inv_var = to_device(zeros);
  float* out = to_device(std::vector<float>(N * K * H * W, 0.0f));
  GLEAM_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
    handle, CUDNN_BATCHNORM_SPATIAL, &one, &zero, yd, y, yd, out, bn, scale, shift, 0.1,
    running_mean, running_var, 1e-5, saved_mean, saved_inv_var));
  show("batch norm training", out, N * K * H * W);
  show("running mean", running_mean, K);
  show("running variance", running_var, K);
  show("saved inverse variance", saved_inv_var, K);
  GLEAM_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(handle, CUDNN_BATCHNORM_SPATIAL, &one,
                                                            &zero, yd, y, yd, out, bn, scale,
                                                            shift, running_mean, running_var,
                                                            1e-5));
  show("batch norm inference", out, N * K * H * W);

  for (float* p : {bias, scale, shift, running_mean, running_var, saved_mean, saved_inv_var, out})
    GLEAM_PROGRAM_CHECK(cudaFree(p));
  if (workspace != nullptr)
    GLEAM_PROGRAM_CHECK(cudaFree(workspace));
  GLEAM_CUDNN_CHECK(cudnnDestroyActivationDescriptor(relu));
  GLEAM_CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(cd));
  GLEAM_CUDNN_CHECK(cudnnDestroyFilterDescriptor(wd));
  for (auto d : {xd, yd, bias_d, bn})
    GLEAM_CUDNN_CHECK(cudnnDestroyTensorDescriptor(d));
}

} // namespace

int main() {
  int major = 0;
  GLEAM_CUDNN_CHECK(cudnnGetProperty(MAJOR_VERSION, &major));
  std::printf("cudnn major %d, version matches property: %d\n", major,
              static_cast<int>(cudnnGetVersion() / 10000) == major);
  cudnnHandle_t handle = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreate(&handle));
  cudaStream_t stream = nullptr;
  GLEAM_PROGRAM_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaStream_t got = nullptr;
  GLEAM_CUDNN_CHECK(cudnnSetStream(handle, stream));
  GLEAM_CUDNN_CHECK(cudnnGetStream(handle, &got));
  std::printf("stream kept: %d\n", got == stream);
  GLEAM_CUDNN_CHECK(cudnnSetStream(handle, nullptr));

  float* x = to_device(random_floats(N * C * H * W, 7));
  float* w = to_device(random_floats(K * C * R * S, 11));
  float* y = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&y, N * K * H * W * sizeof(float)));
  backend_convolution(handle, stream, x, w, y);
  legacy_layers(handle, x, w, y);

  for (float* p : {x, w, y})
    GLEAM_PROGRAM_CHECK(cudaFree(p));
  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_CUDNN_CHECK(cudnnDestroy(handle));
  sum.print("cudnn_conv");
  return 0;
}
