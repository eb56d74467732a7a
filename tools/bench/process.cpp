#include "tools/bench/process.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netdb.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/bench/error.hpp"

extern char** environ;

namespace gleam::tools::bench {

namespace {

int status_code(int status) {
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return -1;
}

/// Forks and execs; in the child, stdout goes to `out_fd` (or stays) and
/// stderr to `log_file` (or stays).
caf::expected<int> spawn(const std::vector<std::string>& argv, const env_list& env,
                         const std::string& log_file, int out_fd, bool both_to_log) {
  if (argv.empty())
    return make_error(error_code::process_failed, "empty command line");
  int log_fd = -1;
  if (!log_file.empty()) {
    log_fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0)
      return make_error(error_code::process_failed,
                        "cannot open log '" + log_file + "': " + std::strerror(errno)
                          + ": choose a writable --work-dir");
  }
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The child of a threaded process may only make async-signal-safe calls,
  // so its environment is built here.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    bool overridden = false;
    for (auto& [k, v] : env)
      overridden = overridden || entry.rfind(k + "=", 0) == 0;
    if (!overridden)
      env_strings.push_back(std::move(entry));
  }
  for (auto& [k, v] : env)
    env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_strings)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  static constexpr char exec_failed[] = "cannot run the program: exec failed\n";
  // Signals stay blocked across fork until the child has reset the parent's
  // handlers, so an early SIGTERM takes its default action.
  sigset_t all;
  sigset_t old_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old_mask);
  pid_t pid = fork();
  if (pid == 0) {
    for (int sig = 1; sig < NSIG; ++sig)
      std::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
  } else {
    pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  }
  if (pid < 0) {
    if (log_fd >= 0)
      close(log_fd);
    return make_error(error_code::process_failed,
                      "fork failed for " + argv[0] + ": " + std::strerror(errno));
  }
  if (pid == 0) {
    if (out_fd >= 0)
      dup2(out_fd, STDOUT_FILENO);
    else if (both_to_log && log_fd >= 0)
      dup2(log_fd, STDOUT_FILENO);
    if (log_fd >= 0)
      dup2(log_fd, STDERR_FILENO);
    execve(args[0], args.data(), envp.data());
    [[maybe_unused]] auto n = write(STDERR_FILENO, exec_failed, sizeof(exec_failed) - 1);
    _exit(127);
  }
  if (log_fd >= 0)
    close(log_fd);
  return static_cast<int>(pid);
}

} // namespace

caf::expected<process> start_process(const std::vector<std::string>& argv,
                                     const env_list& env, const std::string& log_file,
                                     const std::string& pid_file) {
  if (!argv.empty() && !is_executable(argv[0]))
    return make_error(error_code::process_failed,
                      "'" + argv[0] + "' is not an executable: build it first");
  auto pid = spawn(argv, env, log_file, -1, true);
  if (!pid)
    return pid.error();
  process p{*pid, argv[0], pid_file};
  if (!pid_file.empty()) {
    std::ofstream f(pid_file);
    f << *pid << "\n";
  }
  return p;
}

int stop_process(process& p, std::chrono::milliseconds grace) {
  if (p.pid <= 0)
    return -1;
  int status = 0;
  kill(p.pid, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  int rc = -1;
  for (;;) {
    pid_t r = waitpid(p.pid, &status, WNOHANG);
    if (r == p.pid) {
      rc = status_code(status);
      break;
    }
    if (r < 0) {
      rc = -1;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(p.pid, SIGKILL);
      waitpid(p.pid, &status, 0);
      rc = status_code(status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  if (!p.pid_file.empty())
    unlink(p.pid_file.c_str());
  p.pid = -1;
  return rc;
}

void stop_pid_file(const std::string& pid_file) {
  std::ifstream f(pid_file);
  long pid = 0;
  if (f >> pid && pid > 1 && kill(static_cast<pid_t>(pid), 0) == 0) {
    kill(static_cast<pid_t>(pid), SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds{200});
    kill(static_cast<pid_t>(pid), SIGKILL);
  }
  unlink(pid_file.c_str());
}

caf::error wait_for_port(const std::string& host, uint16_t port,
                         std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  auto service = std::to_string(port);
  for (;;) {
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), service.c_str(), &hints, &res) == 0) {
      int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
      bool ok = fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0;
      if (fd >= 0)
        close(fd);
      freeaddrinfo(res);
      if (ok)
        return caf::none;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return make_error(error_code::port_timeout,
                        "nothing listens on " + host + ":" + service + " after "
                          + std::to_string(timeout.count())
                          + " ms: check that the server started (see its log)");
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
}

caf::expected<uint16_t> free_port() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0
      || getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0)
      close(fd);
    return make_error(error_code::process_failed,
                      std::string("cannot find a free port: ") + std::strerror(errno));
  }
  close(fd);
  return ntohs(a.sin_port);
}

caf::expected<command_output> run_capture(const std::vector<std::string>& argv,
                                          const env_list& env,
                                          const std::string& log_file) {
  if (!argv.empty() && !is_executable(argv[0]))
    return make_error(error_code::process_failed,
                      "'" + argv[0] + "' is not an executable: build it first");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    return make_error(error_code::process_failed,
                      std::string("pipe failed: ") + std::strerror(errno));
  auto pid = spawn(argv, env, log_file, fds[1], false);
  close(fds[1]);
  if (!pid) {
    close(fds[0]);
    return pid.error();
  }
  command_output r;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    r.out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(*pid, &status, 0);
  r.exit_code = status_code(status);
  return r;
}

bool is_executable(const std::string& path) {
  return access(path.c_str(), X_OK) == 0;
}

std::vector<std::pair<std::string, double>> parse_result_lines(const std::string& out) {
  std::vector<std::pair<std::string, double>> r;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string word;
    std::string name;
    double v = 0;
    if (ls >> word && word == "result" && ls >> name >> v)
      r.emplace_back(name, v);
  }
  return r;
}

} // namespace gleam::tools::bench
