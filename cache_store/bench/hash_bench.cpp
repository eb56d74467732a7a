// Hashing throughput of hash_chunks over a 1 GiB buffer, for 1 and N
// threads and both algorithms. Usage: cache_store_hash_bench [MiB] [chunk MiB]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "cache_store/hash.hpp"

namespace cs = gleam::cache_store;

namespace {

double run(cs::chunk_key::algo kind, const std::vector<uint8_t>& buf,
           size_t chunk_size, unsigned threads) {
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    auto keys = cs::hash_chunks(kind, buf.data(), buf.size(), chunk_size,
                                threads);
    auto t1 = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(t1 - t0).count();
    double gbps = static_cast<double>(buf.size()) / secs / 1e9;
    if (gbps > best)
      best = gbps;
    if (keys.empty())
      std::abort();
  }
  return best;
}

} // namespace

int main(int argc, char** argv) {
  size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  size_t chunk_mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4;
  std::vector<uint8_t> buf(mib << 20);
  for (size_t i = 0; i < buf.size(); ++i)
    buf[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  unsigned n = std::max(1u, std::thread::hardware_concurrency());
  std::printf("buffer %zu MiB, chunks %zu MiB, %u hardware threads\n", mib,
              chunk_mib, n);
  // Reference: one thread reading (and writing) memory at full speed.
  {
    std::vector<uint8_t> dst(buf.size());
    double best = 0;
    for (int rep = 0; rep < 3; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      std::memcpy(dst.data(), buf.data(), buf.size());
      auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now()
                                                - t0)
                    .count();
      best = std::max(best, static_cast<double>(buf.size()) / secs / 1e9);
    }
    std::printf("memcpy  threads=1   %6.2f GB/s (read rate)\n", best);
  }
  for (auto kind : {cs::chunk_key::algo::xxh3_128, cs::chunk_key::algo::sha256}) {
    for (unsigned threads : {1u, n}) {
      auto gbps = run(kind, buf, chunk_mib << 20, threads);
      std::printf("%-7s threads=%-3u %6.2f GB/s\n",
                  cs::to_string(kind).c_str(), threads, gbps);
      if (n == 1)
        break;
    }
  }
  return 0;
}
