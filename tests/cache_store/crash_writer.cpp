// Helper of the kill -9 test: opens the chunk store at argv[1], puts chunks
// 0..N-1 (argv[2]), each for tenant crash_tenant(i), and prints each index to stdout once its put returned,
// then keeps putting chunks N, N+1, ... while another thread SIGKILLs the
// process after K (argv[3]) more acknowledged puts, in the middle of a write.
// With K = 0 it puts chunks START (argv[4]), START+1, ... forever and the
// parent SIGKILLs it at a moment of its choosing.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <unistd.h>

#include "cache_store/error.hpp"
#include "cache_store/hash.hpp"
#include "cache_store/rocksdb_chunk_store.hpp"
#include "tests/cache_store/test_util.hpp"

namespace cs = gleam::cache_store;

namespace {

void ack(uint64_t i) {
  auto line = std::to_string(i) + "\n";
  // One write per line: the parent sees whole lines even after the kill.
  if (::write(STDOUT_FILENO, line.data(), line.size())
      != static_cast<ssize_t>(line.size()))
    std::_Exit(3);
}

bool put_chunk(cs::chunk_store& store, uint64_t i) {
  auto bytes = cs::test::crash_chunk(i);
  auto key = cs::hash_chunk(cs::chunk_key::algo::xxh3_128, bytes.data(),
                            bytes.size());
  if (auto err = store.put(key, bytes, cs::tenant_set{cs::test::crash_tenant(i)})) {
    std::fprintf(stderr, "put %llu failed: %s\n",
                 static_cast<unsigned long long>(i), cs::render(err).c_str());
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: %s DB_PATH N K [START]\n", argv[0]);
    return 2;
  }
  cs::rocksdb_store_options opts;
  opts.path = argv[1];
  auto n = std::strtoull(argv[2], nullptr, 10);
  auto k = std::strtoull(argv[3], nullptr, 10);
  auto store = cs::rocksdb_chunk_store::open(opts);
  if (!store) {
    std::fprintf(stderr, "%s\n", cs::render(store.error()).c_str());
    return 1;
  }
  if (k == 0) {
    auto start = argc == 5 ? std::strtoull(argv[4], nullptr, 10) : 0;
    for (uint64_t i = start;; ++i) {
      if (!put_chunk(**store, i))
        return 1;
      ack(i);
    }
  }
  for (uint64_t i = 0; i < n; ++i) {
    if (!put_chunk(**store, i))
      return 1;
    ack(i);
  }
  std::atomic<uint64_t> done{0};
  std::thread killer{[&] {
    while (done.load() < k)
      std::this_thread::yield();
    ::kill(::getpid(), SIGKILL);
  }};
  for (uint64_t i = n;; ++i) {
    if (!put_chunk(**store, i))
      std::_Exit(1);
    ack(i);
    done.fetch_add(1);
  }
}
