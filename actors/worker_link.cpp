#include "actors/worker_link.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/error.hpp"

extern char** environ;

namespace gleam::actors {

namespace {

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    auto w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, char* p, size_t n) {
  while (n > 0) {
    auto r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

} // namespace

bool write_frame(int fd, const google::protobuf::Message& msg) {
  std::string body;
  if (!msg.SerializeToString(&body) || body.size() > UINT32_MAX)
    return false;
  auto n = static_cast<uint32_t>(body.size());
  char len[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                 static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
  return write_all(fd, len, 4) && write_all(fd, body.data(), body.size());
}

bool read_frame(int fd, google::protobuf::Message& msg, uint32_t limit) {
  unsigned char len[4];
  if (!read_all(fd, reinterpret_cast<char*>(len), 4))
    return false;
  uint32_t n = uint32_t{len[0]} | (uint32_t{len[1]} << 8) | (uint32_t{len[2]} << 16)
               | (uint32_t{len[3]} << 24);
  if (n > limit)
    return false;
  std::string body(n, '\0');
  if (!read_all(fd, body.data(), n))
    return false;
  return msg.ParseFromString(body);
}

std::string describe_worker_exit(int status) {
  if (WIFEXITED(status)) {
    if (WEXITSTATUS(status) == worker_exit_op_timeout)
      return "ended itself: one of its ops ran longer than [gpu_server] max-op-seconds";
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " ("
           + ::strsignal(WTERMSIG(status)) + ")";
  return "ended (wait status " + std::to_string(status) + ")";
}

caf::expected<std::unique_ptr<worker_link>> worker_link::start(const options& opts,
                                                               caf::actor owner) {
  std::unique_ptr<worker_link> link{new worker_link};
  link->owner_ = std::move(owner);
  link->ready_within_ = opts.ready_within;
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return make_error(error_code::worker_failed,
                      std::string{"cannot make a socket pair for a worker process: "}
                        + std::strerror(errno));
  if (::pipe2(link->wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    auto err = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    return make_error(error_code::worker_failed,
                      std::string{"cannot make a pipe for a worker process: "}
                        + std::strerror(err));
  }
  std::vector<std::string> args{opts.exe,
                                "--worker",
                                "--config-file=" + opts.config_path,
                                "--worker-gpu=" + std::to_string(opts.gpu),
                                "--worker-first-session=" + std::to_string(opts.first_session)};
  if (opts.ledger_fd >= 0)
    args.push_back("--worker-ledger-fd=4");
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  // The key goes in the environment: a command line is visible to every
  // user of the host.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "GLEAM_WORKER_KEY=", 17) != 0)
      env_strings.emplace_back(*e);
  env_strings.push_back("GLEAM_WORKER_KEY=" + opts.key);
  std::vector<char*> envp;
  for (auto& e : env_strings)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The worker's end of the socket becomes its fd 3; every other descriptor
  // of gleamd (listeners, clients' connections) stays out of the worker, so
  // that a connection gleamd closes is closed.
  posix_spawn_file_actions_adddup2(&actions, sv[1], 3);
  if (opts.ledger_fd >= 0)
    posix_spawn_file_actions_adddup2(&actions, opts.ledger_fd, 4);
  posix_spawn_file_actions_addclosefrom_np(&actions, opts.ledger_fd >= 0 ? 5 : 4);
  posix_spawnattr_t attrs;
  posix_spawnattr_init(&attrs);
  // gleamd blocks SIGINT/SIGTERM in every thread (it waits for them); the
  // worker starts with none blocked and blocks its own.
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attrs, &none);
  posix_spawnattr_setflags(&attrs, POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  auto rc = ::posix_spawn(&pid, opts.exe.c_str(), &actions, &attrs, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attrs);
  ::close(sv[1]);
  if (rc != 0) {
    ::close(sv[0]);
    return make_error(error_code::worker_failed, "cannot start a worker process (" + opts.exe
                                                   + "): " + std::strerror(rc));
  }
  link->pid_ = pid;
  link->fd_ = sv[0];
  link->thread_ = std::thread{[l = link.get()] { l->run(); }};
  return link;
}

worker_link::~worker_link() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
  }
  kill();
  char b = 1;
  static_cast<void>(::write(wake_[1], &b, 1)); // a full pipe wakes the thread as well
  if (thread_.joinable())
    thread_.join();
  for (int fd : wake_)
    if (fd >= 0)
      ::close(fd);
}

void worker_link::ask(uint64_t id, proto::WorkerRequest req) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    queue_.emplace_back(id, std::move(req));
  }
  char b = 1;
  static_cast<void>(::write(wake_[1], &b, 1));
}

void worker_link::kill() noexcept {
  std::lock_guard<std::mutex> guard{mtx_};
  if (pid_ > 0)
    ::kill(pid_, SIGKILL);
}

void worker_link::terminate() noexcept {
  std::lock_guard<std::mutex> guard{mtx_};
  if (pid_ > 0)
    ::kill(pid_, SIGTERM);
}

bool worker_link::wait_readable(std::chrono::milliseconds within) {
  pollfd p{fd_, POLLIN, 0};
  for (;;) {
    auto rc = ::poll(&p, 1, static_cast<int>(within.count()));
    if (rc < 0 && errno == EINTR)
      continue;
    return rc > 0;
  }
}

void worker_link::run() {
  auto pid = static_cast<int32_t>(pid_);
  proto::WorkerReply hello;
  if (wait_readable(ready_within_) && read_frame(fd_, hello) && hello.port() != 0) {
    caf::anon_send(owner_, worker_ready_atom::value, pid, hello.port());
    for (;;) {
      pollfd p[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      auto rc = ::poll(p, 2, -1);
      if (rc < 0 && errno == EINTR)
        continue;
      if (rc < 0)
        break;
      // Unasked-for input: a notice, or else a hang-up (the worker ended)
      // or a broken protocol, which ends it here too.
      if (p[0].revents != 0) {
        proto::WorkerReply notice;
        if ((p[0].revents & POLLIN) == 0 || !read_frame(fd_, notice) || !notice.notice())
          break;
        caf::anon_send(owner_, worker_notice_atom::value, pid, notice.SerializeAsString());
        continue;
      }
      char drain[64];
      while (::read(wake_[0], drain, sizeof(drain)) > 0) {
      }
      std::deque<std::pair<uint64_t, proto::WorkerRequest>> todo;
      {
        std::lock_guard<std::mutex> guard{mtx_};
        if (stopping_)
          break;
        todo.swap(queue_);
      }
      bool broken = false;
      for (auto& [id, req] : todo) {
        proto::WorkerReply reply;
        if (!write_frame(fd_, req) || !read_frame(fd_, reply)) {
          broken = true;
          break;
        }
        // A notice the worker sent before this answer.
        while (reply.notice()) {
          caf::anon_send(owner_, worker_notice_atom::value, pid, reply.SerializeAsString());
          if (!read_frame(fd_, reply)) {
            broken = true;
            break;
          }
        }
        if (broken)
          break;
        caf::anon_send(owner_, worker_reply_atom::value, pid, id, reply.SerializeAsString());
      }
      if (broken)
        break;
    }
  }
  // The worker hung up (it is ending), broke the protocol or never said it
  // listens: it gets a moment to end on its own, then it is killed; either
  // way it is reaped here.
  ::close(fd_);
  fd_ = -1;
  int status = 0;
  pid_t reaped = 0;
  for (int i = 0; i < 300 && reaped == 0; ++i) {
    reaped = ::waitpid(pid_, &status, WNOHANG);
    if (reaped == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  if (reaped <= 0) {
    ::kill(pid_, SIGKILL);
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  {
    std::lock_guard<std::mutex> guard{mtx_};
    pid_ = -1; // reaped: the number may name another process now
  }
  caf::anon_send(owner_, worker_exit_atom::value, pid, static_cast<int32_t>(status),
                 describe_worker_exit(status));
}

} // namespace gleam::actors
