#include "tools/link_emulator/link_emulator.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "tools/link_emulator/error.hpp"
#include "tools/link_emulator/shaper.hpp"

namespace gleam::tools::link_emulator {

using std::chrono::nanoseconds;

caf::expected<cut_mode> parse_cut_mode(const std::string& text) {
  if (text == "hold")
    return cut_mode::hold;
  if (text == "reset")
    return cut_mode::reset;
  return make_error(error_code::bad_value,
                    "bad cut mode '" + text + "': use hold or reset");
}

std::string to_string(const link_stats& s) {
  return "stats bytes_up=" + std::to_string(s.bytes_up)
         + " bytes_down=" + std::to_string(s.bytes_down)
         + " accepted=" + std::to_string(s.accepted)
         + " active=" + std::to_string(s.active) + " cuts=" + std::to_string(s.cuts)
         + " stalls=" + std::to_string(s.stalls) + " cut=" + (s.cut ? "1" : "0")
         + " cpu_ms=" + std::to_string(s.cpu_ns / 1'000'000);
}

namespace {

enum tag : uint64_t {
  tag_listen = 1,
  tag_control_listen,
  tag_event,
  tag_timer,
  tag_control_client,
  tag_client,
  tag_target,
};

uint64_t make_key(tag t, uint64_t id) {
  return (static_cast<uint64_t>(t) << 56) | id;
}

constexpr size_t max_read = 256 * 1024;

/// Contiguous FIFO of bytes with amortised compaction.
class byte_queue {
public:
  char* prepare(size_t n) {
    if (head_ > 0 && (head_ >= buf_.size() / 2 || tail_ + n > buf_.size())) {
      std::memmove(buf_.data(), buf_.data() + head_, tail_ - head_);
      tail_ -= head_;
      head_ = 0;
    }
    if (tail_ + n > buf_.size())
      buf_.resize(tail_ + n);
    return buf_.data() + tail_;
  }
  void commit(size_t n) {
    tail_ += n;
  }
  const char* data() const {
    return buf_.data() + head_;
  }
  void consume(size_t n) {
    head_ += n;
    if (head_ == tail_)
      head_ = tail_ = 0;
  }

private:
  std::vector<char> buf_;
  size_t head_ = 0;
  size_t tail_ = 0;
};

struct marker {
  time_point release;
  uint64_t end;
};

struct direction {
  direction(const direction_spec& spec, shaper* sh, std::atomic<uint64_t>* delivered,
            uint64_t seed)
    : line(spec, seed), sh(sh), delivered(delivered) {
    auto in_flight = sh->unlimited()
                       ? 0.0
                       : static_cast<double>(spec.rate_bps) / 8
                           * std::chrono::duration<double>(spec.delay + 3 * spec.jitter)
                               .count();
    cap = std::max<size_t>(static_cast<size_t>(in_flight) + 512 * 1024, 1 << 20);
    if (sh->unlimited())
      cap = 4 << 20;
  }
  int src = -1;
  int dst = -1;
  byte_queue q;
  std::deque<marker> markers;
  uint64_t read_total = 0;
  uint64_t allowed = 0;
  uint64_t written = 0;
  bool src_eof = false;
  bool shut_sent = false;
  bool write_blocked = false;
  bool read_pending = false;
  delay_line line;
  shaper* sh;
  std::atomic<uint64_t>* delivered;
  size_t cap = 0;
};

struct connection {
  connection(uint64_t id, const emulator_config& cfg, shaper* up_sh, shaper* down_sh,
             std::atomic<uint64_t>* up_ctr, std::atomic<uint64_t>* down_ctr)
    : id(id), up(cfg.link.up, up_sh, up_ctr, cfg.seed * 2 + id * 7919),
      down(cfg.link.down, down_sh, down_ctr, cfg.seed * 2 + 1 + id * 7919) {
  }
  uint64_t id;
  int client_fd = -1;
  int target_fd = -1;
  bool connected = false;
  bool client_hup = false;
  bool target_hup = false;
  bool dead = false;
  uint32_t client_events = 0;
  uint32_t target_events = 0;
  direction up;
  direction down;
};

struct control_client {
  int fd = -1;
  std::string in;
};

void tune_socket(int fd, int buffer_bytes) {
  int one = 1;
  (void) setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one));
  // Best effort: an unsupported option only costs performance.
  (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  (void) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof(buffer_bytes));
  (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof(buffer_bytes));
}

