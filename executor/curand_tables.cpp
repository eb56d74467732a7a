// The server side of the manual cuRAND functions that travel as LibraryCall
// ops (interpose/spec/curand.spec, class manual with an id): the library's
// host tables, sent whole as one host output. The client keeps one copy per
// process and hands out its address (interpose/curand/tables.cpp).
#include "executor/curand_api.hpp"

#include <cstring>

#include "executor/curand_function_ids.hpp"
#include "wire/curand_tables.hpp"

namespace gleam::executor {

namespace {

namespace ids = generated::curand_ids;
namespace tables = wire::curand_tables;

/// Reports `status` of `function`; on success the `bytes` at `table` (the
/// library's host memory, set by the call before this one) become the
/// call's host output.
void send_table(library_call_env& env, curandStatus_t status, const void* table, uint64_t bytes,
                const char* function) {
  if (status == CURAND_STATUS_SUCCESS && table != nullptr) {
    auto* out = env.host_output(bytes, function);
    if (out == nullptr)
      return;
    std::memcpy(out, table, static_cast<size_t>(bytes));
  }
  env.report(status, function);
}

} // namespace

bool run_manual_curand(curand_api& api, library_call_env& env, uint32_t function,
                       wire::arg_reader& in) {
  switch (function) {
    case ids::curandGetDirectionVectors32: {
      auto set = in.value<curandDirectionVectorSet_t>();
      if (!arguments_ready(env, in, api.curandGetDirectionVectors32, "curandGetDirectionVectors32"))
        return true;
      curandDirectionVectors32_t* table = nullptr;
      auto status = api.curandGetDirectionVectors32(&table, set);
      send_table(env, status, table, tables::vectors32_bytes, "curandGetDirectionVectors32");
      return true;
    }
    case ids::curandGetDirectionVectors64: {
      auto set = in.value<curandDirectionVectorSet_t>();
      if (!arguments_ready(env, in, api.curandGetDirectionVectors64, "curandGetDirectionVectors64"))
        return true;
      curandDirectionVectors64_t* table = nullptr;
      auto status = api.curandGetDirectionVectors64(&table, set);
      send_table(env, status, table, tables::vectors64_bytes, "curandGetDirectionVectors64");
      return true;
    }
    case ids::curandGetScrambleConstants32: {
      if (!arguments_ready(env, in, api.curandGetScrambleConstants32,
                           "curandGetScrambleConstants32"))
        return true;
      unsigned int* table = nullptr;
      auto status = api.curandGetScrambleConstants32(&table);
      send_table(env, status, table, tables::constants32_bytes, "curandGetScrambleConstants32");
      return true;
    }
    case ids::curandGetScrambleConstants64: {
      if (!arguments_ready(env, in, api.curandGetScrambleConstants64,
                           "curandGetScrambleConstants64"))
        return true;
      unsigned long long* table = nullptr;
      auto status = api.curandGetScrambleConstants64(&table);
      send_table(env, status, table, tables::constants64_bytes, "curandGetScrambleConstants64");
      return true;
    }
    default:
      return false;
  }
}

} // namespace gleam::executor
