// The executor's validation and bookkeeping on a CPU, over a driver_api whose
// entry points simulate a GPU in host memory. Only the entry points these
// tests reach are filled in.
#include "executor/executor.hpp"

#include <catch2/catch.hpp>

#include "tests/executor/client_bytes.hpp"
#include "tests/executor/fake_driver.hpp"
#include "tests/executor/module_images.hpp"

#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "executor/error.hpp"
#include "executor/session_secret.hpp"
#include "wire/protocol.hpp"

namespace proto = gleam::proto;
using gleam::executor::driver_api;
using gleam::executor::executor;

using namespace gleam::test::fake;
using gleam::test::elf_with_section_table_past_end;

TEST_CASE("executor over a fake driver: copies stay inside own allocations",
          "[executor][fake]") {
  fake_gpu g;
  fake_client c{*g.exec};
  auto p = c.alloc(64);
  REQUIRE(c.htod(p, std::string(64, 'a')) == CUDA_SUCCESS);
  SECTION("a copy running past the end is refused and changes nothing") {
    auto status = c.htod(p + 60, "bbbbbbbb");
    CHECK(status == CUDA_ERROR_INVALID_VALUE);
    CHECK(c.dtoh(p, 64).data() == std::string(64, 'a'));
    auto r = c.run([&](proto::Op& op) {
      op.mutable_memcpy_htod()->set_dst(p + 60);
      op.mutable_memcpy_htod()->set_data("bbbbbbbb");
    });
    CHECK_THAT(r.error(), Catch::Contains(fmt::format("{:#x} + 8 bytes", p + 60)));
  }
  SECTION("a copy between two adjacent-looking allocations is refused") {
    auto q = c.alloc(64);
    auto r = c.run([&](proto::Op& op) {
      auto* m = op.mutable_memcpy_dtod();
      m->set_dst(q);
      m->set_src(p + 32);
      m->set_size(64);
    });
    CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("a device-to-host copy above 64 MiB is refused before the driver") {
    auto r = c.dtoh(p, (uint64_t{64} << 20) + 1);
    CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(r.error(), Catch::Contains("67108865 bytes"));
  }
  SECTION("DtoD inside the session copies the bytes") {
    auto q = c.alloc(64);
    auto r = c.run([&](proto::Op& op) {
      auto* m = op.mutable_memcpy_dtod();
      m->set_dst(q);
      m->set_src(p);
      m->set_size(64);
    });
    REQUIRE(r.status() == CUDA_SUCCESS);
    CHECK(c.dtoh(q, 64).data() == std::string(64, 'a'));
  }
}

TEST_CASE("executor over a fake driver: sessions are isolated",
          "[executor][fake]") {
  fake_gpu g;
  fake_client a{*g.exec};
  fake_client b{*g.exec};
  CHECK(a.session != b.session);
  auto p = a.alloc(128);
  auto r = b.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(p); });
  CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(live_allocations().count(p) == 1);
  CHECK(b.htod(p, "x") == CUDA_ERROR_INVALID_VALUE);
  auto s = b.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(9); });
  REQUIRE(s.status() == CUDA_SUCCESS);
  auto other = a.run([](proto::Op& op) {
    op.mutable_stream_synchronize()->set_stream(9);
  });
  CHECK(other.status() == CUDA_ERROR_INVALID_HANDLE);
  auto q = a.run([](proto::Op& op) { op.mutable_stream_query()->set_stream(2); });
  CHECK(q.status() == CUDA_ERROR_NOT_READY);
  CHECK(q.error().empty());
  auto interior = a.run([&](proto::Op& op) {
    op.mutable_mem_free()->set_dptr(p + 8);
  });
  CHECK(interior.status() == CUDA_ERROR_INVALID_VALUE);
  auto own = a.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(p); });
  CHECK(own.status() == CUDA_SUCCESS);
  CHECK(live_allocations().count(p) == 0);
}

TEST_CASE("executor over a fake driver: a session past its memory quota gets out of memory, "
          "others still allocate",
          "[executor][fake]") {
  fake_gpu g;
  g.exec->set_session_memory_quota(1 << 20);
  fake_client a{*g.exec};
  fake_client b{*g.exec};
  auto p = a.alloc(768 << 10);
  auto over = a.run([](proto::Op& op) { op.mutable_mem_alloc()->set_size(512 << 10); });
  CHECK(over.status() == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK_THAT(over.error(), Catch::Contains("session-memory") && Catch::Contains("1 MiB"));
  auto pitched = a.run([](proto::Op& op) {
    op.mutable_mem_alloc_pitch()->set_width(1024);
    op.mutable_mem_alloc_pitch()->set_height(512);
  });
  CHECK(pitched.status() == CUDA_ERROR_OUT_OF_MEMORY);
  // Another session's quota is its own.
  auto q = b.alloc(768 << 10);
  CHECK(q != 0);
  // Freed memory counts no more.
  auto freed = a.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(p); });
  REQUIRE(freed.status() == CUDA_SUCCESS);
  CHECK(a.alloc(1 << 20) != 0);
}

TEST_CASE("executor over a fake driver: close_session frees everything",
          "[executor][fake]") {
  auto before = live_allocations().size();
  {
    fake_gpu g;
    CHECK(context_retains() == 1);
    uint64_t id = 0;
    {
      fake_client c{*g.exec};
      id = c.session;
      static_cast<void>(c.alloc(16));
      static_cast<void>(c.alloc(32));
      CHECK(live_allocations().size() == before + 2);
      auto summaries = g.exec->sessions();
      REQUIRE(summaries.size() == 1);
      CHECK(summaries[0].allocated_bytes() == 48);
      CHECK(summaries[0].client_id() == "cpu:1");
      CHECK(summaries[0].ops_executed() == 2);
    }
    g.exec->close_session(id);
    CHECK(live_allocations().size() == before);
    CHECK(g.exec->sessions().empty());
    fake_client d{*g.exec};
    static_cast<void>(d.alloc(8));
    CHECK(live_allocations().size() == before + 1);
  }
  // The executor's destructor closes what is still open.
  CHECK(live_allocations().size() == before);
  CHECK(context_retains() == 0);
}

