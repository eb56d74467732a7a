// cuRAND's host tables (curandGetDirectionVectors32/64,
// curandGetScrambleConstants32/64): the library hands out pointers to
// tables in its own host memory. Here they are the server's tables, fetched
// once per process and set (a LibraryCall of the function's spec id; the
// server side is executor/curand_tables.cpp) and kept for the life of the
// process, as the vendor's are.
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "interpose/curand/library.hpp"
#include "interpose/curand_export.hpp"
#include "interpose/curand_function_ids.hpp"
#include "wire/curand_tables.hpp"

namespace {

namespace ids = gleam::generated::curand_ids;
namespace tables = gleam::wire::curand_tables;
using gleam::interpose::curand::traits;

/// The tables fetched so far, by (function id, set); never freed.
std::mutex tables_mutex;
std::map<std::pair<uint32_t, int>, std::unique_ptr<unsigned char[]>>& fetched() {
  static auto* m = new std::map<std::pair<uint32_t, int>, std::unique_ptr<unsigned char[]>>;
  return *m;
}

/// The table of function `id` for `set` (-1: the function takes none) of
/// `bytes` bytes in *out: fetched from the server the first time.
curandStatus_t table(uint32_t id, const char* name, int set, uint64_t bytes, void** out) {
  return static_cast<curandStatus_t>(gleam::interpose::library_guarded(traits, [&]() -> int {
    if (out == nullptr)
      return CURAND_STATUS_OUT_OF_RANGE;
    std::lock_guard<std::mutex> guard{tables_mutex};
    auto& slot = fetched()[{id, set}];
    if (slot == nullptr) {
      std::unique_ptr<unsigned char[]> buffer{new unsigned char[bytes]};
      gleam::interpose::library_call call(traits, id, name);
      if (set >= 0)
        call.value(static_cast<curandDirectionVectorSet_t>(set));
      if (auto st = call.host_output(buffer.get(), bytes); st != CURAND_STATUS_SUCCESS)
        return st;
      if (auto st = call.finish(); st != CURAND_STATUS_SUCCESS)
        return st;
      slot = std::move(buffer);
    }
    *out = slot.get();
    return CURAND_STATUS_SUCCESS;
  }));
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT curandStatus_t curandGetDirectionVectors32(curandDirectionVectors32_t* vectors[],
                                                                  curandDirectionVectorSet_t set) {
  return table(ids::curandGetDirectionVectors32, "curandGetDirectionVectors32",
               static_cast<int>(set), tables::vectors32_bytes, reinterpret_cast<void**>(vectors));
}

GLEAM_INTERPOSE_EXPORT curandStatus_t curandGetDirectionVectors64(curandDirectionVectors64_t* vectors[],
                                                                  curandDirectionVectorSet_t set) {
  return table(ids::curandGetDirectionVectors64, "curandGetDirectionVectors64",
               static_cast<int>(set), tables::vectors64_bytes, reinterpret_cast<void**>(vectors));
}

GLEAM_INTERPOSE_EXPORT curandStatus_t curandGetScrambleConstants32(unsigned int** constants) {
  return table(ids::curandGetScrambleConstants32, "curandGetScrambleConstants32", -1,
               tables::constants32_bytes, reinterpret_cast<void**>(constants));
}

GLEAM_INTERPOSE_EXPORT curandStatus_t curandGetScrambleConstants64(unsigned long long** constants) {
  return table(ids::curandGetScrambleConstants64, "curandGetScrambleConstants64", -1,
               tables::constants64_bytes, reinterpret_cast<void**>(constants));
}

} // extern "C"
