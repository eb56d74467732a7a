// cuDNN 9's RNN and CTC loss APIs through the shared library, as PyTorch's
// nn.LSTM and F.ctc_loss use them: an RNN descriptor set and read back
// (with its dropout descriptor), RNN data descriptors, the weight space
// filled with known values and the weight params of every linear layer
// (matrices and biases inside it), an LSTM forward in inference checked
// against a host LSTM over those weights, a training forward with its
// reserve space followed by the backward passes of data and weights; then
// CTC loss v8 of a case with a known value (-ln 3/4) and of a random batch
// with gradients. Forward outputs and losses are printed in full and
// checksummed; the backward sums (reductions whose order the library
// chooses) are printed to five digits only.
#include "common.cuh"
#include "cudnn_check.cuh"

#include <cudnn.h>

#include <cmath>
#include <vector>

namespace {

gleam_program::checksum sum;

// Sequence length, batch, input and hidden sizes of the LSTM.
constexpr int T = 4, B = 2, I = 3, Hd = 5;

template <class V>
V* to_device(const std::vector<V>& v) {
  V* p = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&p, v.size() * sizeof(V)));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(p, v.data(), v.size() * sizeof(V), cudaMemcpyHostToDevice));
  return p;
}

std::vector<float> from_device(const void* p, size_t n) {
  std::vector<float> v(n);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(v.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost));
  return v;
}

void* device_bytes(size_t n) {
  void* p = nullptr;
  if (n > 0)
    GLEAM_PROGRAM_CHECK(cudaMalloc(&p, n));
  return p;
}

/// Prints `n` floats at `p` under `label` and adds them to the checksum.
void show(const char* label, const void* p, size_t n) {
  auto v = from_device(p, n);
  std::printf("%s:", label);
  for (float x : v)
    std::printf(" %.9g", static_cast<double>(x));
  std::printf("\n");
  sum.add(v.data(), n * sizeof(float));
}

/// Prints the sum of `n` floats at `p` to five digits (not checksummed).
void show_sum(const char* label, const void* p, size_t n) {
  double total = 0;
  for (float x : from_device(p, n))
    total += x;
  std::printf("%s: sum %.5g\n", label, total);
}

float sigmoid(float v) {
  return 1.0f / (1.0f + std::exp(-v));
}