TEST_CASE("executor over a fake driver: allocations carved from slabs are checked like "
          "cudaMalloc's",
          "[executor][fake]") {
  auto before = live_allocations().size();
  fake_gpu g;
  fake_client c{*g.exec};
  fake_client other{*g.exec};
  auto slab = c.run([](proto::Op& op) {
    op.mutable_mem_alloc()->set_size(4096);
    op.mutable_mem_alloc()->set_slab(true);
  });
  REQUIRE(slab.status() == CUDA_SUCCESS);
  auto base = slab.dptr();
  auto carve = [&](fake_client& who, uint64_t at, uint64_t n) {
    return who.run([&](proto::Op& op) {
      op.mutable_mem_alloc()->set_size(n);
      op.mutable_mem_alloc()->set_at(at);
    });
  };
  // The slab itself is no allocation the app may touch.
  CHECK(c.htod(base, "x") == CUDA_ERROR_INVALID_VALUE);
  auto a = carve(c, base, 1024);
  REQUIRE(a.status() == CUDA_SUCCESS);
  CHECK(a.dptr() == base);
  auto b = carve(c, base + 1024, 512);
  REQUIRE(b.status() == CUDA_SUCCESS);
  // No driver allocation for a carve.
  CHECK(live_allocations().size() == before + 1);
  REQUIRE(c.htod(base + 1024, std::string(512, 'q')) == CUDA_SUCCESS);
  CHECK(c.dtoh(base + 1024, 512).data() == std::string(512, 'q'));
  SECTION("a copy from one carved allocation into its neighbour is refused") {
    CHECK(c.htod(base + 1000, std::string(100, 'z')) == CUDA_ERROR_INVALID_VALUE);
    CHECK(c.dtoh(base + 1024, 512).data() == std::string(512, 'q'));
  }
  SECTION("carves outside a slab, across its end or over another are refused") {
    auto overlap = carve(c, base + 512, 1024);
    CHECK(overlap.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(overlap.error(), Catch::Contains("overlaps"));
    CHECK(carve(c, base + 3584, 1024).status() == CUDA_ERROR_INVALID_VALUE);
    CHECK(carve(c, base + 8192, 16).status() == CUDA_ERROR_INVALID_VALUE);
    // Another session's slab is not this one's.
    auto foreign = carve(other, base + 2048, 16);
    CHECK(foreign.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(foreign.error(), Catch::Contains("inside one slab"));
  }
  SECTION("a carved free waits for the device and keeps the slab") {
    auto syncs = stream_syncs();
    auto freed = c.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(base + 1024); });
    CHECK(freed.status() == CUDA_SUCCESS);
    CHECK(stream_syncs() > syncs); // the session's streams
    CHECK(live_allocations().size() == before + 1);
    CHECK(c.htod(base + 1024, "x") == CUDA_ERROR_INVALID_VALUE);
    // The slab goes back only once it is empty.
    auto early = c.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(base); });
    REQUIRE(early.status() == CUDA_SUCCESS); // that was the carve at base
    auto slab_free = c.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(base); });
    CHECK(slab_free.status() == CUDA_SUCCESS);
    CHECK(live_allocations().size() == before);
  }
  SECTION("a slab with live allocations is not freed; the session's end frees it") {
    REQUIRE(c.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(base); }).status()
            == CUDA_SUCCESS);
    auto busy = c.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(base); });
    CHECK(busy.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(busy.error(), Catch::Contains("still holds allocations"));
    auto summaries = g.exec->sessions();
    REQUIRE_FALSE(summaries.empty());
    g.exec->close_session(c.session);
    CHECK(live_allocations().size() == before);
  }
}

TEST_CASE("executor over a fake driver: replay, unknown sessions, DeviceReset",
          "[executor][fake]") {
  fake_gpu g;
  fake_client c{*g.exec};
  auto p = c.alloc(4);
  auto batch_of = [&](uint64_t first, uint64_t last) {
    proto::OpBatch b;
    b.set_session(c.session);
    b.set_session_secret(c.secret);
    for (auto s = first; s <= last; ++s) {
      auto* op = b.add_ops();
      op->set_seq(s);
      auto* m = op->mutable_memset();
      m->set_dst(p + (s - first));
      m->set_value(static_cast<uint32_t>(s));
      m->set_element_size(1);
      m->set_count(1);
    }
    return b;
  };
  auto first = g.exec->execute(batch_of(10, 11));
  REQUIRE(first.results_size() == 2);
  CHECK(first.executed_through() == 11);
  auto again = g.exec->execute(batch_of(10, 12));
  REQUIRE(again.results_size() == 1);
  CHECK(again.results(0).seq() == 12);
  CHECK(again.executed_through() == 12);
  c.seq = 12;
  CHECK(c.dtoh(p, 2).data() == std::string("\x0a\x0b", 2));

  proto::OpBatch stray;
  stray.set_session(4242);
  stray.add_ops()->set_seq(3);
  auto none = g.exec->execute(stray);
  REQUIRE(none.results_size() == 1);
  CHECK(none.results(0).seq() == 3);
  CHECK(none.results(0).status() == CUDA_ERROR_INVALID_CONTEXT);
  CHECK_THAT(none.results(0).error(), Catch::Contains("4242"));

  auto empty = c.run([](proto::Op&) {});
  CHECK(empty.status() == CUDA_ERROR_NOT_SUPPORTED);

  auto reset = c.run([](proto::Op& op) { op.mutable_device_reset(); });
  CHECK(reset.status() == CUDA_SUCCESS);
  CHECK(live_allocations().count(p) == 0);
  CHECK(c.htod(p, "z") == CUDA_ERROR_INVALID_VALUE);
  CHECK(g.exec->find_session(c.session) != nullptr);
}

TEST_CASE("executor over a fake driver: a session is named by its secret, not its id",
          "[executor][fake][security]") {
  fake_gpu g;
  fake_client owner{*g.exec};
  fake_client other{*g.exec};
  REQUIRE(owner.secret.size() == gleam::executor::session_secret_bytes);
  CHECK(other.secret != owner.secret);
  auto p = owner.alloc(4);
  // A batch of the owner's session under its id (sequential, so guessable)
  // without the secret, with a guessed one or with another session's: one
  // refusal, the same text as for an unknown id, and nothing runs.
  auto forged = [&](uint64_t id, const std::string& secret) {
    proto::OpBatch b;
    b.set_session(id);
    b.set_session_secret(secret);
    auto* op = b.add_ops();
    op->set_seq(owner.seq + 1);
    auto* m = op->mutable_memset();
    m->set_dst(p);
    m->set_value(0x66);
    m->set_element_size(1);
    m->set_count(4);
    return g.exec->execute(b);
  };
  auto unknown = forged(4242, owner.secret);
  REQUIRE(unknown.results_size() == 1);
  CHECK(unknown.results(0).status() == CUDA_ERROR_INVALID_CONTEXT);
  CHECK_THAT(unknown.results(0).error(),
             Catch::Contains("session's secret does not match") && Catch::Contains("4242"));
  auto wrong = owner.secret;
  wrong[0] = static_cast<char>(wrong[0] ^ 1);
  for (const auto& secret : {std::string{}, std::string(32, '\0'), wrong, other.secret}) {
    auto r = forged(owner.session, secret);
    REQUIRE(r.results_size() == 1);
    CHECK(r.results(0).status() == CUDA_ERROR_INVALID_CONTEXT);
    auto text = r.results(0).error();
    auto at = text.find(std::to_string(owner.session));
    REQUIRE(at != std::string::npos);
    text.replace(at, std::to_string(owner.session).size(), "4242");
    CHECK(text == unknown.results(0).error());
    CHECK_FALSE(g.exec->authenticate(owner.session, secret));
  }
  CHECK(g.exec->authenticate(owner.session, owner.secret));
  CHECK(owner.dtoh(p, 4).data() == std::string(4, '\0'));
  // A resume needs the secret too, and gets the same secret back.
  proto::OpenSession resume;
  resume.set_resume_session(owner.session);
  auto refused = g.exec->open_session(resume);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code()
        == static_cast<uint8_t>(gleam::executor::error_code::unknown_session));
  CHECK_THAT(caf::to_string(refused.error()), Catch::Contains("secret does not match"));
  resume.set_resume_secret(other.secret);
  CHECK_FALSE(g.exec->open_session(resume));
  resume.set_resume_secret(owner.secret);
  auto resumed = g.exec->open_session(resume);
  REQUIRE(resumed);
  CHECK(resumed->secret() == owner.secret);
}

