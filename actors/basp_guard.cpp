#include "actors/basp_guard.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include <caf/io/basp/header.hpp>

#include "actors/log.hpp"

namespace {

/// libcaf_io's mangled name of caf::io::basp::valid(const header&).
constexpr const char* valid_symbol = "_ZN3caf2io4basp5validERKNS1_6headerE";

std::atomic<uint64_t> limit{gleam::actors::default_max_message_bytes};
std::atomic<uint64_t> refused{0};
std::atomic<gleam::actors::basp_header_observer> observer{nullptr};
thread_local int socket_read = -1;

using valid_fn = bool (*)(const caf::io::basp::header&);

/// CAF's own check: the next definition after ours. The caller is
/// libcaf_io, so it exists; its absence is a broken invariant.
valid_fn cafs_valid() noexcept {
  static const valid_fn fn = [] {
    auto* f = reinterpret_cast<valid_fn>(dlsym(RTLD_NEXT, valid_symbol));
    if (f == nullptr) {
      std::fprintf(stderr, "gleam: basp_guard: CAF's %s not found after ours: %s\n",
                   valid_symbol, dlerror());
      std::abort();
    }
    return f;
  }();
  return fn;
}

} // namespace

// The guard, hidden so that basp_guard_active() can tell it from whatever
// the process resolves; exported below under CAF's name.
extern "C" __attribute__((visibility("hidden"))) bool
gleam_basp_guarded_valid(const caf::io::basp::header& hdr) {
  auto max = limit.load(std::memory_order_relaxed);
  if (hdr.payload_len > max) {
    // Counted, and logged for the first few: a flood must not flood the log.
    if (refused.fetch_add(1, std::memory_order_relaxed) < 8)
      gleam::actors::log(gleam::actors::log_level::warning,
                         "refused a CAF message declaring {} bytes (the limit is {} bytes, "
                         "[node] max-message); its connection is closed",
                         hdr.payload_len, max);
    return false;
  }
  if (!cafs_valid()(hdr))
    return false;
  if (auto* watch = observer.load(std::memory_order_acquire))
    watch(socket_read, static_cast<uint8_t>(hdr.operation));
  return true;
}

namespace caf::io::basp {

__attribute__((visibility("default"), alias("gleam_basp_guarded_valid"))) bool
valid(const header& hdr);

} // namespace caf::io::basp

namespace gleam::actors {

void limit_basp_messages(uint64_t max_bytes) noexcept {
  constexpr uint64_t floor = uint64_t{1} << 20;
  limit.store(max_bytes < floor ? floor : max_bytes, std::memory_order_relaxed);
}

uint64_t basp_message_limit() noexcept {
  return limit.load(std::memory_order_relaxed);
}

uint64_t basp_headers_refused() noexcept {
  return refused.load(std::memory_order_relaxed);
}

void observe_basp_headers(basp_header_observer watch) noexcept {
  observer.store(watch, std::memory_order_release);
}

void note_basp_socket_read(int fd) noexcept {
  socket_read = fd;
}

bool basp_guard_active() noexcept {
  return dlsym(RTLD_DEFAULT, valid_symbol) == reinterpret_cast<void*>(&gleam_basp_guarded_valid);
}

} // namespace gleam::actors