void lstm(cudnnHandle_t handle) {
  size_t state_bytes = 0;
  GLEAM_CUDNN_CHECK(cudnnDropoutGetStatesSize(handle, &state_bytes));
  void* states = device_bytes(state_bytes);
  cudnnDropoutDescriptor_t dropout = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreateDropoutDescriptor(&dropout));
  GLEAM_CUDNN_CHECK(cudnnSetDropoutDescriptor(dropout, handle, 0.0f, states, state_bytes, 42));

  cudnnRNNDescriptor_t rnn = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreateRNNDescriptor(&rnn));
  GLEAM_CUDNN_CHECK(cudnnSetRNNDescriptor_v8(
    rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS, CUDNN_UNIDIRECTIONAL,
    CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, I, Hd, Hd, 1, dropout,
    CUDNN_RNN_PADDED_IO_ENABLED));
  cudnnRNNMode_t mode{};
  int32_t input = 0, hidden = 0, layers = 0;
  cudnnDropoutDescriptor_t kept = nullptr;
  uint32_t flags = 0;
  GLEAM_CUDNN_CHECK(cudnnGetRNNDescriptor_v8(rnn, nullptr, &mode, nullptr, nullptr, nullptr,
                                             nullptr, nullptr, nullptr, &input, &hidden, nullptr,
                                             &layers, &kept, &flags));
  std::printf("rnn descriptor: lstm %d input %d hidden %d layers %d dropout kept %d flags %u\n",
              mode == CUDNN_LSTM, input, hidden, layers, kept == dropout, flags);

  // Sequence-major padded data; the second sequence is one step shorter.
  std::vector<int> lengths{T, T - 1};
  float fill = 0.0f;
  cudnnRNNDataDescriptor_t x_desc = nullptr, y_desc = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreateRNNDataDescriptor(&x_desc));
  GLEAM_CUDNN_CHECK(cudnnCreateRNNDataDescriptor(&y_desc));
  GLEAM_CUDNN_CHECK(cudnnSetRNNDataDescriptor(x_desc, CUDNN_DATA_FLOAT,
                                              CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B, I,
                                              lengths.data(), &fill));
  GLEAM_CUDNN_CHECK(cudnnSetRNNDataDescriptor(y_desc, CUDNN_DATA_FLOAT,
                                              CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, T, B, Hd,
                                              lengths.data(), &fill));
  cudnnTensorDescriptor_t h_desc = nullptr, m_desc = nullptr, b_desc = nullptr;
  int h_dims[3] = {1, B, Hd}, h_strides[3] = {B * Hd, Hd, 1};
  GLEAM_CUDNN_CHECK(cudnnCreateTensorDescriptor(&h_desc));
  GLEAM_CUDNN_CHECK(cudnnCreateTensorDescriptor(&m_desc));
  GLEAM_CUDNN_CHECK(cudnnCreateTensorDescriptor(&b_desc));
  GLEAM_CUDNN_CHECK(cudnnSetTensorNdDescriptor(h_desc, CUDNN_DATA_FLOAT, 3, h_dims, h_strides));

  size_t space_bytes = 0;
  GLEAM_CUDNN_CHECK(cudnnGetRNNWeightSpaceSize(handle, rnn, &space_bytes));
  std::vector<float> space(space_bytes / sizeof(float));
  uint32_t seed = 3;
  for (auto& v : space)
    v = static_cast<float>(gleam_program::next_random(seed) % 2001) / 4000.0f - 0.25f;
  auto* w = to_device(space);
  // Linear layers 0-3: input weights of the gates i, f, g, o; 4-7: the
  // recurrent ones; each with its bias.
  std::vector<const float*> mat(8), bias(8);
  for (int layer = 0; layer < 8; ++layer) {
    void* m = nullptr;
    void* b = nullptr;
    GLEAM_CUDNN_CHECK(
      cudnnGetRNNWeightParams(handle, rnn, 0, space_bytes, w, layer, m_desc, &m, b_desc, &b));
    cudnnDataType_t type{};
    int dims = 0, dim[3] = {}, stride[3] = {};
    GLEAM_CUDNN_CHECK(cudnnGetTensorNdDescriptor(m_desc, 3, &type, &dims, dim, stride));
    auto m_at = static_cast<size_t>(static_cast<char*>(m) - reinterpret_cast<char*>(w));
    auto b_at = static_cast<size_t>(static_cast<char*>(b) - reinterpret_cast<char*>(w));
    std::printf("linear layer %d: matrix at %zu (%dx%dx%d), bias at %zu\n", layer, m_at, dim[0],
                dim[1], dim[2], b_at);
    mat[static_cast<size_t>(layer)] = space.data() + m_at / sizeof(float);
    bias[static_cast<size_t>(layer)] = space.data() + b_at / sizeof(float);
  }

  std::vector<float> x(static_cast<size_t>(T * B * I));
  for (auto& v : x)
    v = static_cast<float>(gleam_program::next_random(seed) % 2001) / 1000.0f - 1.0f;
  auto* dx_in = to_device(x);
  auto* seq = to_device(lengths);
  void* y = device_bytes(T * B * Hd * sizeof(float));
  void* hy = device_bytes(B * Hd * sizeof(float));
  void* cy = device_bytes(B * Hd * sizeof(float));
  size_t work_bytes = 0, reserve_bytes = 0;
  GLEAM_CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(handle, rnn, CUDNN_FWD_MODE_INFERENCE, x_desc,
                                              &work_bytes, nullptr));
  void* work = device_bytes(work_bytes);
  GLEAM_CUDNN_CHECK(cudnnRNNForward(handle, rnn, CUDNN_FWD_MODE_INFERENCE, seq, x_desc, dx_in,
                                    y_desc, y, h_desc, nullptr, hy, h_desc, nullptr, cy,
                                    space_bytes, w, work_bytes, work, 0, nullptr));
  show("lstm y", y, T * B * Hd);
  show("lstm hy", hy, B * Hd);
  show("lstm cy", cy, B * Hd);

  // The host LSTM over the same weights.
  auto got = from_device(y, T * B * Hd);
  double worst = 0;
  for (int b = 0; b < B; ++b) {
    std::vector<float> h(Hd, 0.0f), c(Hd, 0.0f);
    for (int t = 0; t < lengths[static_cast<size_t>(b)]; ++t) {
      const float* xt = x.data() + (t * B + b) * I;
      std::vector<float> gate(4 * Hd);
      for (int k = 0; k < 4; ++k)
        for (int j = 0; j < Hd; ++j) {
          float a = bias[static_cast<size_t>(k)][j] + bias[static_cast<size_t>(k + 4)][j];
          for (int i = 0; i < I; ++i)
            a += mat[static_cast<size_t>(k)][j * I + i] * xt[i];
          for (int i = 0; i < Hd; ++i)
            a += mat[static_cast<size_t>(k + 4)][j * Hd + i] * h[static_cast<size_t>(i)];
          gate[static_cast<size_t>(k * Hd + j)] = a;
        }
      for (int j = 0; j < Hd; ++j) {
        auto g = [&](int k) { return gate[static_cast<size_t>(k * Hd + j)]; };
        c[static_cast<size_t>(j)] =
          sigmoid(g(1)) * c[static_cast<size_t>(j)] + sigmoid(g(0)) * std::tanh(g(2));
        h[static_cast<size_t>(j)] = sigmoid(g(3)) * std::tanh(c[static_cast<size_t>(j)]);
        worst = std::fmax(worst, std::fabs(got[static_cast<size_t>((t * B + b) * Hd + j)]
                                           - h[static_cast<size_t>(j)]));
      }
    }
  }
  std::printf("lstm matches the host LSTM: %d\n", worst < 1e-4);
  GLEAM_PROGRAM_EXPECT(worst < 1e-4, "the LSTM output differs from the host LSTM's");

  // Training: forward with the reserve space, then the backward passes.
  GLEAM_CUDNN_CHECK(cudnnGetRNNTempSpaceSizes(handle, rnn, CUDNN_FWD_MODE_TRAINING, x_desc,
                                              &work_bytes, &reserve_bytes));
  void* train_work = device_bytes(work_bytes);
  void* reserve = device_bytes(reserve_bytes);
  GLEAM_CUDNN_CHECK(cudnnRNNForward(handle, rnn, CUDNN_FWD_MODE_TRAINING, seq, x_desc, dx_in,
                                    y_desc, y, h_desc, nullptr, hy, h_desc, nullptr, cy,
                                    space_bytes, w, work_bytes, train_work, reserve_bytes,
                                    reserve));
  show("lstm training y", y, T * B * Hd);
  std::vector<float> ones(static_cast<size_t>(T * B * Hd), 1.0f);
  auto* dy = to_device(ones);
  void* dx = device_bytes(T * B * I * sizeof(float));
  void* dweights = device_bytes(space_bytes);
  GLEAM_PROGRAM_CHECK(cudaMemset(dweights, 0, space_bytes));
  GLEAM_CUDNN_CHECK(cudnnRNNBackwardData_v8(handle, rnn, seq, y_desc, y, dy, x_desc, dx, h_desc,
                                            nullptr, nullptr, nullptr, h_desc, nullptr, nullptr,
                                            nullptr, space_bytes, w, work_bytes, train_work,
                                            reserve_bytes, reserve));
  GLEAM_CUDNN_CHECK(cudnnRNNBackwardWeights_v8(handle, rnn, CUDNN_WGRAD_MODE_ADD, seq, x_desc,
                                               dx_in, h_desc, nullptr, y_desc, y, space_bytes,
                                               dweights, work_bytes, train_work, reserve_bytes,
                                               reserve));
  show_sum("lstm dx", dx, T * B * I);
  show_sum("lstm dweights", dweights, space_bytes / sizeof(float));

  for (void* p : {states, static_cast<void*>(w), static_cast<void*>(dx_in),
                  static_cast<void*>(seq), y, hy, cy, work, train_work, reserve,
                  static_cast<void*>(dy), dx, dweights})
    if (p != nullptr)
      GLEAM_PROGRAM_CHECK(cudaFree(p));
  GLEAM_CUDNN_CHECK(cudnnDestroyRNNDataDescriptor(x_desc));
  GLEAM_CUDNN_CHECK(cudnnDestroyRNNDataDescriptor(y_desc));
  for (auto d : {h_desc, m_desc, b_desc})
    GLEAM_CUDNN_CHECK(cudnnDestroyTensorDescriptor(d));
  GLEAM_CUDNN_CHECK(cudnnDestroyRNNDescriptor(rnn));
  GLEAM_CUDNN_CHECK(cudnnDestroyDropoutDescriptor(dropout));
}

