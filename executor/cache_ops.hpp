#pragma once

#include <cstdint>
#include <string>

#include <cuda.h>

#include "actors/proto/ops.pb.h"
#include "executor/driver_api.hpp"
#include "executor/session.hpp"
#include "executor/weight_cache.hpp"

namespace gleam::executor {

/// Largest chunk one CacheUpload may carry, bytes (16 MiB).
constexpr uint64_t max_cache_chunk_bytes = uint64_t{16} << 20;

/// Largest module image one session may send in CacheUpload parts, bytes
/// (1 GiB; held in host memory until its last part).
constexpr uint64_t max_image_bytes = uint64_t{1} << 30;

/// Most chunks of one session whose parts may be arriving at once (each
/// holds up to max_cache_chunk_bytes of host memory until its last part).
constexpr size_t max_chunks_in_parts = 16;

/// Runs the weight-cache ops of one session against the node's
/// weight_cache and the device, writing one OpResult. The caller (the
/// cache family's handlers, registered at the end of cache_ops.cpp) has
/// already validated streams and ranges where the signature takes a
/// resolved CUstream. Not thread-safe (like the executor).
class cache_ops {
public:
  /// `cache` may be null: every cache op then fails with
  /// CUDA_ERROR_NOT_SUPPORTED and a reason.
  cache_ops(driver_api& api, session& s, weight_cache* cache, proto::OpResult& r)
    : api_(api), s_(s), cache_(cache), r_(r), reader_{s.tenant} {
  }

  /// CacheFill: writes every chunk the store (or a peer shard) holds into
  /// [dst, dst + sum(sizes)), ordered on `stream`; answers the indices of
  /// the chunks it lacks in CacheFilled.missing.
  void fill(const proto::CacheFill& op, CUstream stream);

  /// CacheUpload: re-hashes the chunk (refused, nothing written, on a
  /// mismatch), writes it to dst on `stream` and stores it unverified. A
  /// part (chunk_size set) is kept in the session until the chunk's last
  /// part, which does all that for the whole chunk; a part out of order or
  /// not fitting its chunk fails with CUDA_ERROR_INVALID_VALUE and drops
  /// the parts of that chunk.
  void upload(const proto::CacheUpload& op, CUstream stream);

  /// CacheUpload with `image` set: a module image (or a part of one, parts
  /// in order as for a chunk, up to max_image_bytes) stored under its key
  /// once whole, matching it and passing check_module_image (a refused
  /// image is not stored: CUDA_ERROR_INVALID_IMAGE), for a ModuleLoad by
  /// image_key. No device is touched.
  void upload_image(const proto::CacheUpload& op);

  /// CacheStats, CacheList, CacheEvict, CacheGet (bytes in OpResult.data,
  /// CUDA_ERROR_NOT_FOUND on a miss). CacheGet and CacheList apply the
  /// tenant rule for the session's tenant (weight_cache::read, list): a
  /// tenant reads and sees only shared (SHA-256) chunks and its own XXH3
  /// ones; another tenant's chunk is a miss.
  void get(const proto::CacheGet& op);
  void stats();
  void list(const proto::CacheList& op);
  void evict(const proto::CacheEvict& op);

  /// The image of a ModuleLoad: `op.image()` when present (stored under
  /// image_key after checking its key and check_module_image), else the
  /// cached image for image_key. The caller checks the image it gets with
  /// check_module_image before the driver sees it, whichever way it came. On a
  /// miss sets status CUDA_ERROR_NOT_FOUND (CUDA_ERROR_NOT_SUPPORTED without
  /// a cache: then only the image in the load will do) with payload
  /// image_missing and returns false.
  bool module_image(const proto::ModuleLoad& op, std::string& image);

  /// The weight rule at MemFree / session end: reads back every chunk placed
  /// in [base, base + size) and verifies it (weight_cache::verify), then
  /// forgets them. Needs no result; never fails the caller.
  static void verify_placed(driver_api& api, session& s, weight_cache* cache, uint64_t base,
                            uint64_t size);

  /// Runs one of the ops that need no device (CacheGet, CacheStats,
  /// CacheList, CacheEvict) on `cache` into `r`; any other op gets
  /// CUDA_ERROR_NOT_SUPPORTED. For the cache_shard actor. `reader`: whose
  /// view CacheGet and CacheList get; a request without a tenant context
  /// (a peer's fetch) is the unnamed tenant "", which sees shared chunks
  /// and the unnamed tenant's, never a named tenant's XXH3 chunks; an
  /// admin's (every_tenant) sees every entry.
  static void run_without_device(weight_cache& cache, const proto::Op& op, proto::OpResult& r,
                                 const cache_reader& reader = {});

private:
  /// Adds `part`, the bytes of the part `op`, to its chunk (an image's
  /// parts: to the session's one image slot); true with the whole chunk in
  /// `whole` once the last part came, false while parts are missing or on
  /// failure (then the result says why).
  bool collect_part(const proto::CacheUpload& op, std::string_view part, std::string& whole);

  /// The bytes of `op` packed by its codec (wire/byte_codec.hpp), in `out`:
  /// false (the result says why) for an unknown codec, more than a chunk,
  /// or bytes that do not unpack to the raw_size declared.
  bool unpack(const proto::CacheUpload& op, std::string& out);

  /// The whole payload of the CacheUpload `op` in `data` (its bytes,
  /// unpacked, or with parts the chunk or image they make once the last
  /// came, held in `assembled`) and its `key`, checked: within its size
  /// limit, the key's content. False while parts are missing or on failure
  /// (then the result says why).
  bool receive(const proto::CacheUpload& op, std::string& assembled, std::string_view& data,
               cache_store::chunk_key& key);

  /// Whether `image` may be stored under `key`: check_module_image passes;
  /// otherwise the result says why (nothing stored).
  bool storable_image(const cache_store::chunk_key& key, std::string_view image);

  bool need_cache();
  void fail(CUresult rc, std::string detail);
  bool write(uint64_t dst, const void* src, size_t size, bool device_src, CUstream stream,
             const char* what);

  driver_api& api_;
  session& s_;
  weight_cache* cache_;
  proto::OpResult& r_;
  /// Whose view CacheGet and CacheList get: the session's tenant's.
  cache_reader reader_;
};

} // namespace gleam::executor
