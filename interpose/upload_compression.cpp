#include "interpose/upload_compression.hpp"

#include <chrono>

#include "wire/byte_codec.hpp"

namespace gleam::interpose {

namespace {

/// Weight of a new sample in the running averages.
constexpr double alpha = 0.3;
/// Packing must save at least this much to be worth its bytes.
constexpr double worth = 0.95;
/// ... and pack faster than the link by this margin.
constexpr double margin = 1.1;

double blend(double old, double sample) {
  return old == 0 ? sample : (1 - alpha) * old + alpha * sample;
}

} // namespace

upload_compression::mode upload_compression::parse(std::string_view text) {
  if (text == "on")
    return mode::always;
  if (text == "off")
    return mode::never;
  return mode::automatic;
}

bool upload_compression::decide() const {
  if (mode_ == mode::never)
    return false;
  if (mode_ == mode::always)
    return true;
  if (ratio_ == 0 || pack_rate_ == 0)
    return true; // nothing measured yet: try
  if (ratio_ > worth)
    return since_try_ >= retry_every; // does not shrink: try again now and then
  if (link_rate_ == 0)
    return true;
  return pack_rate_ > margin * link_rate_;
}

bool upload_compression::would_pack() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return decide();
}

std::string upload_compression::pack(std::string_view raw) {
  unsigned width = 0;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    if (raw.empty() || !decide()) {
      ++since_try_;
      return {};
    }
    since_try_ = 0;
    width = width_;
  }
  auto t0 = std::chrono::steady_clock::now();
  std::string packed;
  if (width == 0) {
    // The first part picks the element width: 2 (fp16 / bf16) or 4 (fp32).
    auto two = wire::pack_grouped(raw, 2);
    auto four = wire::pack_grouped(raw, 4);
    width = four.size() < two.size() ? 4 : 2;
    packed = std::move(width == 4 ? four : two);
  } else {
    packed = wire::pack_grouped(raw, width);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double ratio = packed.empty() ? 1.0 : static_cast<double>(packed.size()) / raw.size();
  {
    std::lock_guard<std::mutex> guard{mutex_};
    width_ = width;
    ratio_ = blend(ratio_, ratio);
    if (seconds > 0)
      pack_rate_ = blend(pack_rate_, static_cast<double>(raw.size()) / seconds);
  }
  if (packed.empty() || packed.size() >= raw.size())
    return {};
  return packed;
}

void upload_compression::observe_link(uint64_t bytes, double seconds) {
  if (bytes == 0 || seconds <= 0)
    return;
  std::lock_guard<std::mutex> guard{mutex_};
  link_rate_ = blend(link_rate_, static_cast<double>(bytes) / seconds);
}

upload_compression::measures upload_compression::measured() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return {link_rate_, pack_rate_, ratio_, width_};
}

} // namespace gleam::interpose