/// cudnnCTCLoss_v8 of probabilities (time x batch x alphabet logits,
/// softmax applied by the library) with gradients; returns the costs.
std::vector<float> ctc(cudnnHandle_t handle, int steps, int batch, int alphabet,
                       const std::vector<float>& logits, const std::vector<int>& labels,
                       const std::vector<int>& label_lengths,
                       const std::vector<int>& input_lengths, const char* label) {
  cudnnCTCLossDescriptor_t desc = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreateCTCLossDescriptor(&desc));
  GLEAM_CUDNN_CHECK(cudnnSetCTCLossDescriptor_v8(desc, CUDNN_DATA_FLOAT,
                                                 CUDNN_LOSS_NORMALIZATION_SOFTMAX,
                                                 CUDNN_PROPAGATE_NAN, 8));
  cudnnLossNormalizationMode_t norm{};
  cudnnDataType_t type{};
  cudnnNanPropagation_t nan{};
  int max_label = 0;
  GLEAM_CUDNN_CHECK(cudnnGetCTCLossDescriptor_v8(desc, &type, &norm, &nan, &max_label));
  std::printf("%s descriptor: softmax %d max label %d\n", label,
              norm == CUDNN_LOSS_NORMALIZATION_SOFTMAX, max_label);
  cudnnTensorDescriptor_t probs_desc = nullptr;
  int dims[3] = {steps, batch, alphabet}, strides[3] = {batch * alphabet, alphabet, 1};
  GLEAM_CUDNN_CHECK(cudnnCreateTensorDescriptor(&probs_desc));
  GLEAM_CUDNN_CHECK(cudnnSetTensorNdDescriptor(probs_desc, CUDNN_DATA_FLOAT, 3, dims, strides));
  size_t work_bytes = 0;
  GLEAM_CUDNN_CHECK(cudnnGetCTCLossWorkspaceSize_v8(handle, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC,
                                                    desc, probs_desc, probs_desc, &work_bytes));
  auto* probs = to_device(logits);
  auto* d_labels = to_device(labels);
  auto* d_label_lengths = to_device(label_lengths);
  auto* d_input_lengths = to_device(input_lengths);
  void* costs = device_bytes(static_cast<size_t>(batch) * sizeof(float));
  void* grads = device_bytes(logits.size() * sizeof(float));
  // cuDNN leaves the gradients of the steps past an input's length as they
  // were: zero them, so the bytes printed do not depend on what the memory
  // held before.
  GLEAM_PROGRAM_CHECK(cudaMemset(grads, 0, logits.size() * sizeof(float)));
  void* work = device_bytes(work_bytes);
  GLEAM_CUDNN_CHECK(cudnnCTCLoss_v8(handle, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, desc, probs_desc,
                                    probs, d_labels, d_label_lengths, d_input_lengths, costs,
                                    probs_desc, grads, work_bytes, work));
  auto out = from_device(costs, static_cast<size_t>(batch));
  show(label, costs, static_cast<size_t>(batch));
  show_sum("ctc gradients", grads, logits.size());
  for (void* p : {static_cast<void*>(probs), static_cast<void*>(d_labels),
                  static_cast<void*>(d_label_lengths), static_cast<void*>(d_input_lengths),
                  costs, grads, work})
    if (p != nullptr)
      GLEAM_PROGRAM_CHECK(cudaFree(p));
  GLEAM_CUDNN_CHECK(cudnnDestroyTensorDescriptor(probs_desc));
  GLEAM_CUDNN_CHECK(cudnnDestroyCTCLossDescriptor(desc));
  return out;
}

} // namespace

