#include "actors/host_call_router.hpp"

#include <thread>

#include <caf/all.hpp>

#include "actors/atoms.hpp"
#include "actors/error.hpp"
#include "actors/log.hpp"
#include "executor/session_secret.hpp"

namespace gleam::actors {

host_call_router::host_call_router(caf::actor_system& sys, std::chrono::milliseconds grace,
                                   std::chrono::milliseconds retry)
  : sys_(sys), grace_(grace), retry_(retry) {
}

void host_call_router::attach(uint64_t session, caf::actor client, std::string secret) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto& e = sessions_[session];
    e.secret = std::move(secret);
    e.client = std::move(client);
    e.gone_since = {};
  }
  changed_.notify_all();
}

bool host_call_router::reattach(uint64_t session, const std::string& secret,
                                caf::actor client) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto i = sessions_.find(session);
    // An unknown session is compared too (against no secret), and both get
    // the same answer.
    bool proven = executor::session_secret_matches(
      i != sessions_.end() ? std::string_view{i->second.secret} : std::string_view{}, secret);
    if (i == sessions_.end() || !proven || !client) {
      log(log_level::warning,
          "refused a host-call reattach of session {}{}: the session's secret does not match "
          "or the session has no host calls here",
          session, client ? " from " + caf::to_string(client.node()) : std::string{});
      return false;
    }
    i->second.client = std::move(client);
    i->second.gone_since = {};
  }
  changed_.notify_all();
  return true;
}

void host_call_router::detach(uint64_t session) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto i = sessions_.find(session);
  if (i == sessions_.end())
    return;
  i->second.client = nullptr;
  if (i->second.gone_since == clock::time_point{})
    i->second.gone_since = clock::now();
}

void host_call_router::end(uint64_t session) {
  {
    std::lock_guard<std::mutex> guard{mutex_};
    sessions_.erase(session);
  }
  changed_.notify_all();
}

uint64_t host_call_router::answered() const {
  std::lock_guard<std::mutex> guard{mutex_};
  return answered_;
}

bool host_call_router::unreachable(uint64_t session) {
  std::lock_guard<std::mutex> guard{mutex_};
  auto i = sessions_.find(session);
  if (i == sessions_.end())
    return true;
  auto now = clock::now();
  if (i->second.gone_since == clock::time_point{})
    i->second.gone_since = now;
  return now - i->second.gone_since > grace_;
}

void host_call_router::on_error(const caf::error& e, uint64_t session, const char* what,
                                uint64_t id, bool& done, bool& lost) {
  // The client's refusal (it knows no such function or copy) will not
  // change. A timeout (a slow function): ask again. Any other failure: this
  // handle of the client is dead (the link dropped); ask again until it
  // reattaches or its grace ends.
  if (e.category() == caf::atom("gleam_act")) {
    log(log_level::warning, "session {}: the client refused {} {}: {}", session, what, id,
        sys_.render(e));
    done = true;
  } else if (e != caf::sec::request_timeout) {
    lost = true;
  }
}

bool host_call_router::deliver(uint64_t session, const char* what, uint64_t id,
                               const request_fn& request) {
  auto skip = [&] {
    log(log_level::warning, "session {}: {} {} skipped: its client was unreachable for {} ms",
        session, what, id, grace_.count());
  };
  caf::scoped_actor self{sys_};
  for (;;) {
    caf::actor client;
    {
      std::unique_lock<std::mutex> lock{mutex_};
      // The client is gone for now: wait for its resume, the session's end,
      // or the end of its grace.
      for (;;) {
        auto i = sessions_.find(session);
        if (i == sessions_.end())
          return false;
        if (i->second.client) {
          client = i->second.client;
          break;
        }
        if (clock::now() - i->second.gone_since > grace_)
          break;
        changed_.wait_for(lock, retry_);
      }
    }
    if (!client) {
      skip();
      return false;
    }
    bool done = false;
    bool lost = false;
    request(self, client, done, lost);
    if (done) {
      std::lock_guard<std::mutex> guard{mutex_};
      ++answered_;
      auto i = sessions_.find(session);
      if (i != sessions_.end())
        i->second.gone_since = {};
      return true;
    }
    if (lost) {
      if (unreachable(session)) {
        skip();
        return false;
      }
      std::unique_lock<std::mutex> lock{mutex_};
      changed_.wait_for(lock, retry_ / 20);
    }
  }
}

void host_call_router::call(uint64_t session, uint64_t callback) {
  uint64_t invocation = 0;
  {
    std::lock_guard<std::mutex> guard{mutex_};
    auto i = sessions_.find(session);
    if (i == sessions_.end())
      return;
    invocation = i->second.next_invocation++;
  }
  static_cast<void>(deliver(session, "host function", callback,
                            [&](caf::scoped_actor& self, const caf::actor& client, bool& done,
                                bool& lost) {
                              self
                                ->request(client, caf::duration{retry_}, host_call_atom::value,
                                          session, callback, invocation)
                                .receive([&](bool) { done = true; },
                                         [&](caf::error& e) {
                                           on_error(e, session, "host function", callback,
                                                    done, lost);
                                         });
                            }));
}

bool host_call_router::copy(uint64_t session, uint64_t copy, uint64_t offset,
                            const std::string& to_client, uint64_t want,
                            std::string* from_client) {
  bool ok = false;
  auto answered = deliver(
    session, "host copy", copy,
    [&](caf::scoped_actor& self, const caf::actor& client, bool& done, bool& lost) {
      self
        ->request(client, caf::duration{retry_}, host_copy_atom::value, session, copy, offset,
                  to_client, want)
        .receive(
          [&](std::string& bytes) {
            done = true;
            ok = bytes.size() == want;
            if (ok && from_client != nullptr)
              *from_client = std::move(bytes);
          },
          [&](caf::error& e) { on_error(e, session, "host copy", copy, done, lost); });
    });
  return answered && ok;
}

} // namespace gleam::actors
