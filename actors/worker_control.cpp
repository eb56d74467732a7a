#include "actors/worker_control.hpp"

#include <chrono>
#include <mutex>

#include <caf/all.hpp>

#include "actors/proto/control.pb.h"
#include "actors/worker_link.hpp"

namespace gleam::actors {

namespace {

/// A session's open waits for its context and secret, never for a GPU op:
/// a fresh worker answers at once; this bounds a broken one.
constexpr auto open_within = std::chrono::seconds{30};
constexpr auto status_within = std::chrono::seconds{1};

/// One frame at a time on the channel: answers and notices come from
/// different threads.
std::mutex& write_mutex() {
  static std::mutex m;
  return m;
}

bool write_locked(int fd, const proto::WorkerReply& reply) {
  std::lock_guard<std::mutex> guard{write_mutex()};
  return write_frame(fd, reply);
}

} // namespace

bool notify_supervisor(int fd, const std::vector<proto::SessionEnded>& ended) {
  proto::WorkerReply notice;
  notice.set_notice(true);
  for (const auto& e : ended)
    notice.add_ended(e.SerializeAsString());
  return write_locked(fd, notice);
}

void serve_supervisor(caf::actor_system& sys, int fd, uint16_t port, gpu_server_actor server) {
  proto::WorkerReply hello;
  hello.set_port(port);
  if (!write_locked(fd, hello))
    return;
  caf::scoped_actor self{sys};
  for (;;) {
    proto::WorkerRequest req;
    if (!read_frame(fd, req))
      return;
    proto::WorkerReply reply;
    if (!req.open().empty()) {
      pb<proto::OpenSession> open;
      if (!open->ParseFromString(req.open())) {
        reply.set_error("unparsable OpenSession");
      } else {
        self->request(server, caf::duration{open_within}, open_atom::value, std::move(open))
          .receive([&](pb<proto::SessionOpened>& r) { reply.set_opened(r->SerializeAsString()); },
                   [&](caf::error& e) {
                     reply.set_error_category(static_cast<uint64_t>(e.category()));
                     reply.set_error_code(e.code());
                     auto text = e.context().match_elements<std::string>()
                                   ? e.context().get_as<std::string>(0)
                                   : sys.render(e);
                     reply.set_error(text.empty() ? sys.render(e) : text);
                   });
      }
    } else if (req.status()) {
      self->request(server, caf::duration{status_within}, status_atom::value)
        .receive([&](pb<proto::NodeStatus>& st) { reply.set_status(st->SerializeAsString()); },
                 [](caf::error&) {});
    }
    if (!write_locked(fd, reply))
      return;
  }
}

} // namespace gleam::actors