void close_with_reset(int fd) {
  if (fd < 0)
    return;
  linger lg{1, 0};
  (void) setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
  close(fd);
}

caf::expected<sockaddr_storage> resolve(const std::string& host, uint16_t port,
                                        socklen_t& len) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  auto service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res); rc != 0)
    return make_error(error_code::resolve_failed,
                      "cannot resolve '" + host + "': " + gai_strerror(rc)
                        + ": give an IP address or a resolvable host name");
  sockaddr_storage out{};
  std::memcpy(&out, res->ai_addr, res->ai_addrlen);
  len = res->ai_addrlen;
  freeaddrinfo(res);
  return out;
}

caf::expected<int> listen_on(const std::string& host, uint16_t port, int buffer_bytes) {
  socklen_t len = 0;
  auto addr = resolve(host, port, len);
  if (!addr)
    return addr.error();
  int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return make_error(error_code::socket_failed,
                      std::string("socket() failed: ") + std::strerror(errno));
  int one = 1;
  (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (buffer_bytes > 0) {
    (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof(buffer_bytes));
    (void) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buffer_bytes, sizeof(buffer_bytes));
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&*addr), len) != 0 || listen(fd, 128) != 0) {
    auto why = std::strerror(errno);
    close(fd);
    return make_error(error_code::socket_failed,
                      "cannot listen on " + host + ":" + std::to_string(port) + ": "
                        + why + ": pick a free port (0 picks one)");
  }
  return fd;
}

uint16_t bound_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len);
  if (ss.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
}

} // namespace

struct link_emulator::state {
  explicit state(emulator_config c)
    : cfg(std::move(c)), up_shaper(cfg.link.up), down_shaper(cfg.link.down) {
  }

  ~state() {
    for (auto& [id, c] : conns) {
      close(c->client_fd);
      close(c->target_fd);
    }
    for (auto& [id, cc] : controls)
      close(cc.fd);
    for (int fd : {listen_fd, control_fd, epoll_fd, event_fd, timer_fd})
      if (fd >= 0)
        close(fd);
  }

  emulator_config cfg;
  int listen_fd = -1;
  int control_fd = -1;
  int epoll_fd = -1;
  int event_fd = -1;
  int timer_fd = -1;
  uint16_t port = 0;
  uint16_t control_port = 0;
  sockaddr_storage target_addr{};
  socklen_t target_len = 0;

  std::atomic<bool> stop_req{false};
  std::atomic<int64_t> cut_req_ns{-1};
  std::atomic<uint8_t> cut_req_mode{0};
  std::atomic<bool> restore_req{false};
  std::atomic<uint64_t> bytes_up{0};
  std::atomic<uint64_t> bytes_down{0};
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> active{0};
  std::atomic<uint64_t> cuts{0};
  std::atomic<uint64_t> stalls{0};
  std::atomic<bool> is_cut{false};
  std::atomic<bool> have_clock{false};
  std::atomic<uint64_t> final_cpu_ns{0};
  clockid_t loop_clock{};

