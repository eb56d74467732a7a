// Put throughput of rocksdb_chunk_store with and without an fsync per put.
// Usage: cache_store_put_bench DIR [chunks] [chunk KiB]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "cache_store/error.hpp"
#include "cache_store/hash.hpp"
#include "cache_store/rocksdb_chunk_store.hpp"

namespace cs = gleam::cache_store;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [chunks] [chunk KiB]\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  size_t count = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256;
  size_t kib = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1024;
  std::vector<std::vector<uint8_t>> chunks(count);
  std::vector<cs::chunk_key> keys(count);
  for (size_t i = 0; i < count; ++i) {
    chunks[i].resize(kib * 1024);
    for (size_t j = 0; j < chunks[i].size(); ++j)
      chunks[i][j] = static_cast<uint8_t>((i * 131 + j) * 2654435761u >> 11);
    keys[i] = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, chunks[i].data(),
                             chunks[i].size());
  }
  for (bool sync : {false, true}) {
    cs::rocksdb_store_options opts;
    opts.path = dir + (sync ? "/sync" : "/nosync");
    opts.sync = sync;
    std::filesystem::remove_all(opts.path);
    auto store = cs::rocksdb_chunk_store::open(opts);
    if (!store) {
      std::fprintf(stderr, "%s\n", cs::render(store.error()).c_str());
      return 1;
    }
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < count; ++i)
      if (auto err = (*store)->put(keys[i], chunks[i])) {
        std::fprintf(stderr, "%s\n", cs::render(err).c_str());
        return 1;
      }
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                              - t0)
                  .count();
    std::printf("sync=%d: %zu puts of %zu KiB: %.3f s, %.0f puts/s, %.1f MB/s\n",
                sync, count, kib, secs, count / secs,
                count * kib * 1024.0 / secs / 1e6);
    store->reset();
    std::filesystem::remove_all(opts.path);
  }
  return 0;
}
