#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include "actors/proto/ops.pb.h"

namespace gleam::interpose {

/// The host ends of memcpy nodes and of captured cudaMemcpyAsync calls
/// that live in this process (actors/proto/ops.proto, "Memcpy nodes"): the
/// server's node asks for their bytes (to the device) or hands them over
/// (to the host) at every replay, through host_copy_atom. Each distinct
/// host end gets one id, the name the server's nodes carry; the bytes
/// travel packed, row after row. Thread-safe.
struct host_copy {
  /// The first byte of the first row.
  char* base = nullptr;
  /// Bytes from one row to the next.
  uint64_t pitch = 0;
  /// Rows from one slice to the next.
  uint64_t slice_rows = 0;
  /// Bytes a row, rows a slice, slices.
  uint64_t width = 0;
  uint64_t height = 1;
  uint64_t depth = 1;

  bool operator<(const host_copy& o) const noexcept;
};

/// The id of `c`, registered at the first use; never 0.
uint64_t register_host_copy(const host_copy& c);

/// Serves the server's request for copy `id`: with `data` non-empty writes
/// it at packed offset `offset`, else reads `want` packed bytes from there
/// into `*out`. False when `id` names nothing registered or the range runs
/// past the copy's bytes.
bool serve_host_copy(uint64_t id, uint64_t offset, const std::string& data, uint64_t want,
                     std::string* out);

/// One end of a copy: its first byte, bytes a row, rows a slice.
struct copy_end {
  void* ptr = nullptr;
  uint64_t pitch = 0;
  uint64_t slice_rows = 0;
};

/// Fills `out` for a copy of `width` x `height` x `depth` bytes from `src`
/// to `dst` of `kind` (HostToDevice, DeviceToHost or DeviceToDevice,
/// resolved by effective_kind), registering its host end.
void describe_copy(const copy_end& dst, const copy_end& src, uint64_t width, uint64_t height,
                   uint64_t depth, cudaMemcpyKind kind, proto::MemcpyNodeParams* out);

/// cudaMemcpyAsync / cudaMemcpy2DAsync of `width` x `height` bytes between
/// device memory and this process's host memory on capturing `stream`
/// (`kind` resolved): a StreamHostCopy op, whose nodes carry the bytes at
/// every replay. Error-code-only, like the copy it stands for.
cudaError_t capture_host_copy(cudaStream_t stream, void* dst, size_t dpitch, const void* src,
                              size_t spitch, size_t width, size_t height, cudaMemcpyKind kind);

} // namespace gleam::interpose