TEST_CASE("executor over a fake driver: a client of another protocol is refused by name",
          "[executor][fake]") {
  fake_gpu g;
  proto::OpenSession req;
  req.set_protocol_version(gleam::wire::protocol_version + 1);
  auto refused = g.exec->open_session(req);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code()
        == static_cast<uint8_t>(gleam::executor::error_code::protocol_mismatch));
  CHECK_THAT(caf::to_string(refused.error()),
             Catch::Contains("this client speaks Gleam protocol "
                             + std::to_string(gleam::wire::protocol_version + 1))
               && Catch::Contains("upgrade gleamd on the GPU host"));
  req.set_protocol_version(gleam::wire::protocol_version);
  auto opened = g.exec->open_session(req);
  REQUIRE(opened);
  CHECK(opened->protocol_version() == gleam::wire::protocol_version);
}

TEST_CASE("executor over a fake driver: device description",
          "[executor][fake]") {
  fake_gpu g;
  proto::OpenSession req;
  auto opened = g.exec->open_session(req);
  REQUIRE(opened);
  CHECK(opened->driver_version() == 13000);
  REQUIRE(opened->devices_size() == 1);
  CHECK(opened->devices(0).name() == "Fake GPU");
  CHECK(opened->devices(0).attributes().size() == 3);
  auto info = g.exec->gpu_info();
  CHECK(info.name() == "Fake GPU");
  CHECK(info.uuid() == "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  CHECK(info.sm_count() == 132);
  CHECK(info.cc_major() == 9);
  CHECK(info.cc_minor() == 0);
  CHECK(info.free_memory() == (uint64_t{70} << 30));
  auto bad = executor::make(g.api, 3);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code()
        == static_cast<uint8_t>(gleam::executor::error_code::no_such_device));
}

