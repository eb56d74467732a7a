#include "executor/library_graveyard.hpp"

namespace gleam::executor {

library_graveyard::~library_graveyard() {
  bury(true);
}

int32_t library_graveyard::destroy(std::function<int32_t()> destroy_now,
                                   const std::function<void()>& detach) {
  if (!context_captures_())
    return destroy_now();
  if (detach)
    detach();
  parked_.push_back(std::move(destroy_now));
  return 0;
}

void library_graveyard::bury(bool force) {
  if (parked_.empty() || (!force && context_captures_()))
    return;
  auto parked = std::move(parked_);
  parked_.clear();
  for (auto& destroy : parked)
    static_cast<void>(destroy());
}

} // namespace gleam::executor