  // Owned by the loop thread.
  shaper up_shaper;
  shaper down_shaper;
  std::map<uint64_t, std::unique_ptr<connection>> conns;
  std::map<uint64_t, control_client> controls;
  uint64_t next_id = 1;
  uint64_t stall_count = 0;
  bool cut_active = false;
  cut_mode active_mode = cut_mode::hold;
  std::optional<time_point> cut_end;
  time_point started;
  bool scripted_done = false;
  bool listen_armed = false;
  std::optional<time_point> timer_at;
  nanoseconds wake_late{0};
  /// Sources that reported data in this iteration, read by serve_reads.
  std::vector<std::pair<connection*, direction*>> pending_reads;
  /// Per shaper, the connection that read first last time (see serve_reads).
  uint64_t up_turn = 0;
  uint64_t down_turn = 0;

  void wake() noexcept {
    uint64_t one = 1;
    // A full eventfd counter still wakes the loop.
    [[maybe_unused]] auto n = write(event_fd, &one, sizeof(one));
  }

  void ctl(int op, int fd, uint32_t events, uint64_t key) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = key;
    (void) epoll_ctl(epoll_fd, op, fd, &ev);
  }

  // --- connections -------------------------------------------------------

  void accept_all() {
    for (;;) {
      int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0)
        return;
      accepted.fetch_add(1);
      if (cut_active) {
        close_with_reset(fd);
        continue;
      }
      tune_socket(fd, cfg.socket_buffer_bytes);
      int tfd = socket(target_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (tfd < 0) {
        close_with_reset(fd);
        continue;
      }
      tune_socket(tfd, cfg.socket_buffer_bytes);
      int rc = connect(tfd, reinterpret_cast<sockaddr*>(&target_addr), target_len);
      if (rc != 0 && errno != EINPROGRESS) {
        close(tfd);
        close_with_reset(fd);
        continue;
      }
      auto id = next_id++;
      auto c = std::make_unique<connection>(id, cfg, &up_shaper, &down_shaper, &bytes_up,
                                            &bytes_down);
      c->client_fd = fd;
      c->target_fd = tfd;
      c->connected = rc == 0;
      c->up.src = fd;
      c->up.dst = tfd;
      c->down.src = tfd;
      c->down.dst = fd;
      ctl(EPOLL_CTL_ADD, fd, 0, make_key(tag_client, id));
      ctl(EPOLL_CTL_ADD, tfd, 0, make_key(tag_target, id));
      conns.emplace(id, std::move(c));
      active.fetch_add(1);
    }
  }

  void kill(connection& c, bool reset) {
    if (c.dead)
      return;
    c.dead = true;
    if (reset) {
      close_with_reset(c.client_fd);
      close_with_reset(c.target_fd);
    } else {
      close(c.client_fd);
      close(c.target_fd);
    }
    c.client_fd = c.target_fd = -1;
    active.fetch_sub(1);
  }

  /// When the kernel received the bytes (SO_TIMESTAMPNS), on clock_type,
  /// so that wake-up latency of this loop does not add to the delay.
  static time_point arrival_time(msghdr& msg, time_point now) {
    for (auto* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
      if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_TIMESTAMPNS)
        continue;
      timespec ts;
      std::memcpy(&ts, CMSG_DATA(cm), sizeof(ts));
      // Read both clocks together: `now` may be older than this call.
      timespec real{};
      clock_gettime(CLOCK_REALTIME, &real);
      auto mono = clock_type::now();
      auto age = (static_cast<int64_t>(real.tv_sec) - ts.tv_sec) * 1'000'000'000
                 + (real.tv_nsec - ts.tv_nsec);
      if (age > 0 && age < 10'000'000)
        return mono - nanoseconds{age};
    }
    return now;
  }

  bool can_read(const connection& c, const direction& d, time_point now) const {
    return !cut_active && c.connected && !d.src_eof
           && d.read_total - d.written < d.cap && d.sh->read_budget(now) > 0;
  }

  /// Reads at most `limit` bytes of `d`'s source into the line; returns
  /// how many it read.
  size_t do_read(connection& c, direction& d, time_point now, size_t limit = SIZE_MAX) {
    if (!can_read(c, d, now))
      return 0;
    size_t room = d.cap - static_cast<size_t>(d.read_total - d.written);
    size_t want = std::min({d.sh->read_budget(now), room, max_read, limit});
    char* p = d.q.prepare(want);
    iovec iov{p, want};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(timespec))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    ssize_t n = recvmsg(d.src, &msg, 0);
    if (n > 0) {
      now = arrival_time(msg, now);
      d.q.commit(static_cast<size_t>(n));
      d.sh->saturated(static_cast<size_t>(n) == want);
      size_t seg = d.sh->segment_bytes();
      for (size_t off = 0; off < static_cast<size_t>(n); off += seg) {
        size_t len = std::min(seg, static_cast<size_t>(n) - off);
        auto sent = d.sh->admit(now, len);
        d.read_total += len;
        d.markers.push_back({d.line.release(sent, len, stall_count), d.read_total});
      }
      return static_cast<size_t>(n);
    } else if (n == 0) {
      d.src_eof = true;
      d.sh->saturated(false);
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      d.sh->saturated(false);
    } else if (errno != EINTR && errno != EWOULDBLOCK && errno != EINTR) {
      kill(c, true);
    }
    return 0;
  }

  /// Reads the sources that reported data, sharing each shaper's budget
  /// among them as flows share a real line: in rounds where each takes at
  /// most an even share, the first turn passing to the next connection on
  /// every call. Reading in the order events arrive would give the oldest
  /// connection, reported first, every budget and starve the others.
  void serve_reads(time_point now) {
    for (shaper* sh : {&up_shaper, &down_shaper}) {
      std::vector<std::pair<connection*, direction*>> flows;
      for (auto& f : pending_reads)
        if (f.second->sh == sh)
          flows.push_back(f);
      if (flows.empty())
        continue;
      std::sort(flows.begin(), flows.end(),
                [](const auto& a, const auto& b) { return a.first->id < b.first->id; });
      uint64_t& turn = sh == &up_shaper ? up_turn : down_turn;
      auto next = std::find_if(flows.begin(), flows.end(),
                               [&](const auto& f) { return f.first->id > turn; });
      std::rotate(flows.begin(), next, flows.end());
      turn = flows.front().first->id;
      while (!flows.empty()) {
        size_t budget = sh->read_budget(now);
        if (budget == 0)
          break;
        size_t share = sh->unlimited() ? SIZE_MAX
                                       : std::max(sh->segment_bytes(), budget / flows.size());
        std::vector<std::pair<connection*, direction*>> more;
        for (auto& [c, d] : flows)
          if (!c->dead && do_read(*c, *d, now, share) == share)
            more.push_back({c, d});
        flows = std::move(more);
      }
    }
    for (auto& f : pending_reads)
      f.second->read_pending = false;
    pending_reads.clear();
  }

  void flush(connection& c, direction& d, time_point now) {
    if (cut_active || c.dead)
      return;
    while (!d.markers.empty() && d.markers.front().release <= now) {
      d.allowed = d.markers.front().end;
      d.markers.pop_front();
    }
    while (!d.write_blocked && d.allowed > d.written) {
      ssize_t n = send(d.dst, d.q.data(), static_cast<size_t>(d.allowed - d.written),
                       MSG_NOSIGNAL);
      if (n > 0) {
        d.written += static_cast<uint64_t>(n);
        d.q.consume(static_cast<size_t>(n));
        d.delivered->fetch_add(static_cast<uint64_t>(n));
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        d.write_blocked = true;
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else {
        kill(c, true);
        return;
      }
    }
    if (d.src_eof && !d.shut_sent && d.written == d.read_total) {
      (void) shutdown(d.dst, SHUT_WR);
      d.shut_sent = true;
    }
  }

  void on_conn_event(connection& c, bool client_side, uint32_t ev, time_point now) {
    if (c.dead)
      return;
    int fd = client_side ? c.client_fd : c.target_fd;
    if (!client_side && !c.connected && (ev & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        kill(c, true);
        return;
      }
      c.connected = true;
      return;
    }
    if (ev & EPOLLERR) {
      kill(c, true);
      return;
    }
    direction& src_dir = client_side ? c.up : c.down;
    direction& dst_dir = client_side ? c.down : c.up;
    bool& hup = client_side ? c.client_hup : c.target_hup;
    if ((ev & EPOLLHUP) && !hup) {
      // A hung-up socket reports HUP on every wait: stop watching it and
      // drain it from service(); writes to it fail at once.
      hup = true;
      ctl(EPOLL_CTL_DEL, fd, 0, 0);
      dst_dir.write_blocked = false;
    }
    if (ev & EPOLLOUT)
      dst_dir.write_blocked = false;
    if ((ev & (EPOLLIN | EPOLLHUP)) && !src_dir.read_pending) {
      src_dir.read_pending = true;
      pending_reads.push_back({&c, &src_dir});
    }
  }

  uint32_t wanted(const connection& c, bool client_side, time_point now) const {
    if (!client_side && !c.connected)
      return EPOLLOUT;
    const direction& src_dir = client_side ? c.up : c.down;
    const direction& dst_dir = client_side ? c.down : c.up;
    bool hup = client_side ? c.client_hup : c.target_hup;
    uint32_t ev = 0;
    if (!hup && can_read(c, src_dir, now))
      ev |= EPOLLIN;
    if (dst_dir.write_blocked)
      ev |= EPOLLOUT;
    return ev;
  }

  static constexpr uint64_t precise_queue_bytes = 64 * 1024;

  /// Earliest deadline of this iteration that deserves polling.
  std::optional<time_point> precise_next;

  void consider_precise(time_point t) {
    if (!precise_next || t < *precise_next)
      precise_next = t;
  }

  /// Flushes, drains hung-up sources, updates epoll interest; returns the
  /// earliest time this connection needs the loop again (deadlines that
  /// deserve polling go to precise_next).
  std::optional<time_point> service(connection& c, time_point now) {
    std::optional<time_point> next;
    auto consider = [&](time_point t) {
      if (!next || t < *next)
        next = t;
    };
    for (direction* d : {&c.up, &c.down}) {
      flush(c, *d, now);
      if (c.dead)
        return next;
      // A hung-up source is no longer watched: drain it while allowed.
      // Its bytes may be due at once and its end must be passed on, and
      // no event wakes the loop for it: flush and drain again until
      // neither moves.
      bool hup = d == &c.up ? c.client_hup : c.target_hup;
      while (hup && !c.dead) {
        auto read = d->read_total;
        auto written = d->written;
        auto eof = d->src_eof;
        while (!c.dead && can_read(c, *d, now)) {
          auto before = d->read_total;
          do_read(c, *d, now);
          if (d->read_total == before)
            break;
        }
        if (!c.dead)
          flush(c, *d, now);
        if (d->read_total == read && d->written == written && d->src_eof == eof)
          break;
      }
      if (c.dead)
        return next;
    }
    if (c.up.shut_sent && c.down.shut_sent) {
      kill(c, false);
      return next;
    }
    for (bool client_side : {true, false}) {
      if (client_side ? c.client_hup : c.target_hup)
        continue;
      auto ev = wanted(c, client_side, now);
      auto& cur = client_side ? c.client_events : c.target_events;
      if (ev != cur) {
        cur = ev;
        ctl(EPOLL_CTL_MOD, client_side ? c.client_fd : c.target_fd, ev,
            make_key(client_side ? tag_client : tag_target, c.id));
      }
    }
    if (cut_active)
      return next;
    for (direction* d : {&c.up, &c.down}) {
      // Small queues are latency-sensitive and get a polled, precise
      // release; bulk queues only need the rate, which a timer wake holds.
      if (!d->write_blocked && !d->markers.empty()) {
        if (d->read_total - d->written <= precise_queue_bytes)
          consider_precise(d->markers.front().release);
        else
          consider(d->markers.front().release);
      }
      if (c.connected && !d->src_eof && d->read_total - d->written < d->cap
          && d->sh->read_budget(now) == 0)
        consider(d->sh->next_read_time(now));
    }
    return next;
  }

  // --- cuts --------------------------------------------------------------

  void begin_cut(nanoseconds duration, cut_mode mode, time_point now) {
    cut_active = true;
    active_mode = mode;
    cut_end.reset();
    if (duration.count() > 0)
      cut_end = now + duration;
    cuts.fetch_add(1);
    is_cut.store(true);
    if (mode == cut_mode::reset)
      for (auto& [id, c] : conns)
        kill(*c, true);
  }

  void end_cut() {
    cut_active = false;
    cut_end.reset();
    is_cut.store(false);
  }

  // --- control socket ----------------------------------------------------

  std::string control_command(const std::string& line, time_point now) {
    std::vector<std::string> words;
    std::string cur;
    for (char ch : line + " ") {
      if (ch == ' ' || ch == '\t' || ch == '\r') {
        if (!cur.empty())
          words.push_back(cur);
        cur.clear();
      } else {
        cur += ch;
      }
    }
    if (words.empty())
      return "";
    if (words[0] == "stats") {
      link_stats s;
      s.bytes_up = bytes_up.load();
      s.bytes_down = bytes_down.load();
      s.accepted = accepted.load();
      s.active = active.load();
      s.cuts = cuts.load();
      s.stalls = stalls.load();
      s.cut = cut_active;
      timespec ts{};
      if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        s.cpu_ns = static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000
                   + static_cast<uint64_t>(ts.tv_nsec);
      return to_string(s) + "\n";
    }
    if (words[0] == "restore") {
      end_cut();
      return "ok restored\n";
    }
    if (words[0] == "cut") {
      nanoseconds dur{0};
      cut_mode mode = cfg.mode;
      for (size_t i = 1; i < words.size(); ++i) {
        if (auto m = parse_cut_mode(words[i])) {
          mode = *m;
        } else if (auto d = parse_duration(words[i])) {
          dur = *d;
        } else {
          return "error bad argument '" + words[i]
                 + "' to cut: use cut [DURATION] [hold|reset], e.g. cut 3s\n";
        }
      }
      begin_cut(dur, mode, now);
      return "ok cut\n";
    }
    return "error unknown command '" + words[0]
           + "': use cut [DURATION] [hold|reset], restore, or stats\n";
  }

  void on_control_client(uint64_t id, time_point now) {
    auto it = controls.find(id);
    if (it == controls.end())
      return;
    char buf[4096];
    ssize_t n = read(it->second.fd, buf, sizeof(buf));
    if (n <= 0) {
      if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
      close(it->second.fd);
      controls.erase(it);
      return;
    }
    it->second.in.append(buf, static_cast<size_t>(n));
    size_t pos;
    while ((pos = it->second.in.find('\n')) != std::string::npos) {
      auto line = it->second.in.substr(0, pos);
      it->second.in.erase(0, pos + 1);
      auto reply = control_command(line, now);
      if (!reply.empty())
        (void) send(it->second.fd, reply.data(), reply.size(), MSG_NOSIGNAL);
    }
  }

  // --- loop --------------------------------------------------------------

  /// Keeps wake_late near the recent worst timer lateness (decaying, at
  /// most 300 µs), so the poll window covers this machine's wake-up
  /// latency (idle CPUs in deep sleep states wake late).
  void track_lateness(nanoseconds late) {
    wake_late -= wake_late / 64;
    auto capped = std::min<nanoseconds>(late + std::chrono::microseconds{10},
                                        std::chrono::microseconds{300});
    wake_late = std::max(wake_late, capped);
  }

  void arm_timer(std::optional<time_point> at) {
    if (at == timer_at)
      return;
    timer_at = at;
    itimerspec its{};
    if (at) {
      auto ns = at->time_since_epoch().count();
      its.it_value.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
      its.it_value.tv_nsec = static_cast<long>(ns % 1'000'000'000);
      if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
        its.it_value.tv_nsec = 1;
    }
    timerfd_settime(timer_fd, TFD_TIMER_ABSTIME, &its, nullptr);
  }

  void run() {
    // Wake-ups as close to the deadline as the kernel allows.
    (void) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (pthread_getcpuclockid(pthread_self(), &loop_clock) == 0)
      have_clock.store(true);
    started = clock_type::now();
    epoll_event events[64];
    while (!stop_req.load()) {
      auto now = clock_type::now();
      if (auto ns = cut_req_ns.exchange(-1); ns >= 0)
        begin_cut(nanoseconds{ns}, static_cast<cut_mode>(cut_req_mode.load()), now);
      if (restore_req.exchange(false))
        end_cut();
      if (cfg.cut_at && !scripted_done && now >= started + *cfg.cut_at) {
        scripted_done = true;
        begin_cut(cfg.cut_for, cfg.mode, now);
      }
      if (cut_active && cut_end && now >= *cut_end)
        end_cut();
      std::optional<time_point> next;
      precise_next.reset();
      auto consider = [&](std::optional<time_point> t) {
        if (t && (!next || *t < *next))
          next = t;
      };
      for (auto it = conns.begin(); it != conns.end();) {
        consider(service(*it->second, now));
        if (it->second->dead)
          it = conns.erase(it);
        else
          ++it;
      }
      stalls.store(stall_count);
      bool want_listen = !(cut_active && active_mode == cut_mode::hold);
      if (want_listen != listen_armed) {
        listen_armed = want_listen;
        ctl(EPOLL_CTL_MOD, listen_fd, want_listen ? uint32_t{EPOLLIN} : 0u,
            make_key(tag_listen, 0));
      }
      if (cut_active)
        consider(cut_end);
      if (cfg.cut_at && !scripted_done)
        consider(started + *cfg.cut_at);
      int timeout = -1;
      auto spin = std::max(cfg.spin, wake_late);
      if (precise_next && *precise_next - clock_type::now() <= spin) {
        timeout = 0;
        arm_timer(std::nullopt);
      } else {
        if (precise_next)
          consider(*precise_next - spin);
        arm_timer(next);
      }
      int n = epoll_wait(epoll_fd, events, 64, timeout);
      now = clock_type::now();
      for (int i = 0; i < n; ++i) {
        auto key = events[i].data.u64;
        auto t = static_cast<tag>(key >> 56);
        auto id = key & ((uint64_t{1} << 56) - 1);
        switch (t) {
          case tag_listen:
            accept_all();
            break;
          case tag_control_listen:
            for (;;) {
              int fd = accept4(control_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
              if (fd < 0)
                break;
              auto cid = next_id++;
              controls[cid].fd = fd;
              ctl(EPOLL_CTL_ADD, fd, EPOLLIN, make_key(tag_control_client, cid));
            }
            break;
          case tag_event: {
            uint64_t v;
            [[maybe_unused]] auto r = read(event_fd, &v, sizeof(v));
            break;
          }
          case tag_timer: {
            uint64_t v;
            [[maybe_unused]] auto r = read(timer_fd, &v, sizeof(v));
            if (timer_at)
              track_lateness(now - *timer_at);
            timer_at.reset();
            break;
          }
          case tag_control_client:
            on_control_client(id, now);
            break;
          case tag_client:
          case tag_target: {
            auto it = conns.find(id);
            if (it != conns.end())
              on_conn_event(*it->second, t == tag_client, events[i].events, now);
            break;
          }
        }
      }
      serve_reads(now);
    }
    timespec ts{};
    if (have_clock.load() && clock_gettime(loop_clock, &ts) == 0)
      final_cpu_ns.store(static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000
                         + static_cast<uint64_t>(ts.tv_nsec));
    have_clock.store(false);
  }
};

caf::expected<std::unique_ptr<link_emulator>> link_emulator::create(emulator_config cfg) {
  if (cfg.cut_at && cfg.cut_for.count() <= 0)
    return make_error(error_code::bad_argument,
                      "a scripted cut needs a duration: add e.g. --cut-for 3s");
  auto st = std::make_unique<state>(std::move(cfg));
  auto& c = st->cfg;
  auto target = resolve(c.target_host, c.target_port, st->target_len);
  if (!target)
    return target.error();
  st->target_addr = *target;
  auto lfd = listen_on(c.listen_host, c.listen_port, c.socket_buffer_bytes);
  if (!lfd)
    return lfd.error();
  st->listen_fd = *lfd;
  st->port = bound_port(st->listen_fd);
  if (c.control_port >= 0) {
    auto cfd = listen_on(c.listen_host, static_cast<uint16_t>(c.control_port), 0);
    if (!cfd)
      return cfd.error();
    st->control_fd = *cfd;
    st->control_port = bound_port(st->control_fd);
  }
  st->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  st->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  st->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (st->epoll_fd < 0 || st->event_fd < 0 || st->timer_fd < 0)
    return make_error(error_code::socket_failed,
                      std::string("cannot create epoll/eventfd/timerfd: ")
                        + std::strerror(errno));
  st->ctl(EPOLL_CTL_ADD, st->listen_fd, EPOLLIN, make_key(tag_listen, 0));
  st->listen_armed = true;
  if (st->control_fd >= 0)
    st->ctl(EPOLL_CTL_ADD, st->control_fd, EPOLLIN, make_key(tag_control_listen, 0));
  st->ctl(EPOLL_CTL_ADD, st->event_fd, EPOLLIN, make_key(tag_event, 0));
  st->ctl(EPOLL_CTL_ADD, st->timer_fd, EPOLLIN, make_key(tag_timer, 0));
  return std::unique_ptr<link_emulator>(new link_emulator(std::move(st)));
}

link_emulator::link_emulator(std::unique_ptr<state> st) : st_(std::move(st)) {
}

link_emulator::~link_emulator() {
  stop();
  if (thread_.joinable())
    thread_.join();
}

uint16_t link_emulator::port() const noexcept {
  return st_->port;
}

uint16_t link_emulator::control_port() const noexcept {
  return st_->control_port;
}

void link_emulator::run() {
  st_->run();
}

void link_emulator::start() {
  thread_ = std::thread([this] { st_->run(); });
}

void link_emulator::stop() noexcept {
  st_->stop_req.store(true);
  st_->wake();
}

void link_emulator::cut(std::chrono::nanoseconds duration, cut_mode mode) noexcept {
  st_->cut_req_mode.store(static_cast<uint8_t>(mode));
  st_->cut_req_ns.store(std::max<int64_t>(0, duration.count()));
  st_->wake();
}

void link_emulator::cut() noexcept {
  cut(std::chrono::nanoseconds{0}, st_->cfg.mode);
}

void link_emulator::restore() noexcept {
  st_->restore_req.store(true);
  st_->wake();
}

link_stats link_emulator::stats() const {
  link_stats s;
  s.bytes_up = st_->bytes_up.load();
  s.bytes_down = st_->bytes_down.load();
  s.accepted = st_->accepted.load();
  s.active = st_->active.load();
  s.cuts = st_->cuts.load();
  s.stalls = st_->stalls.load();
  s.cut = st_->is_cut.load();
  timespec ts{};
  if (st_->have_clock.load() && clock_gettime(st_->loop_clock, &ts) == 0)
    s.cpu_ns = static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000
               + static_cast<uint64_t>(ts.tv_nsec);
  else
    s.cpu_ns = st_->final_cpu_ns.load();
  return s;
}

} // namespace gleam::tools::link_emulator
