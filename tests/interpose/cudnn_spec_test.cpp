// The cuDNN surface: cudnn.spec names exactly the vendor's exports, each in
// one class, the calls PyTorch makes remoted; the built libcudnn.so.9
// exports exactly those names with the vendor's symbol version and SONAME;
// the generated lists follow the spec; what is answered at the call (status
// names, the handle's stream, handles the app does not hold, unsupported
// functions) needs no server; the generator checks cuDNN's annotations.
#include "tests/interpose/library_spec.hpp"
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"

#include <catch2/catch.hpp>
#include <cudnn.h>
#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

using gleam::test::spec::names_of;
using gleam::test::spec::read_spec;

constexpr const char* version = "libcudnn.so.9";
const std::string vendor = "/usr/local/cuda/lib64/libcudnn.so.9";

std::string built() {
  return gleam::test::build_path("lib/libcudnn.so.9");
}

} // namespace

TEST_CASE("cudnn.spec names every vendor export once, the calls PyTorch makes remoted",
          "[interpose][spec][cudnn]") {
  auto spec = read_spec("cudnn");
  auto names = gleam::test::spec::committed_names(version);
  // libcudnn.so.9 of cuDNN 9.19 exports 224 functions.
  CHECK(names.size() == 224);
  CHECK(names_of(spec) == std::set<std::string>(names.begin(), names.end()));
  CHECK(spec.size() == names.size());
  std::set<std::string> ids;
  std::map<std::string, std::string> cls, call;
  size_t real = 0;
  for (const auto& e : spec) {
    INFO(e.name);
    REQUIRE(e.classes.size() == 1);
    cls[e.name] = e.classes.front();
    call[e.name] = e.call;
    if (e.classes.front() == "generated")
      CHECK_FALSE(e.id.empty());
    if (e.classes.front() == "unsupported")
      CHECK_FALSE(e.reason.empty());
    else
      ++real;
    if (!e.id.empty())
      CHECK(ids.insert(e.id).second);
  }
  std::printf("coverage cudnn %zu functions: %zu real, %zu unsupported\n", spec.size(), real,
              spec.size() - real);
  // What PyTorch 2.11's convolutions (the cuDNN frontend), batch norms and
  // start-up call.
  for (const char* name :
       {"cudnnCreate", "cudnnDestroy", "cudnnSetStream", "cudnnGetStream", "cudnnGetVersion",
        "cudnnGetCudartVersion", "cudnnGetErrorString", "cudnnGetProperty",
        "cudnnGetLastErrorString", "cudnnGraphVersionCheck", "cudnnOpsVersionCheck",
        "cudnnCnnVersionCheck", "cudnnAdvVersionCheck", "cudnnBackendCreateDescriptor",
        "cudnnBackendDestroyDescriptor", "cudnnBackendInitialize", "cudnnBackendFinalize",
        "cudnnBackendSetAttribute", "cudnnBackendGetAttribute", "cudnnBackendExecute",
        "cudnnCreateTensorDescriptor", "cudnnSetTensorNdDescriptor",
        "cudnnSetTensorNdDescriptorEx", "cudnnSetTensor4dDescriptor", "cudnnAddTensor",
        "cudnnBatchNormalizationForwardInference", "cudnnBatchNormalizationForwardTraining",
        "cudnnBatchNormalizationForwardTrainingEx", "cudnnBatchNormalizationBackward",
        "cudnnBatchNormalizationBackwardEx",
        "cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize",
        "cudnnGetBatchNormalizationBackwardExWorkspaceSize",
        "cudnnGetBatchNormalizationTrainingExReserveSpaceSize", "cudnnConvolutionForward",
        "cudnnCreateDropoutDescriptor", "cudnnSetDropoutDescriptor",
        // nn.LSTM / nn.GRU / nn.RNN and F.ctc_loss with device targets.
        "cudnnCreateRNNDescriptor", "cudnnSetRNNDescriptor_v8", "cudnnGetRNNDescriptor_v8",
        "cudnnDestroyRNNDescriptor", "cudnnCreateRNNDataDescriptor", "cudnnSetRNNDataDescriptor",
        "cudnnDestroyRNNDataDescriptor", "cudnnGetRNNWeightSpaceSize",
        "cudnnGetRNNTempSpaceSizes", "cudnnGetRNNWeightParams", "cudnnRNNForward",
        "cudnnRNNBackwardData_v8", "cudnnRNNBackwardWeights_v8", "cudnnDestroyDropoutDescriptor",
        "cudnnDropoutGetStatesSize", "cudnnRestoreDropoutDescriptor",
        "cudnnCreateCTCLossDescriptor", "cudnnSetCTCLossDescriptor_v8",
        "cudnnSetCTCLossDescriptor_v9", "cudnnGetCTCLossWorkspaceSize_v8", "cudnnCTCLoss_v8",
        "cudnnDestroyCTCLossDescriptor",
        // F.ctc_loss with host targets.
        "cudnnSetCTCLossDescriptorEx", "cudnnGetCTCLossWorkspaceSize", "cudnnCTCLoss",
        // The rest of the legacy API and multi-head attention.
        "cudnnNormalizationForwardInference", "cudnnNormalizationForwardTraining",
        "cudnnNormalizationBackward", "cudnnGetNormalizationForwardTrainingWorkspaceSize",
        "cudnnGetNormalizationBackwardWorkspaceSize",
        "cudnnGetNormalizationTrainingReserveSpaceSize", "cudnnSpatialTfGridGeneratorForward",
        "cudnnSpatialTfGridGeneratorBackward", "cudnnSpatialTfSamplerForward",
        "cudnnSpatialTfSamplerBackward", "cudnnIm2Col", "cudnnReorderFilterAndBias",
        "cudnnQueryRuntimeError", "cudnnRNNSetClip_v9", "cudnnRNNGetClip_v9",
        "cudnnGetDropoutDescriptor", "cudnnCreateAttnDescriptor", "cudnnSetAttnDescriptor",
        "cudnnGetAttnDescriptor", "cudnnCreateSeqDataDescriptor", "cudnnSetSeqDataDescriptor",
        "cudnnGetSeqDataDescriptor", "cudnnGetMultiHeadAttnBuffers",
        "cudnnGetMultiHeadAttnWeights", "cudnnMultiHeadAttnForward",
        "cudnnMultiHeadAttnBackwardData", "cudnnMultiHeadAttnBackwardWeights"}) {
    INFO(name);
    CHECK(cls[name] != "unsupported");
  }
  // At least 90% of the exports are real; what is left calls back into the
  // app, hands over a client cudaGraph_t, is internal or is the deprecated
  // fused-ops API.
  CHECK(real >= 204);
  CHECK(call["cudnnRNNForward"] == "async");
  CHECK(call["cudnnCTCLoss_v8"] == "async");
  CHECK(call["cudnnGetRNNWeightParams"] == "sync");
  CHECK(call["cudnnGetRNNDescriptor_v8"] == "local");
  CHECK(cls["cudnnSetCallback"] == "unsupported");
  CHECK(cls["cudnnCreateFusedOpsPlan"] == "unsupported");
  // Error-code-only: execution, compute and settings; the app acts on the
  // status of a finalization and of an attribute at once.
  CHECK(call["cudnnBackendExecute"] == "async");
  CHECK(call["cudnnBatchNormalizationForwardTrainingEx"] == "async");
  CHECK(call["cudnnSetTensorNdDescriptor"] == "async");
  CHECK(call["cudnnBackendFinalize"] == "sync");
  CHECK(call["cudnnBackendSetAttribute"] == "sync");
  CHECK(call["cudnnGetErrorString"] == "local");
  CHECK(cls["cudnnBackendPopulateCudaGraph"] == "unsupported");
}

