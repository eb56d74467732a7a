// Fuzz target: the executor's allocation table, which decides whether a
// client pointer range lies inside the session's own allocations (the check
// that keeps one client out of another's memory). The input is a script of
// insert / erase / query steps over small addresses; every query is compared
// with a brute-force model of the same ranges.
#include <cstdint>
#include <cstdlib>
#include <map>

#include "executor/allocation_table.hpp"

namespace {

uint64_t take(const uint8_t*& p, const uint8_t* end, int bytes) {
  uint64_t x = 0;
  for (int i = 0; i < bytes && p < end; ++i)
    x = (x << 8) | *p++;
  return x;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using gleam::executor::allocation_table;
  allocation_table table;
  std::map<uint64_t, uint64_t> model; // base -> size
  const uint8_t* p = data;
  const uint8_t* end = data + size;
  auto overlaps = [&](uint64_t base, uint64_t len) {
    for (const auto& [b, s] : model)
      if (base < b + s && b < base + len)
        return true;
    return false;
  };
  while (p < end) {
    auto op = take(p, end, 1) % 3;
    auto base = take(p, end, 2) * 16;
    auto len = take(p, end, 2);
    if (op == 0) {
      gleam::executor::range_entry e;
      e.base = base;
      e.size = len;
      bool ok = table.insert(e);
      bool expect = len != 0 && !overlaps(base, len);
      if (ok != expect)
        std::abort();
      if (ok)
        model[base] = len;
    } else if (op == 1) {
      auto erased = table.erase(base);
      if (static_cast<bool>(erased) != (model.count(base) == 1))
        std::abort();
      model.erase(base);
    } else {
      bool inside = false;
      for (const auto& [b, s] : model)
        if (base >= b && len <= s && base - b <= s - len)
          inside = true;
      if (len != 0 && table.contains(base, len) != inside)
        std::abort();
    }
  }
  if (table.size() != model.size())
    std::abort();
  return 0;
}
