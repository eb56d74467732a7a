// The built libcudnn.so.9 against the GPU-less fake server
// (fake_gpu_server.cpp, whose fake cuDNN keeps backend attributes as they
// arrive and computes batch-normalization inference): generated and
// hand-written calls pack, queue and answer like the vendor's, attributes
// and descriptors travel both ways, handles are refused at the call, a
// variant pack the server refuses is the next synchronizing call's error;
// the RNN API: descriptors read back from the client, weight params inside
// the app's weight space, a tanh RNN computed by the fake.
#include <catch2/catch.hpp>

#include <string>

#include "tests/interpose_runtime/fake_server.hpp"

using gleam::test::fake_server;
using gleam::test::spec_call_classes;

TEST_CASE("cuDNN calls through the built libcudnn.so.9 answer like the vendor's",
          "[interpose_runtime][cudnn]") {
  fake_server server;
  auto expected = [](const std::string& refused) {
    return "version=91900\n"
           "major=CUDNN_STATUS_SUCCESS 9\n"
           "create=CUDNN_STATUS_SUCCESS\n"
           "set_stream=CUDNN_STATUS_SUCCESS\n"
           "get_stream=CUDNN_STATUS_SUCCESS same=1\n"
           "tensors=CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,"
           "CUDNN_STATUS_SUCCESS\n"
           "size=CUDNN_STATUS_SUCCESS 32\n"
           "batch_norm=CUDNN_STATUS_SUCCESS\n"
           "y=cudaSuccess 0 1 2 3 -1.5 -1 -0.5 0\n"
           "tensor_set=CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,"
           "CUDNN_STATUS_SUCCESS\n"
           "tensor_get=CUDNN_STATUS_SUCCESS count=4 dims=1,2,4,4\n"
           "tensor_get_wider=CUDNN_STATUS_SUCCESS count=4 tail=-9,-9\n"
           "graph=CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,"
           "CUDNN_STATUS_SUCCESS\n"
           "heuristic=CUDNN_STATUS_SUCCESS count=2\n"
           "plan=CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS\n"
           "workspace=CUDNN_STATUS_SUCCESS 256\n"
           "foreign_element=CUDNN_STATUS_BAD_PARAM\n"
           "execute=CUDNN_STATUS_SUCCESS\n"
           "sync=cudaSuccess\n"
           + refused
           + "sync_again=cudaSuccess\n"
             "foreign_handle=CUDNN_STATUS_BAD_PARAM\n"
             "destroy=CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS\n"
             "final_sync=cudaSuccess\n";
  };
  SECTION("async: an execution the server refuses is the next sync call's error, once") {
    CHECK(server.probe_with("tests/interpose_cudnn_probe", "cudnn")
          == expected("execute_host_pointer=CUDNN_STATUS_SUCCESS\n"
                      "sync_after=cudaErrorInvalidValue\n"));
  }
  SECTION("GLEAM_ASYNC=off: each call returns its own status") {
    CHECK(server.probe_with("tests/interpose_cudnn_probe", "cudnn", "GLEAM_ASYNC=off")
          == expected("execute_host_pointer=CUDNN_STATUS_BAD_PARAM\n"
                      "sync_after=cudaSuccess\n"));
  }
  auto classes = spec_call_classes("cudnn.spec");
  CHECK(classes["cudnnBackendExecute"] == "async");
  CHECK(classes["cudnnBackendSetAttribute"] == "sync");
  CHECK(classes["cudnnCreate"] == "sync");
  CHECK(classes["cudnnGetStream"] == "local");
}

TEST_CASE("an RNN through the built libcudnn.so.9: its descriptor read back locally, the weight "
          "params in the app's weight space, a forward computed on the server",
          "[interpose_runtime][cudnn]") {
  fake_server server;
  auto expected = [](const std::string& refused) {
    return "create=CUDNN_STATUS_SUCCESS\n"
           "rnn=CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS\n"
           "rnn_get=CUDNN_STATUS_SUCCESS tanh=1 fma=1 input=2 hidden=2 layers=1 dropout=(nil)\n"
           "rnn_get_foreign=CUDNN_STATUS_BAD_PARAM\n"
           "data=CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,"
           "CUDNN_STATUS_SUCCESS\n"
           "tensors=CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,"
           "CUDNN_STATUS_SUCCESS\n"
           "weight_space=CUDNN_STATUS_SUCCESS 48\n"
           "weight_params=CUDNN_STATUS_SUCCESS m=0 b=32\n"
           "weight_params=CUDNN_STATUS_SUCCESS m=16 b=40\n"
           "matrix=CUDNN_STATUS_SUCCESS 1x2x2\n"
           "temp=CUDNN_STATUS_SUCCESS 64\n"
           "forward=CUDNN_STATUS_SUCCESS\n"
           "y=cudaSuccess 0.5370 0.8005 0.9396 0.9801 hy=0.9396 0.9801\n"
           + refused
           + "destroy=CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,CUDNN_STATUS_SUCCESS,"
             "CUDNN_STATUS_SUCCESS\n"
             "final_sync=cudaSuccess\n";
  };
  SECTION("async: an x outside the session's memory is the next synchronizing call's error") {
    CHECK(server.probe_with("tests/interpose_cudnn_probe", "rnn")
          == expected("forward_host_x=CUDNN_STATUS_SUCCESS\n"
                      "sync_after=cudaErrorInvalidValue\n"));
  }
  SECTION("GLEAM_ASYNC=off: the forward's own status") {
    CHECK(server.probe_with("tests/interpose_cudnn_probe", "rnn", "GLEAM_ASYNC=off")
          == expected("forward_host_x=CUDNN_STATUS_BAD_PARAM\n"
                      "sync_after=cudaSuccess\n"));
  }
  auto classes = spec_call_classes("cudnn.spec");
  CHECK(classes["cudnnRNNForward"] == "async");
  CHECK(classes["cudnnGetRNNWeightParams"] == "sync");
  CHECK(classes["cudnnGetRNNDescriptor_v8"] == "local");
}