TEST_CASE("the committed cuDNN name list matches the installed vendor library",
          "[interpose][spec][cudnn]") {
  gleam::test::spec::check_vendor_list(vendor, version);
}

TEST_CASE("the generated cuDNN name lists follow the spec", "[interpose][spec][cudnn]") {
  gleam::test::spec::check_generated_lists("cudnn");
}

TEST_CASE("the built libcudnn.so.9 exports exactly the spec's names, versioned",
          "[interpose][library][cudnn]") {
  gleam::test::spec::check_built_exports("cudnn", version);
}

TEST_CASE("cuDNN calls answered at the call need no server", "[interpose][library][cudnn]") {
  auto* lib = dlopen(built().c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO("dlopen: " << (lib ? "" : dlerror()));
  REQUIRE(lib != nullptr);
#define GLEAM_CUDNN(name)                                                      \
  auto name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));          \
  REQUIRE(name != nullptr)
  GLEAM_CUDNN(cudnnGetErrorString);
  GLEAM_CUDNN(cudnnGetStream);
  GLEAM_CUDNN(cudnnSetStream);
  GLEAM_CUDNN(cudnnCreate);
  GLEAM_CUDNN(cudnnGetProperty);
  GLEAM_CUDNN(cudnnBackendSetAttribute);
  GLEAM_CUDNN(cudnnBackendGetAttribute);
  GLEAM_CUDNN(cudnnBackendExecute);
  GLEAM_CUDNN(cudnnSetTensorNdDescriptor);
  GLEAM_CUDNN(cudnnBatchNormalizationForwardInference);
  GLEAM_CUDNN(cudnnBackendPopulateCudaGraph);
  GLEAM_CUDNN(cudnnSetCallback);
  GLEAM_CUDNN(cudnnGetRNNDescriptor_v8);
  GLEAM_CUDNN(cudnnRNNForward);
  GLEAM_CUDNN(cudnnSetRNNDataDescriptor);
  GLEAM_CUDNN(cudnnCTCLoss);
