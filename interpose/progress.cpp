#include "interpose/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <string>

namespace gleam::interpose {

namespace {

std::string human(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

} // namespace

transfer_progress::transfer_progress(uint64_t total, bool tty, std::FILE* out)
  : total_(total), tty_(tty), out_(out), start_(clock::now()), last_draw_(start_) {
}

transfer_progress::transfer_progress(uint64_t total)
  : transfer_progress(total, ::isatty(STDERR_FILENO) != 0) {
}

transfer_progress::~transfer_progress() {
  if (!drawn_)
    return;
  auto secs = std::chrono::duration<double>(clock::now() - start_).count();
  std::fprintf(out_, "\r%s\n", render(total_, sent_, cached_, secs).c_str());
  std::fflush(out_);
}

void transfer_progress::advance(uint64_t sent, uint64_t cached) {
  sent_ += sent;
  cached_ += cached;
  if (!tty_)
    return;
  auto now = clock::now();
  if (now - start_ < std::chrono::seconds{1} || now - last_draw_ < std::chrono::milliseconds{100})
    return;
  last_draw_ = now;
  drawn_ = true;
  auto secs = std::chrono::duration<double>(now - start_).count();
  std::fprintf(out_, "\r%s", render(total_, sent_, cached_, secs).c_str());
  std::fflush(out_);
}

std::string transfer_progress::render(uint64_t total, uint64_t sent, uint64_t cached,
                                      double seconds) {
  auto done = std::min(total, sent + cached);
  double frac = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  constexpr int width = 24;
  int fill = static_cast<int>(frac * width);
  std::string bar(static_cast<size_t>(fill), '=');
  if (fill < width)
    bar += '>';
  bar.resize(width, ' ');
  double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  std::string eta = "--";
  if (rate > 0 && done < total) {
    auto left = static_cast<long>(static_cast<double>(total - done) / rate + 0.5);
    eta = std::to_string(left) + "s";
  } else if (done >= total) {
    eta = "0s";
  }
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "gleam: [%s] %3.0f%% %s of %s  sent %s  cached %s  %s/s  ETA %s", bar.c_str(),
                frac * 100, human(static_cast<double>(done)).c_str(),
                human(static_cast<double>(total)).c_str(), human(static_cast<double>(sent)).c_str(),
                human(static_cast<double>(cached)).c_str(), human(rate).c_str(), eta.c_str());
  return buf;
}

} // namespace gleam::interpose
