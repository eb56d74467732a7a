#include "interpose/host_calls.hpp"

#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace gleam::interpose {

namespace {

/// Invocations remembered as done, per process: the server asks again only
/// for the few calls in progress, so the oldest are forgotten past this.
constexpr size_t remembered_invocations = 4096;

struct host_call_table {
  std::mutex mutex;
  std::map<std::pair<cudaHostFn_t, void*>, uint64_t> ids;
  std::map<uint64_t, std::pair<cudaHostFn_t, void*>> pairs;
  std::set<std::pair<uint64_t, uint64_t>> done; // (session, invocation)
};

host_call_table& table() {
  // Never destroyed: host calls may come while static destructors run.
  static auto* t = new host_call_table;
  return *t;
}

thread_local bool running_host_call = false;

} // namespace

uint64_t register_host_call(cudaHostFn_t fn, void* data) {
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mutex};
  auto [i, fresh] = t.ids.emplace(std::make_pair(fn, data), t.ids.size() + 1);
  if (fresh)
    t.pairs[i->second] = i->first;
  return i->second;
}

bool host_call_of(uint64_t callback, cudaHostFn_t* fn, void** data) {
  auto& t = table();
  std::lock_guard<std::mutex> guard{t.mutex};
  auto i = t.pairs.find(callback);
  if (i == t.pairs.end())
    return false;
  *fn = i->second.first;
  *data = i->second.second;
  return true;
}

bool run_host_call(uint64_t session, uint64_t callback, uint64_t invocation) {
  cudaHostFn_t fn = nullptr;
  void* data = nullptr;
  {
    auto& t = table();
    std::lock_guard<std::mutex> guard{t.mutex};
    auto i = t.pairs.find(callback);
    if (i == t.pairs.end())
      return false;
    if (!t.done.emplace(session, invocation).second)
      return true;
    if (t.done.size() > remembered_invocations)
      t.done.erase(t.done.begin());
    fn = i->second.first;
    data = i->second.second;
  }
  running_host_call = true;
  fn(data);
  running_host_call = false;
  return true;
}

bool in_host_call() noexcept {
  return running_host_call;
}

} // namespace gleam::interpose
