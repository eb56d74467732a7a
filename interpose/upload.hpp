#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "actors/proto/ops.pb.h"

namespace gleam::interpose {

/// Bytes from which a host-to-device copy goes through `cached_upload`
/// (client config cache-threshold; SIZE_MAX when the config is invalid).
size_t cached_upload_threshold() noexcept;

/// A host-to-device copy through the weight cache (interpose/upload_protocol.hpp):
/// keys first, only the chunks the server lacks travel; prints a progress
/// bar on a terminal for transfers longer than a second. A plain copy when
/// the cache is off (GLEAM_CACHE=off) or the server has none. Returns when
/// the bytes are on the device (the source may be reused at once). With
/// GLEAM_CACHE_REPORT=1 the process prints `result gleam_sent_bytes N`,
/// `result gleam_cached_bytes N`, and the seconds spent hashing and waiting
/// for key answers (`gleam_hash_s`, `gleam_key_wait_s`) to stdout at exit
/// (for gleam-bench).
cudaError_t cached_upload(void* dst, const void* src, size_t count, cudaStream_t stream,
                          bool async);

/// Loads a module key-first through the run_ops transport (the image only
/// travels when the server lacks it); plain upload when the cache is off.
cudaError_t load_module_cached(proto::Op op, const void* image, size_t size,
                               proto::OpResult* result);

} // namespace gleam::interpose