#undef GLEAM_CUDNN
  CHECK(std::string(cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM)) == "CUDNN_STATUS_BAD_PARAM");
  CHECK(std::string(cudnnGetErrorString(CUDNN_STATUS_NOT_SUPPORTED_SHAPE))
        == "CUDNN_STATUS_NOT_SUPPORTED_SHAPE");
  // Handles and descriptors the app does not hold (or none) are
  // CUDNN_STATUS_BAD_PARAM before anything is sent.
  int not_a_handle[16] = {};
  auto foreign = reinterpret_cast<cudnnHandle_t>(not_a_handle);
  cudaStream_t stream = nullptr;
  CHECK(cudnnGetStream(nullptr, &stream) == CUDNN_STATUS_BAD_PARAM);
  CHECK(cudnnGetStream(foreign, &stream) == CUDNN_STATUS_BAD_PARAM);
  CHECK(cudnnSetStream(foreign, nullptr) == CUDNN_STATUS_BAD_PARAM);
  CHECK(cudnnCreate(nullptr) == CUDNN_STATUS_BAD_PARAM);
  CHECK(cudnnGetProperty(MAJOR_VERSION, nullptr) == CUDNN_STATUS_BAD_PARAM);
  int64_t value = 1;
  CHECK(cudnnBackendSetAttribute(not_a_handle, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1,
                                 &value)
        == CUDNN_STATUS_BAD_PARAM);
  int64_t count = 0;
  CHECK(cudnnBackendGetAttribute(nullptr, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &count,
                                 &value)
        == CUDNN_STATUS_BAD_PARAM);
  CHECK(cudnnBackendExecute(foreign, not_a_handle, not_a_handle) == CUDNN_STATUS_BAD_PARAM);
  int dims[4] = {1, 2, 3, 4}, strides[4] = {24, 12, 4, 1};
  CHECK(cudnnSetTensorNdDescriptor(reinterpret_cast<cudnnTensorDescriptor_t>(not_a_handle),
                                   CUDNN_DATA_FLOAT, 4, dims, strides)
        == CUDNN_STATUS_BAD_PARAM);
  float one = 1;
  CHECK(cudnnBatchNormalizationForwardInference(foreign, CUDNN_BATCHNORM_SPATIAL, &one, &one,
                                                nullptr, nullptr, nullptr, nullptr, nullptr,
                                                nullptr, nullptr, nullptr, nullptr, 1e-5)
        == CUDNN_STATUS_BAD_PARAM);
  // Unsupported: the defined status, never a pretended success.
  CHECK(cudnnBackendPopulateCudaGraph(foreign, not_a_handle, not_a_handle, nullptr)
        == CUDNN_STATUS_NOT_SUPPORTED);
  CHECK(cudnnSetCallback(0, nullptr, nullptr) == CUDNN_STATUS_NOT_SUPPORTED);
  // The RNN API: descriptors the app does not hold are refused at the
  // call, the getter answers from the client without a server.
  auto foreign_rnn = reinterpret_cast<cudnnRNNDescriptor_t>(not_a_handle);
  int32_t hidden = -1;
  CHECK(cudnnGetRNNDescriptor_v8(foreign_rnn, nullptr, nullptr, nullptr, nullptr, nullptr,
                                 nullptr, nullptr, nullptr, nullptr, &hidden, nullptr, nullptr,
                                 nullptr, nullptr)
        == CUDNN_STATUS_BAD_PARAM);
  CHECK(hidden == -1);
  CHECK(cudnnRNNForward(foreign, foreign_rnn, CUDNN_FWD_MODE_INFERENCE, nullptr, nullptr, nullptr,
                        nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0,
                        nullptr, 0, nullptr, 0, nullptr)
        == CUDNN_STATUS_BAD_PARAM);
  int lengths[1] = {1};
  CHECK(cudnnSetRNNDataDescriptor(reinterpret_cast<cudnnRNNDataDescriptor_t>(not_a_handle),
                                  CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, 1, 1,
                                  1, lengths, nullptr)
        == CUDNN_STATUS_BAD_PARAM);
  CHECK(cudnnCTCLoss(foreign, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                     nullptr, CUDNN_CTC_LOSS_ALGO_DETERMINISTIC, nullptr, nullptr, 0)
        == CUDNN_STATUS_BAD_PARAM);

  // Where the vendor library is installed, the status names are its names.
  if (auto* v = dlopen(vendor.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    auto name = reinterpret_cast<decltype(&::cudnnGetErrorString)>(dlsym(v, "cudnnGetErrorString"));
    REQUIRE(name != nullptr);
    for (auto s : {CUDNN_STATUS_SUCCESS, CUDNN_STATUS_NOT_INITIALIZED, CUDNN_STATUS_BAD_PARAM,
                   CUDNN_STATUS_BAD_PARAM_NULL_POINTER, CUDNN_STATUS_NOT_SUPPORTED,
                   CUDNN_STATUS_INTERNAL_ERROR, CUDNN_STATUS_EXECUTION_FAILED}) {
      INFO(static_cast<int>(s));
      CHECK(std::string(cudnnGetErrorString(s)) == name(s));
    }
    dlclose(v);
  }
  dlclose(lib);
}

