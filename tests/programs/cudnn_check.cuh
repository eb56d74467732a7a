// The cuDNN status check of the cuDNN test programs (cudnn_conv, cudnn_rnn).
#pragma once

#include <cstdio>
#include <cstdlib>

#include <cudnn.h>

/// Checks a cuDNN call; on failure prints the call and the status name to
/// stderr and exits with status 1.
#define GLEAM_CUDNN_CHECK(call)                                                  \
  do {                                                                           \
    cudnnStatus_t gleam_cudnn_status_ = (call);                                  \
    if (gleam_cudnn_status_ != CUDNN_STATUS_SUCCESS) {                           \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,  \
                   cudnnGetErrorString(gleam_cudnn_status_));                    \
      std::exit(1);                                                              \
    }                                                                            \
  } while (false)