int main() {
  cudnnHandle_t handle = nullptr;
  GLEAM_CUDNN_CHECK(cudnnCreate(&handle));
  lstm(handle);

  // Two steps of uniform logits over blank and one letter, label "1":
  // the paths 11, 01 and 10 of 1/4 each.
  auto known = ctc(handle, 2, 1, 2, std::vector<float>(4, 0.0f), {1}, {1}, {2}, "ctc known");
  std::printf("ctc known is -ln(3/4): %d\n", std::fabs(known[0] + std::log(0.75f)) < 1e-5f);
  GLEAM_PROGRAM_EXPECT(std::fabs(known[0] + std::log(0.75f)) < 1e-5f, "CTC loss of the known case");

  constexpr int steps = 10, batch = 2, alphabet = 5;
  std::vector<float> logits(steps * batch * alphabet);
  uint32_t seed = 9;
  for (auto& v : logits)
    v = static_cast<float>(gleam_program::next_random(seed) % 2001) / 1000.0f - 1.0f;
  ctc(handle, steps, batch, alphabet, logits, {1, 2, 3, 4, 4}, {3, 2}, {10, 8}, "ctc batch");

  GLEAM_CUDNN_CHECK(cudnnDestroy(handle));
  sum.print("cudnn_rnn");
  return 0;
}