TEST_CASE("a cuDNN program binds to our library and fails cleanly without a server",
          "[interpose][library][cudnn]") {
  // The first call that needs the server (cudnnGetProperty: the server
  // library's version) says the library is not initialized.
  gleam::test::spec::check_program_binds(
    "cudnn_conv", version, "cudnnGetProperty",
    "cudnnGetProperty(MAJOR_VERSION, &major) failed: CUDNN_STATUS_NOT_INITIALIZED");
}

TEST_CASE("the generator checks cuDNN's annotations", "[interpose][spec][cudnn]") {
  auto dir = gleam::test::build_path("tests/interpose_spec_test.d");
  std::string ignored;
  REQUIRE(gleam::test::run_command("mkdir -p '" + dir + "'", ignored) == 0);
  auto spec = dir + "/cudnn.spec";
  auto refused = [&](const std::string& entry) {
    std::ofstream{spec} << "handle cudnnHandle_t object cudnnContext destroy cudnnDestroy "
                           "stream cudnnSetStream\n"
                        << "handle cudnnTensorDescriptor_t object cudnnTensorStruct destroy "
                           "cudnnDestroyTensorDescriptor\n"
                        << "fn f\n  header cudnn.h\n  returns cudnnStatus_t\n"
                           "  class generated\n  id 1\n"
                        << entry << "end\n";
    std::string out;
    auto rc = gleam::test::run_command(
      "python3 '" + gleam::test::source_path("interpose/gen/generate.py") + "' --library cudnn"
        + " --spec '" + spec + "' 2>&1",
      out);
    CHECK(rc != 0);
    return out;
  };
  CHECK_THAT(refused("  call async\n  param const int *p | in opthost\n"),
             Catch::Contains("needs the extent"));
  CHECK_THAT(refused("  call async\n  param int n | optional\n"),
             Catch::Contains("'| optional' marks a by-value handle"));
  CHECK_THAT(refused("  call async\n  remember t.data_type = k\n"
                     "  param cudnnTensorDescriptor_t t\n"),
             Catch::Contains("remember: k is no parameter"));
  CHECK_THAT(refused("  call async\n  remember h.stream = k\n  param int k\n"),
             Catch::Contains("remember: h is no required object handle"));
  CHECK_THAT(refused("  call async\n  param cudnnTensorDescriptor_t t\n"
                     "  param const void *x | in dev cudnn_tensor_size(api, t)\n"),
             Catch::Contains("names no parameter 'cudnn_tensor_size'"));
  CHECK_THAT(refused("  call sync\n  async n > 1\n  param int n\n  param size_t *s | out host 1\n"),
             Catch::Contains("'async <condition>' belongs to a 'call sync' entry"));
  CHECK_THAT(refused("  call sync\n  async m > 1\n  param int n\n"),
             Catch::Contains("check 'm > 1' names no parameter 'm'"));
}