namespace {

/// The fake driver's capture state: one thread, so one interaction mode.
/// It keeps CUDA's rule for the thread: a non-relaxed capture binds it,
/// unless it runs in relaxed mode, and then an allocation is refused and
/// invalidates every capture that binds it.
struct fake_capture {
  static CUstreamCaptureMode& thread_mode() {
    static CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_GLOBAL;
    return m;
  }
  static std::set<CUstream>& capturing() {
    static std::set<CUstream> s;
    return s;
  }
  /// The mode each capture of capturing() began in.
  static std::map<CUstream, CUstreamCaptureMode>& modes() {
    static std::map<CUstream, CUstreamCaptureMode> m;
    return m;
  }
  static std::set<CUstream>& invalidated() {
    static std::set<CUstream> s;
    return s;
  }
  static CUstreamCaptureMode& mode_at_alloc() {
    static CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_GLOBAL;
    return m;
  }
  static int& graphs_alive() {
    static int n = 0;
    return n;
  }
  static CUstreamCaptureStatus status(CUstream s) {
    if (capturing().count(s) == 0)
      return CU_STREAM_CAPTURE_STATUS_NONE;
    return invalidated().count(s) != 0 ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                        : CU_STREAM_CAPTURE_STATUS_ACTIVE;
  }
  /// Applies the rule to an unsafe call; true when it is refused.
  static bool refuse_unsafe() {
    if (thread_mode() == CU_STREAM_CAPTURE_MODE_RELAXED)
      return false;
    bool bound = false;
    for (auto s : capturing())
      if (modes()[s] != CU_STREAM_CAPTURE_MODE_RELAXED) {
        invalidated().insert(s);
        bound = true;
      }
    return bound;
  }
};

void install_fake_capture(driver_api& api) {
  fake_capture::thread_mode() = CU_STREAM_CAPTURE_MODE_GLOBAL;
  fake_capture::capturing().clear();
  fake_capture::modes().clear();
  fake_capture::invalidated().clear();
  fake_capture::graphs_alive() = 0;
  api.cuThreadExchangeStreamCaptureMode = [](CUstreamCaptureMode* m) {
    std::swap(*m, fake_capture::thread_mode());
    return CUDA_SUCCESS;
  };
  api.cuStreamBeginCapture = [](CUstream s, CUstreamCaptureMode mode) {
    if (!fake_capture::capturing().insert(s).second)
      return CUDA_ERROR_ILLEGAL_STATE;
    fake_capture::modes()[s] = mode;
    return CUDA_SUCCESS;
  };
  api.cuStreamEndCapture = [](CUstream s, CUgraph* g) {
    if (fake_capture::capturing().erase(s) == 0)
      return CUDA_ERROR_ILLEGAL_STATE;
    if (fake_capture::invalidated().erase(s) != 0) {
      *g = nullptr;
      return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    ++fake_capture::graphs_alive();
    *g = reinterpret_cast<CUgraph>(uintptr_t{0x9000});
    return CUDA_SUCCESS;
  };
  api.cuStreamIsCapturing = [](CUstream s, CUstreamCaptureStatus* st) {
    *st = fake_capture::status(s);
    return CUDA_SUCCESS;
  };
  api.cuStreamGetCaptureInfo = [](CUstream s, CUstreamCaptureStatus* st, cuuint64_t* id,
                                  CUgraph*, const CUgraphNode**, const CUgraphEdgeData**,
                                  size_t*) {
    *st = fake_capture::status(s);
    *id = 42;
    return CUDA_SUCCESS;
  };
  api.cuStreamQuery = [](CUstream s) {
    if (fake_capture::capturing().count(s) == 0)
      return CUDA_ERROR_NOT_READY; // every stream is busy
    fake_capture::invalidated().insert(s);
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  };
  api.cuGraphDestroy = [](CUgraph) {
    --fake_capture::graphs_alive();
    return CUDA_SUCCESS;
  };
  api.cuGraphInstantiateWithFlags = [](CUgraphExec* e, CUgraph, unsigned long long) {
    *e = reinterpret_cast<CUgraphExec>(uintptr_t{0xa000});
    return CUDA_SUCCESS;
  };
  api.cuGraphExecDestroy = [](CUgraphExec) { return CUDA_SUCCESS; };
  api.cuMemAlloc = [](CUdeviceptr* p, size_t n) {
    fake_capture::mode_at_alloc() = fake_capture::thread_mode();
    if (fake_capture::refuse_unsafe())
      return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    *p = reinterpret_cast<CUdeviceptr>(std::calloc(1, n));
    live_allocations().insert(*p);
    return CUDA_SUCCESS;
  };
}

} // namespace

TEST_CASE("executor over a fake driver: captures, capture rules and host copies",
          "[executor][capture]") {
  fake_gpu gpu;
  install_fake_capture(gpu.api);
  fake_client c{*gpu.exec};
  auto ok = [](const proto::OpResult& r) { return r.status() == CUDA_SUCCESS; };
  REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(0x5000); })));
  SECTION("the executor's own thread runs relaxed; capture_checked ops are judged against "
          "their own session's captures only") {
    c.alloc(64);
    CHECK(fake_capture::mode_at_alloc() == CU_STREAM_CAPTURE_MODE_RELAXED);
    // Two sessions capture in global mode, as two apps on two machines.
    fake_client other{*gpu.exec};
    for (auto* client : {&c, &other}) {
      if (client == &other)
        REQUIRE(ok(other.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(0x5000); })));
      REQUIRE(ok(client->run([](proto::Op& op) {
        auto* b = op.mutable_stream_begin_capture();
        b->set_stream(0x5000);
        b->set_mode(CU_STREAM_CAPTURE_MODE_GLOBAL);
        b->set_graph(0x6000);
      })));
    }
    // On the server every capture is relaxed: neither binds the thread.
    for (const auto& kv : fake_capture::modes())
      CHECK(kv.second == CU_STREAM_CAPTURE_MODE_RELAXED);
    auto checked_alloc = [](proto::Op& op) {
      op.mutable_mem_alloc()->set_size(64);
      op.set_capture_checked(true);
      op.add_prohibited_by(0x5000);
    };
    // The other session's thread is free: its allocation succeeds.
    CHECK(ok(other.run([](proto::Op& op) { op.mutable_mem_alloc()->set_size(64); })));
    // This session's thread is bound: refused, as the app's driver would.
    auto refused = c.run(checked_alloc);
    CHECK(refused.status() == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(fake_capture::mode_at_alloc() == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    CHECK(fake_capture::thread_mode() == CU_STREAM_CAPTURE_MODE_RELAXED);
    // A judged op that is legal changes nothing.
    CHECK(ok(c.run([](proto::Op& op) {
      op.mutable_mem_get_info();
      op.set_capture_checked(true);
      op.add_prohibited_by(0x5000);
    })));
    auto end = [](proto::Op& op) {
      op.mutable_stream_end_capture()->set_stream(0x5000);
      op.mutable_stream_end_capture()->set_graph(0x6000);
    };
    // The refusal invalidated this session's capture, not the other's.
    CHECK(other.run(end).status() == CUDA_SUCCESS);
    CHECK(c.run(end).status() == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    // The judge is ready again for the next refusal.
    REQUIRE(ok(c.run([](proto::Op& op) {
      auto* b = op.mutable_stream_begin_capture();
      b->set_stream(0x5000);
      b->set_mode(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      b->set_graph(0x6001);
    })));
    CHECK(c.run(checked_alloc).status() == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    auto end2 = [](proto::Op& op) {
      op.mutable_stream_end_capture()->set_stream(0x5000);
      op.mutable_stream_end_capture()->set_graph(0x6001);
    };
    CHECK(c.run(end2).status() == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    // Without the capture, the same session allocates freely again.
    CHECK(ok(c.run([](proto::Op& op) { op.mutable_mem_alloc()->set_size(64); })));
  }
  SECTION("a capture yields a graph that instantiates; host copies into it are refused") {
    auto begin = c.run([](proto::Op& op) {
      auto* b = op.mutable_stream_begin_capture();
      b->set_stream(0x5000);
      b->set_mode(CU_STREAM_CAPTURE_MODE_GLOBAL);
      b->set_graph(0x6000);
    });
    REQUIRE(ok(begin));
    CHECK(begin.capture_info().status() == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CHECK(begin.capture_info().id() == 42);
    auto dst = c.alloc(16);
    auto h2d = c.run([&](proto::Op& op) {
      auto* m = op.mutable_memcpy_htod();
      m->set_dst(dst);
      m->set_data(std::string(16, 'x'));
      m->set_stream(0x5000);
      m->set_async(true);
    });
    CHECK(h2d.status() == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    auto d2h = c.run([&](proto::Op& op) {
      auto* m = op.mutable_memcpy_dtoh();
      m->set_src(dst);
      m->set_size(16);
      m->set_stream(0x5000);
      m->set_async(true);
    });
    CHECK(d2h.status() == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(d2h.data().empty());
    auto end = c.run([](proto::Op& op) {
      op.mutable_stream_end_capture()->set_stream(0x5000);
      op.mutable_stream_end_capture()->set_graph(0x6000);
    });
    REQUIRE(ok(end));
    CHECK(end.capture_info().status() == CU_STREAM_CAPTURE_STATUS_NONE);
    CHECK(fake_capture::graphs_alive() == 1);
    CHECK(ok(c.run([](proto::Op& op) {
      op.mutable_graph_instantiate()->set_graph(0x6000);
      op.mutable_graph_instantiate()->set_exec(0x6010);
    })));
    auto twice = c.run([](proto::Op& op) {
      op.mutable_graph_instantiate()->set_graph(0x6000);
      op.mutable_graph_instantiate()->set_exec(0x6010);
    });
    CHECK(twice.status() == CUDA_ERROR_INVALID_VALUE);
    auto unknown = c.run([](proto::Op& op) { op.mutable_graph_destroy()->set_graph(0x6666); });
    CHECK(unknown.status() == CUDA_ERROR_INVALID_VALUE);
    REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_graph_destroy()->set_graph(0x6000); })));
    CHECK(fake_capture::graphs_alive() == 0);
  }
  SECTION("closing a session ends its capture and frees its graphs") {
    REQUIRE(ok(c.run([](proto::Op& op) {
      auto* b = op.mutable_stream_begin_capture();
      b->set_stream(0x5000);
      b->set_graph(0x6000);
    })));
    gpu.exec->close_session(c.session);
    CHECK(fake_capture::capturing().empty());
    CHECK(fake_capture::graphs_alive() == 0);
  }
}

TEST_CASE("executor over a fake driver: one session's capture and another's default "
          "streams do not meet",
          "[executor][capture]") {
  fake_gpu gpu;
  install_fake_capture(gpu.api);
  static std::vector<CUstream> memset_streams;
  memset_streams.clear();
  gpu.api.cuMemsetD8Async = [](CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
    memset_streams.push_back(s);
    std::memset(host(dst), v, n);
    return CUDA_SUCCESS;
  };
  fake_client a{*gpu.exec};
  fake_client b{*gpu.exec};
  auto pa = a.alloc(64);
  auto pb = b.alloc(64);
  auto memset_on = [](uint64_t p, uint64_t stream) {
    return [=](proto::Op& op) {
      auto* m = op.mutable_memset();
      m->set_dst(p);
      m->set_value(1);
      m->set_element_size(1);
      m->set_count(64);
      m->set_stream(stream);
      m->set_async(true);
    };
  };
  // b captures a blocking stream of its own.
  REQUIRE(b.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(0x5000); }).status()
          == CUDA_SUCCESS);
  REQUIRE(b.run([](proto::Op& op) {
             auto* c = op.mutable_stream_begin_capture();
             c->set_stream(0x5000);
             c->set_mode(CU_STREAM_CAPTURE_MODE_GLOBAL);
             c->set_graph(0x6000);
           }).status()
          == CUDA_SUCCESS);
  // a's legacy and per-thread streams are its own: its work goes on.
  CHECK(a.run(memset_on(pa, 0)).status() == CUDA_SUCCESS);
  CHECK(a.run(memset_on(pa, 2)).status() == CUDA_SUCCESS);
  CHECK(a.run([](proto::Op& op) { op.mutable_ctx_synchronize(); }).status() == CUDA_SUCCESS);
  // b's own legacy stream would depend on its capture: refused, as in CUDA.
  auto implicit = b.run(memset_on(pb, 0));
  CHECK(implicit.status() == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
  CHECK(b.run([](proto::Op& op) { op.mutable_ctx_synchronize(); }).status()
        == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  CHECK(b.run(memset_on(pb, 0x5000)).status() == CUDA_SUCCESS);
  // Every memset went on a stream of its session: none on the context's
  // default streams, and a's two stand-ins are not b's capturing stream.
  REQUIRE(memset_streams.size() == 3);
  for (auto s : memset_streams) {
    CHECK(s != nullptr);
    CHECK(s != CU_STREAM_LEGACY);
    CHECK(s != CU_STREAM_PER_THREAD);
  }
  CHECK(memset_streams[0] != memset_streams[2]);
  CHECK(memset_streams[1] != memset_streams[2]);
  CHECK(fake_capture::capturing().count(memset_streams[2]) == 1);
}

TEST_CASE("executor over a fake driver: explicit graphs check their handles",
          "[executor][capture]") {
  fake_gpu gpu;
  install_fake_capture(gpu.api);
  static int nodes_added = 0;
  static size_t last_deps = 0;
  nodes_added = 0;
  gpu.api.cuGraphCreate = [](CUgraph* g, unsigned) {
    ++fake_capture::graphs_alive();
    *g = reinterpret_cast<CUgraph>(uintptr_t{0x9100});
    return CUDA_SUCCESS;
  };
  gpu.api.cuGraphAddEmptyNode = [](CUgraphNode* n, CUgraph, const CUgraphNode*, size_t deps) {
    last_deps = deps;
    *n = reinterpret_cast<CUgraphNode>(static_cast<uintptr_t>(0x9200 + 0x10 * ++nodes_added));
    return CUDA_SUCCESS;
  };
  fake_client c{*gpu.exec};
  auto empty = [&](uint64_t graph, uint64_t node, std::vector<uint64_t> deps) {
    return c.run([&](proto::Op& op) {
      auto* a = op.mutable_graph_add_empty_node();
      a->set_graph(graph);
      a->set_node(node);
      for (auto d : deps)
        a->add_dependencies(d);
    });
  };
  REQUIRE(c.run([](proto::Op& op) { op.mutable_graph_create()->set_graph(0x6000); }).status()
          == CUDA_SUCCESS);
  CHECK(c.run([](proto::Op& op) { op.mutable_graph_create()->set_graph(0x6000); }).status()
        == CUDA_ERROR_INVALID_VALUE);
  CHECK(empty(0x6000, 0x7000, {}).status() == CUDA_SUCCESS);
  CHECK(empty(0x6000, 0x7010, {0x7000}).status() == CUDA_SUCCESS);
  CHECK(last_deps == 1);
  // A taken node handle, an unknown dependency, an unknown graph.
  CHECK(empty(0x6000, 0x7010, {}).status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(empty(0x6000, 0x7020, {0x7777}).status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(empty(0x6666, 0x7030, {}).status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(nodes_added == 2);
  auto deps = c.run([](proto::Op& op) {
    auto* d = op.mutable_graph_add_dependencies();
    d->set_graph(0x6000);
    d->add_from(0x7000);
  });
  CHECK(deps.status() == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(c.run([](proto::Op& op) { op.mutable_graph_destroy()->set_graph(0x6000); }).status()
          == CUDA_SUCCESS);
  CHECK(fake_capture::graphs_alive() == 0);
  CHECK(gpu.exec->find_session(c.session)->nodes.empty());
}


/// The way back to the client, as the router gives it: records the calls.
struct recording_port final : gleam::executor::host_call_port {
  std::vector<std::pair<uint64_t, uint64_t>> calls; // (session, callback)
  std::vector<uint64_t> ended;
  void call(uint64_t session, uint64_t callback) override {
    calls.emplace_back(session, callback);
  }
  /// Host ends of copies, as the client holds them.
  gleam::test::client_bytes client;
  bool copy(uint64_t, uint64_t copy, uint64_t offset, const std::string& to_client,
            uint64_t want, std::string* from_client) override {
    return client.serve(copy, offset, to_client, want, from_client);
  }
  void end(uint64_t session) override {
    ended.push_back(session);
  }
};

/// The host node functions the fake driver was given, as it would run them.
std::vector<CUDA_HOST_NODE_PARAMS>& host_nodes_given() {
  static std::vector<CUDA_HOST_NODE_PARAMS> v;
  return v;
}

TEST_CASE("executor over a fake driver: host nodes call the client through the session's "
          "port, which ends with the session",
          "[executor][capture]") {
  fake_gpu gpu;
  install_fake_capture(gpu.api);
  host_nodes_given().clear();
  gpu.api.cuGraphCreate = [](CUgraph* g, unsigned) {
    ++fake_capture::graphs_alive();
    *g = reinterpret_cast<CUgraph>(uintptr_t{0x9100});
    return CUDA_SUCCESS;
  };
  gpu.api.cuGraphAddHostNode = [](CUgraphNode* n, CUgraph, const CUgraphNode*, size_t,
                                  const CUDA_HOST_NODE_PARAMS* p) {
    host_nodes_given().push_back(*p);
    *n = reinterpret_cast<CUgraphNode>(uintptr_t{0x9300});
    return CUDA_SUCCESS;
  };
  gpu.api.cuGraphHostNodeSetParams = [](CUgraphNode, const CUDA_HOST_NODE_PARAMS* p) {
    host_nodes_given().push_back(*p);
    return CUDA_SUCCESS;
  };
  gpu.api.cuLaunchHostFunc = [](CUstream, CUhostFn fn, void* data) {
    host_nodes_given().push_back({fn, data});
    return CUDA_SUCCESS;
  };
  auto host_node = [](uint64_t node, uint64_t callback) {
    return [=](proto::Op& op) {
      auto* a = op.mutable_graph_add_host_node();
      a->set_graph(0x6000);
      a->set_node(node);
      a->set_callback(callback);
    };
  };
  auto create = [](proto::Op& op) { op.mutable_graph_create()->set_graph(0x6000); };
  SECTION("without a port, host nodes are refused") {
    fake_client c{*gpu.exec};
    REQUIRE(c.run(create).status() == CUDA_SUCCESS);
    auto r = c.run(host_node(0x7000, 5));
    CHECK(r.status() == CUDA_ERROR_NOT_SUPPORTED);
    CHECK(r.error().find("host nodes") != std::string::npos);
    CHECK(host_nodes_given().empty());
  }
  SECTION("with a port, each node's function asks it for the session's callback") {
    auto port = std::make_shared<recording_port>();
    gpu.exec->set_host_calls(port);
    fake_client c{*gpu.exec};
    REQUIRE(c.run(create).status() == CUDA_SUCCESS);
    CHECK(c.run(host_node(0x7000, 0)).status() == CUDA_ERROR_INVALID_VALUE);
    REQUIRE(c.run(host_node(0x7000, 5)).status() == CUDA_SUCCESS);
    REQUIRE(c.run([](proto::Op& op) {
               op.mutable_graph_host_node_set_params()->set_node(0x7000);
               op.mutable_graph_host_node_set_params()->set_callback(9);
             }).status()
            == CUDA_SUCCESS);
    CHECK(c.run([](proto::Op& op) {
             op.mutable_graph_host_node_set_params()->set_node(0x7777);
             op.mutable_graph_host_node_set_params()->set_callback(9);
           }).status()
          == CUDA_ERROR_INVALID_VALUE);
    // A captured host function: refused outside a capture, a node inside.
    REQUIRE(c.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(0x5000); }).status()
            == CUDA_SUCCESS);
    auto host_func = [](proto::Op& op) {
      op.mutable_stream_host_func()->set_stream(0x5000);
      op.mutable_stream_host_func()->set_callback(11);
    };
    CHECK(c.run(host_func).status() == CUDA_ERROR_INVALID_VALUE);
    REQUIRE(c.run([](proto::Op& op) {
               auto* b = op.mutable_stream_begin_capture();
               b->set_stream(0x5000);
               b->set_mode(CU_STREAM_CAPTURE_MODE_GLOBAL);
               b->set_graph(0x6100);
             }).status()
            == CUDA_SUCCESS);
    REQUIRE(c.run(host_func).status() == CUDA_SUCCESS);
    // The driver replays the nodes: each asks the port, with its own callback.
    REQUIRE(host_nodes_given().size() == 3);
    for (const auto& p : host_nodes_given())
      p.fn(p.userData);
    using call = std::pair<uint64_t, uint64_t>;
    CHECK(port->calls == std::vector<call>{{c.session, 5}, {c.session, 9}, {c.session, 11}});
    CHECK(port->ended.empty());
    gpu.exec->close_session(c.session);
    CHECK(port->ended == std::vector<uint64_t>{c.session});
    CHECK(fake_capture::capturing().empty());
  }
}

TEST_CASE("executor over a fake driver: graph memory is the session's from its allocation "
          "node to its free node",
          "[executor][capture]") {
  fake_gpu gpu;
  install_fake_capture(gpu.api);
  // The driver gives every allocation node the same address, as it may
  // once the earlier graph memory's lifetime ended.
  static char graph_memory[256];
  gpu.api.cuGraphCreate = [](CUgraph* g, unsigned) {
    *g = reinterpret_cast<CUgraph>(uintptr_t{0x9100});
    return CUDA_SUCCESS;
  };
  gpu.api.cuGraphAddMemAllocNode = [](CUgraphNode* n, CUgraph, const CUgraphNode*, size_t,
                                      CUDA_MEM_ALLOC_NODE_PARAMS* p) {
    if (p->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE || p->bytesize > 256)
      return CUDA_ERROR_INVALID_VALUE;
    p->dptr = reinterpret_cast<CUdeviceptr>(graph_memory);
    *n = reinterpret_cast<CUgraphNode>(uintptr_t{0x9400});
    return CUDA_SUCCESS;
  };
  gpu.api.cuGraphAddMemFreeNode = [](CUgraphNode* n, CUgraph, const CUgraphNode*, size_t,
                                     CUdeviceptr) {
    *n = reinterpret_cast<CUgraphNode>(uintptr_t{0x9500});
    return CUDA_SUCCESS;
  };
  gpu.api.cuMemFreeAsync = [](CUdeviceptr, CUstream) { return CUDA_SUCCESS; };
  fake_client c{*gpu.exec};
  auto kind_of = [&](uint64_t p) {
    auto e = gpu.exec->find_session(c.session)->memory.find_base(p);
    return e ? static_cast<int>(e->kind) : -1;
  };
  auto alloc_node = [](uint64_t graph, uint64_t node, uint64_t size) {
    return [=](proto::Op& op) {
      auto* a = op.mutable_graph_add_mem_alloc_node();
      a->set_graph(graph);
      a->set_node(node);
      a->set_size(size);
    };
  };
  auto free_node = [](uint64_t graph, uint64_t node, uint64_t dptr) {
    return [=](proto::Op& op) {
      auto* a = op.mutable_graph_add_mem_free_node();
      a->set_graph(graph);
      a->set_node(node);
      a->set_dptr(dptr);
    };
  };
  auto graph = [](uint64_t g) {
    return [=](proto::Op& op) { op.mutable_graph_create()->set_graph(g); };
  };
  REQUIRE(c.run(graph(0x6000)).status() == CUDA_SUCCESS);
  CHECK(c.run(alloc_node(0x6000, 0x7000, 0)).status() == CUDA_ERROR_INVALID_VALUE);
  auto first = c.run(alloc_node(0x6000, 0x7000, 128));
  REQUIRE(first.status() == CUDA_SUCCESS);
  auto p = first.dptr();
  CHECK(p == reinterpret_cast<uint64_t>(graph_memory));
  CHECK(kind_of(p) == static_cast<int>(gleam::executor::range_kind::graph_allocation));
  // Only graph memory of this session may have a free node.
  auto plain = c.alloc(64);
  CHECK(c.run(free_node(0x6000, 0x7010, plain)).status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(c.run(free_node(0x6000, 0x7010, p + 8)).status() == CUDA_ERROR_INVALID_VALUE);
  // The address again, for another graph, while the first graph holds it.
  REQUIRE(c.run(graph(0x6100)).status() == CUDA_SUCCESS);
  auto again = c.run(alloc_node(0x6100, 0x7100, 64));
  REQUIRE(again.status() == CUDA_SUCCESS);
  CHECK(again.dptr() == p);
  CHECK(gpu.exec->find_session(c.session)->memory.find(p + 100) == std::nullopt);
  REQUIRE(c.run(free_node(0x6100, 0x7110, p)).status() == CUDA_SUCCESS);
  CHECK(kind_of(p) == -1);
  CHECK(c.run(free_node(0x6100, 0x7120, p)).status() == CUDA_ERROR_INVALID_VALUE);
  // cudaFreeAsync of an address the session does not hold.
  REQUIRE(c.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(0x5000); }).status()
          == CUDA_SUCCESS);
  auto stray = c.run([&](proto::Op& op) {
    op.mutable_mem_free_async()->set_stream(0x5000);
    op.mutable_mem_free_async()->set_dptr(p);
  });
  CHECK(stray.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(stray.error().find("cuMemFreeAsync") != std::string::npos);
}

TEST_CASE("executor over a fake driver: every invalid op class gets an error and the "
          "session keeps serving",
          "[executor][fake][validation]") {
  fake_gpu g;
  install_fake_modules(g.api);
  fake_client c{*g.exec};
  auto p = c.alloc(256);
  int refused = 0;
  auto expect = [&](int want, const std::function<void(proto::Op&)>& fill, const char* text) {
    auto r = c.run(fill);
    INFO(text << ": " << r.error());
    CHECK(r.status() == want);
    CHECK_FALSE(r.error().empty());
    ++refused;
  };
  expect(CUDA_ERROR_INVALID_VALUE,
         [&](proto::Op& op) {
           auto* m = op.mutable_memset();
           m->set_dst(p);
           m->set_element_size(3);
           m->set_count(4);
         },
         "memset element size 3");
  expect(CUDA_ERROR_INVALID_VALUE,
         [&](proto::Op& op) {
           op.mutable_memcpy_dtoh()->set_src(~uint64_t{0} - 4);
           op.mutable_memcpy_dtoh()->set_size(16);
         },
         "ptr + size overflowing 64 bits");
  expect(CUDA_ERROR_INVALID_VALUE,
         [&](proto::Op& op) {
           auto* m = op.mutable_memcpy_2d();
           m->set_kind(proto::Memcpy2D::DTOD);
           m->set_src(p);
           m->set_src_pitch(uint64_t{1} << 40);
           m->set_dst(p);
           m->set_dst_pitch(uint64_t{1} << 40);
           m->set_width(16);
           m->set_height(uint64_t{1} << 30);
         },
         "2D pitch * height overflowing");
  expect(CUDA_ERROR_INVALID_VALUE,
         [&](proto::Op& op) {
           auto* m = op.mutable_memset();
           m->set_dst(p);
           m->set_element_size(4);
           m->set_count(65);
         },
         "memset past the allocation");
  expect(CUDA_ERROR_INVALID_HANDLE,
         [](proto::Op& op) { op.mutable_event_record()->set_event(77); }, "unknown event");
  expect(CUDA_ERROR_INVALID_HANDLE,
         [](proto::Op& op) { op.mutable_stream_destroy()->set_stream(77); }, "unknown stream");
  expect(CUDA_ERROR_INVALID_HANDLE,
         [](proto::Op& op) { op.mutable_module_unload()->set_module(77); }, "unknown module");
  expect(CUDA_ERROR_INVALID_HANDLE,
         [](proto::Op& op) {
           op.mutable_launch_kernel()->set_module(77);
           op.mutable_launch_kernel()->set_function("k");
         },
         "launch in an unknown module");
  expect(CUDA_ERROR_INVALID_VALUE,
         [&](proto::Op& op) { op.mutable_mem_free()->set_dptr(p + 16); },
         "free of an interior pointer");
  auto loads_before = module_loads();
  expect(CUDA_ERROR_INVALID_IMAGE,
         [](proto::Op& op) {
           op.mutable_module_load()->set_module(5);
           op.mutable_module_load()->set_image(elf_with_section_table_past_end());
         },
         "ELF image with headers past its end");
  CHECK(module_loads() == loads_before); // refused before cuModuleLoadData
  // A module that loads, then launches with a wrong parameter buffer size.
  auto loaded = c.run([](proto::Op& op) {
    op.mutable_module_load()->set_module(6);
    op.mutable_module_load()->set_image(".version 8.0\n.target sm_90\n");
    op.mutable_module_load()->add_functions("k");
  });
  REQUIRE(loaded.status() == CUDA_SUCCESS);
  auto launches_before = launches();
  auto launch = [&](size_t bytes) {
    return c.run([&](proto::Op& op) {
      auto* l = op.mutable_launch_kernel();
      l->set_module(6);
      l->set_function("k");
      l->set_grid_x(1);
      l->set_block_x(1);
      l->set_params(std::string(bytes, '\0'));
    });
  };
  auto bad = launch(20);
  CHECK(bad.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK_THAT(bad.error(), Catch::Contains("ends at 12 bytes"));
  ++refused;
  CHECK(launches() == launches_before);
  expect(CUDA_ERROR_INVALID_HANDLE,
         [](proto::Op& op) {
           op.mutable_launch_kernel()->set_module(6);
           op.mutable_launch_kernel()->set_function("not_there");
         },
         "launch of a function the module lacks");
  // The session still serves: a good launch, a copy round trip, a free.
  CHECK(launch(12).status() == CUDA_SUCCESS);
  CHECK(launch(16).status() == CUDA_SUCCESS);
  CHECK(launches() == launches_before + 2);
  REQUIRE(c.htod(p, std::string(256, 'z')) == CUDA_SUCCESS);
  CHECK(c.dtoh(p, 256).data() == std::string(256, 'z'));
  CHECK(c.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(p); }).status()
        == CUDA_SUCCESS);
  std::printf("invalid op classes refused with an error reply: %d\n", refused);
}

namespace {

/// What the fake driver was given for memcpy and child graph nodes.
struct copy_nodes_given {
  std::vector<CUDA_MEMCPY3D> copies;
  std::vector<CUDA_HOST_NODE_PARAMS> hosts;
  int children = 0;
  static copy_nodes_given& get() {
    static copy_nodes_given g;
    return g;
  }
};

} // namespace

TEST_CASE("executor over a fake driver: memcpy nodes, a host end carried through the port "
          "at every replay",
          "[executor][capture]") {
  fake_gpu gpu;
  install_fake_capture(gpu.api);
  auto& given = copy_nodes_given::get();
  given = {};
  gpu.api.cuCtxGetCurrent = [](CUcontext* c) {
    *c = reinterpret_cast<CUcontext>(uintptr_t{0x77});
    return CUDA_SUCCESS;
  };
  gpu.api.cuGraphCreate = [](CUgraph* g, unsigned) {
    *g = reinterpret_cast<CUgraph>(uintptr_t{0x9100});
    return CUDA_SUCCESS;
  };
  gpu.api.cuGraphDestroy = [](CUgraph) { return CUDA_SUCCESS; };
  gpu.api.cuMemHostAlloc = [](void** p, size_t n, unsigned) {
    *p = std::malloc(n);
    return CUDA_SUCCESS;
  };
  gpu.api.cuMemFreeHost = [](void* p) {
    std::free(p);
    return CUDA_SUCCESS;
  };
  gpu.api.cuGraphAddHostNode = [](CUgraphNode* n, CUgraph, const CUgraphNode*, size_t,
                                  const CUDA_HOST_NODE_PARAMS* p) {
    copy_nodes_given::get().hosts.push_back(*p);
    *n = reinterpret_cast<CUgraphNode>(uintptr_t{0x9300});
    return CUDA_SUCCESS;
  };
  gpu.api.cuGraphAddMemcpyNode = [](CUgraphNode* n, CUgraph, const CUgraphNode*, size_t,
                                    const CUDA_MEMCPY3D* p, CUcontext) {
    copy_nodes_given::get().copies.push_back(*p);
    *n = reinterpret_cast<CUgraphNode>(uintptr_t{0x9500});
    return CUDA_SUCCESS;
  };
  gpu.api.cuGraphAddChildGraphNode = [](CUgraphNode* n, CUgraph, const CUgraphNode*, size_t,
                                        CUgraph) {
    ++copy_nodes_given::get().children;
    *n = reinterpret_cast<CUgraphNode>(uintptr_t{0x9600});
    return CUDA_SUCCESS;
  };
  auto port = std::make_shared<recording_port>();
  gpu.exec->set_host_calls(port);
  fake_client c{*gpu.exec};
  auto dev = c.alloc(64);
  REQUIRE(c.run([](proto::Op& op) { op.mutable_graph_create()->set_graph(0x6000); }).status()
          == CUDA_SUCCESS);
  auto add = [&](uint64_t node, uint64_t host_copy, bool to_device, uint64_t dst, uint64_t src,
                 uint64_t width) {
    return c.run([=](proto::Op& op) {
      auto* a = op.mutable_graph_add_memcpy_node();
      a->set_graph(0x6000);
      a->set_node(node);
      auto* p = a->mutable_copy();
      p->set_dst(dst);
      p->set_src(src);
      p->set_dst_pitch(width);
      p->set_src_pitch(width);
      p->set_width(width);
      p->set_height(1);
      p->set_depth(1);
      p->set_host_copy(host_copy);
      p->set_to_device(to_device);
    });
  };
  SECTION("between device addresses: the driver's memcpy node") {
    REQUIRE(add(0x7000, 0, false, dev + 32, dev, 16).status() == CUDA_SUCCESS);
    REQUIRE(given.copies.size() == 1);
    CHECK(given.copies[0].srcMemoryType == CU_MEMORYTYPE_DEVICE);
    CHECK(given.copies[0].dstDevice == dev + 32);
    CHECK(given.copies[0].WidthInBytes == 16);
    CHECK(given.children == 0);
    CHECK(given.hosts.empty());
  }
  SECTION("outside the session's memory: refused, nothing made") {
    auto r = add(0x7000, 0, false, dev + 60, dev, 16);
    CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK(r.error().find("outside") != std::string::npos);
    CHECK(add(0x7001, 4, true, dev + 60, 0, 16).status() == CUDA_ERROR_INVALID_VALUE);
    CHECK(given.copies.empty());
    CHECK(given.children == 0);
  }
  SECTION("to the device: the host node fetches the client's bytes into the staging buffer") {
    port->client.bytes[4] = "0123456789abcdef";
    REQUIRE(add(0x7000, 4, true, dev, 0, 16).status() == CUDA_SUCCESS);
    REQUIRE(given.hosts.size() == 1);
    REQUIRE(given.copies.size() == 1);
    CHECK(given.children == 1);
    const auto& copy = given.copies[0];
    CHECK(copy.srcMemoryType == CU_MEMORYTYPE_HOST);
    CHECK(copy.dstDevice == dev);
    given.hosts[0].fn(given.hosts[0].userData);
    CHECK(std::string(static_cast<const char*>(copy.srcHost), 16) == "0123456789abcdef");
    // Every replay reads the client's bytes of that moment.
    port->client.bytes[4] = "fedcba9876543210";
    given.hosts[0].fn(given.hosts[0].userData);
    CHECK(std::string(static_cast<const char*>(copy.srcHost), 16) == "fedcba9876543210");
  }
  SECTION("to the host: the host node hands the staging buffer's bytes to the client") {
    REQUIRE(add(0x7000, 6, false, 0, dev + 8, 8).status() == CUDA_SUCCESS);
    REQUIRE(given.copies.size() == 1);
    const auto& copy = given.copies[0];
    CHECK(copy.srcDevice == dev + 8);
    CHECK(copy.dstMemoryType == CU_MEMORYTYPE_HOST);
    std::memcpy(copy.dstHost, "replayed", 8);
    given.hosts[0].fn(given.hosts[0].userData);
    CHECK(port->client.bytes[6] == "replayed");
  }
  gpu.exec->close_session(c.session);
}
