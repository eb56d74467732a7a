// Op batches on a real GPU. Every test case here is tagged [gpu].
#include "executor/executor.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <sys/stat.h>

#include "executor/error.hpp"
#include "tests/executor/client_bytes.hpp"
#include "tests/support/gpu_probe.hpp"

namespace proto = gleam::proto;
using gleam::executor::driver_api;
using gleam::executor::executor;

namespace {

/// One driver and one executor on GPU 0 for the whole test binary.
struct gpu {
  std::unique_ptr<driver_api> api;
  std::unique_ptr<executor> exec;
};

executor& the_executor() {
  static gpu g = [] {
    gpu out;
    auto api = driver_api::load();
    if (!api)
      FAIL("driver_api::load: " << caf::to_string(api.error()));
    out.api = std::move(*api);
    auto ex = executor::make(*out.api, 0);
    if (!ex)
      FAIL("executor::make: " << caf::to_string(ex.error()));
    out.exec = std::move(*ex);
    return out;
  }();
  return *g.exec;
}

std::string read_fatbin() {
  std::string path = GLEAM_EXECUTOR_TEST_FATBIN;
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    path = gleam::test::build_path("tests/executor/kernels.fatbin");
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string out(n, '\0');
  for (auto& c : out)
    c = static_cast<char>(gen() & 0xff);
  return out;
}

/// A client of one session: numbers ops and runs them one batch at a time.
class client {
public:
  explicit client(executor& ex) : ex_(ex) {
    proto::OpenSession req;
    req.set_client_id("test:1");
    auto opened = ex_.open_session(req);
    REQUIRE(opened);
    session_ = opened->session();
    secret_ = opened->secret();
  }

  ~client() {
    ex_.close_session(session_);
  }

  uint64_t id() const {
    return session_;
  }

  const std::string& secret() const {
    return secret_;
  }

  /// Runs one op filled in by `fill`, returns its result.
  proto::OpResult run(const std::function<void(proto::Op&)>& fill) {
    proto::OpBatch batch;
    batch.set_session(session_);
    batch.set_session_secret(secret_);
    auto* op = batch.add_ops();
    op->set_seq(++seq_);
    fill(*op);
    auto reply = ex_.execute(batch);
    REQUIRE(reply.results_size() == 1);
    CHECK(reply.results(0).seq() == seq_);
    CHECK(reply.executed_through() == seq_);
    return reply.results(0);
  }

  uint64_t alloc(uint64_t size) {
    auto r = run([&](proto::Op& op) { op.mutable_mem_alloc()->set_size(size); });
    REQUIRE(r.status() == CUDA_SUCCESS);
    REQUIRE(r.dptr() != 0);
    return r.dptr();
  }

  int htod(uint64_t dst, const std::string& data, uint64_t stream = 0,
           bool async = false) {
    return run([&](proto::Op& op) {
             auto* m = op.mutable_memcpy_htod();
             m->set_dst(dst);
             m->set_data(data);
             m->set_stream(stream);
             m->set_async(async);
           })
      .status();
  }

  std::string dtoh(uint64_t src, uint64_t size, uint64_t stream = 0,
                   bool async = false) {
    auto r = run([&](proto::Op& op) {
      auto* m = op.mutable_memcpy_dtoh();
      m->set_src(src);
      m->set_size(size);
      m->set_stream(stream);
      m->set_async(async);
    });
    REQUIRE(r.status() == CUDA_SUCCESS);
    return r.data();
  }

  uint64_t free_memory() {
    auto r = run([](proto::Op& op) { op.mutable_mem_get_info(); });
    REQUIRE(r.status() == CUDA_SUCCESS);
    return r.mem_info().free();
  }

  uint64_t next_seq() const {
    return seq_ + 1;
  }

  void skip_seq(uint64_t n) {
    seq_ += n;
  }

private:
  executor& ex_;
  uint64_t session_ = 0;
  std::string secret_;
  uint64_t seq_ = 0;
};

/// Packs the saxpb arguments by the layout ModuleLoad returned.
std::string pack_saxpb(const proto::FunctionInfo& f, uint64_t y, uint64_t x,
                       float a, float b, int n) {
  REQUIRE(f.params_size() == 5);
  const auto& last = f.params(4);
  std::string buf(last.offset() + last.size(), '\0');
  auto put = [&](int i, const void* v, size_t size) {
    REQUIRE(f.params(i).size() == size);
    std::memcpy(&buf[f.params(i).offset()], v, size);
  };
  put(0, &y, sizeof(y));
  put(1, &x, sizeof(x));
  put(2, &a, sizeof(a));
  put(3, &b, sizeof(b));
  put(4, &n, sizeof(n));
  return buf;
}

proto::ModuleLoaded load_kernels(client& c, uint64_t module) {
  auto image = read_fatbin();
  auto r = c.run([&](proto::Op& op) {
    auto* m = op.mutable_module_load();
    m->set_module(module);
    m->set_image(image);
    m->add_functions("saxpb");
    m->add_functions("add_to_counters");
    m->add_functions("no_such_kernel");
    m->add_variables("counters");
  });
  REQUIRE(r.status() == CUDA_SUCCESS);
  REQUIRE(r.module().functions_size() == 3);
  REQUIRE(r.module().variables_size() == 1);
  return r.module();
}

std::string from_floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()),
                     v.size() * sizeof(float));
}

std::vector<float> to_floats(const std::string& s) {
  std::vector<float> v(s.size() / sizeof(float));
  std::memcpy(v.data(), s.data(), v.size() * sizeof(float));
  return v;
}

} // namespace

TEST_CASE("open_session describes the GPU", "[gpu][executor]") {
  auto& ex = the_executor();
  proto::OpenSession req;
  req.set_client_id("laptop:42");
  auto opened = ex.open_session(req);
  REQUIRE(opened);
  CHECK(opened->session() != 0);
  CHECK(opened->driver_version() >= 13000);
  REQUIRE(opened->devices_size() == 1);
  const auto& d = opened->devices(0);
  CHECK_FALSE(d.name().empty());
  CHECK(d.uuid().size() == 16);
  CHECK(d.total_memory() > 0);
  REQUIRE(d.attributes().count(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) == 1);
  CHECK(d.attributes().at(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) > 0);
  CHECK(d.attributes().at(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK) >= 1024);
  CHECK(d.attributes().size() > 100);
  auto summaries = ex.sessions();
  auto it = std::find_if(summaries.begin(), summaries.end(), [&](const auto& s) {
    return s.session() == opened->session();
  });
  REQUIRE(it != summaries.end());
  CHECK(it->client_id() == "laptop:42");
  proto::OpenSession resume;
  resume.set_resume_session(opened->session());
  resume.set_resume_secret(opened->secret());
  auto again = ex.open_session(resume);
  REQUIRE(again);
  CHECK(again->session() == opened->session());
  CHECK(again->secret() == opened->secret());
  auto resumed = ex.sessions();
  for (const auto& s : resumed)
    if (s.session() == opened->session())
      CHECK(s.resumes() == 1);
  // A batch re-sent after a reconnect is answered from the replay log: the
  // same allocation, not a second one.
  proto::OpBatch batch;
  batch.set_session(opened->session());
  batch.set_session_secret(opened->secret());
  auto* op = batch.add_ops();
  op->set_seq(1);
  op->mutable_mem_alloc()->set_size(4096);
  auto first = ex.execute(batch);
  REQUIRE(first.results_size() == 1);
  CHECK(first.results(0).status() == CUDA_SUCCESS);
  CHECK(first.results(0).dptr() != 0);
  auto replayed = ex.execute(batch);
  REQUIRE(replayed.results_size() == 1);
  CHECK(replayed.results(0).dptr() == first.results(0).dptr());
  for (const auto& s : ex.sessions())
    if (s.session() == opened->session())
      CHECK(s.ops_executed() == 1);
  ex.close_session(opened->session());
  auto gone = ex.open_session(resume);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code()
        == static_cast<uint8_t>(gleam::executor::error_code::unknown_session));
  auto info = ex.gpu_info();
  CHECK(info.name() == d.name());
  CHECK(info.uuid().rfind("GPU-", 0) == 0);
  CHECK(info.uuid().size() == 40);
  CHECK(info.total_memory() == d.total_memory());
  CHECK(info.free_memory() > 0);
  CHECK(info.free_memory() <= info.total_memory());
  CHECK(info.sm_count() > 0);
  CHECK(info.cc_major() >= 9);
}

TEST_CASE("a kernel launched by its returned layout computes a*x+b exactly",
          "[gpu][executor]") {
  client c{the_executor()};
  constexpr int n = 10000;
  std::vector<float> x(n);
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  for (auto& v : x)
    v = dist(gen);
  const float a = 1.75f;
  const float b = -3.25f;
  auto dx = c.alloc(n * sizeof(float));
  auto dy = c.alloc(n * sizeof(float));
  REQUIRE(c.htod(dx, from_floats(x)) == CUDA_SUCCESS);
  auto mod = load_kernels(c, 1);
  const auto& saxpb = mod.functions(0);
  CHECK(saxpb.name() == "saxpb");
  REQUIRE(saxpb.found());
  CHECK(saxpb.attributes().count(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) == 1);
  CHECK_FALSE(mod.functions(2).found());
  auto params = pack_saxpb(saxpb, dy, dx, a, b, n);
  auto launch = [&](const std::string& p) {
    return c.run([&](proto::Op& op) {
      auto* l = op.mutable_launch_kernel();
      l->set_module(1);
      l->set_function("saxpb");
      l->set_grid_x((n + 255) / 256);
      l->set_grid_y(1);
      l->set_grid_z(1);
      l->set_block_x(256);
      l->set_block_y(1);
      l->set_block_z(1);
      l->set_params(p);
    });
  };
  auto r = launch(params);
  REQUIRE(r.status() == CUDA_SUCCESS);
  auto y = to_floats(c.dtoh(dy, n * sizeof(float)));
  REQUIRE(y.size() == n);
  int mismatches = 0;
  for (int i = 0; i < n; ++i) {
    float expected = std::fma(a, x[i], b);
    if (std::memcmp(&y[i], &expected, sizeof(float)) != 0)
      ++mismatches;
  }
  CHECK(mismatches == 0);

  SECTION("a parameter buffer that does not match the layout is refused") {
    auto bad = launch(params + std::string(9, '\0'));
    CHECK(bad.status() == CUDA_ERROR_INVALID_VALUE);
    CHECK_THAT(bad.error(), Catch::Contains("layout"));
    auto short_params = launch(params.substr(0, params.size() - 4));
    CHECK(short_params.status() == CUDA_ERROR_INVALID_VALUE);
  }
  SECTION("unknown modules and functions are invalid handles") {
    auto r2 = c.run([&](proto::Op& op) {
      auto* l = op.mutable_launch_kernel();
      l->set_module(99);
      l->set_function("saxpb");
      l->set_grid_x(1);
      l->set_block_x(1);
    });
    CHECK(r2.status() == CUDA_ERROR_INVALID_HANDLE);
    auto r3 = c.run([&](proto::Op& op) {
      auto* l = op.mutable_launch_kernel();
      l->set_module(1);
      l->set_function("no_such_kernel");
      l->set_grid_x(1);
      l->set_block_x(1);
    });
    CHECK(r3.status() == CUDA_ERROR_INVALID_HANDLE);
  }
  SECTION("occupancy and function attributes answer") {
    auto occ = c.run([&](proto::Op& op) {
      auto* o = op.mutable_occupancy_max_active_blocks();
      o->set_module(1);
      o->set_function("saxpb");
      o->set_block_size(256);
    });
    REQUIRE(occ.status() == CUDA_SUCCESS);
    CHECK(occ.value() > 0);
    auto set = c.run([&](proto::Op& op) {
      auto* f = op.mutable_func_set_attribute();
      f->set_module(1);
      f->set_function("saxpb");
      f->set_attribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
      f->set_value(1024);
    });
    CHECK(set.status() == CUDA_SUCCESS);
    auto cache = c.run([&](proto::Op& op) {
      auto* f = op.mutable_func_set_cache_config();
      f->set_module(1);
      f->set_function("saxpb");
      f->set_config(CU_FUNC_CACHE_PREFER_L1);
    });
    CHECK(cache.status() == CUDA_SUCCESS);
  }
}

TEST_CASE("module variables are copy targets until the module is unloaded",
          "[gpu][executor]") {
  client c{the_executor()};
  auto mod = load_kernels(c, 5);
  const auto& var = mod.variables(0);
  REQUIRE(var.found());
  REQUIRE(var.size() == 4 * sizeof(int));
  std::vector<int> start = {1, 2, 3, 4};
  std::string bytes(reinterpret_cast<const char*>(start.data()), 16);
  REQUIRE(c.htod(var.dptr(), bytes) == CUDA_SUCCESS);
  auto r = c.run([&](proto::Op& op) {
    auto* l = op.mutable_launch_kernel();
    l->set_module(5);
    l->set_function("add_to_counters");
    l->set_grid_x(1);
    l->set_grid_y(1);
    l->set_grid_z(1);
    l->set_block_x(4);
    l->set_block_y(1);
    l->set_block_z(1);
    int v = 10;
    l->set_params(std::string(reinterpret_cast<const char*>(&v), sizeof(v)));
  });
  REQUIRE(r.status() == CUDA_SUCCESS);
  auto out = c.dtoh(var.dptr(), 16);
  std::vector<int> got(4);
  std::memcpy(got.data(), out.data(), 16);
  CHECK(got == std::vector<int>{11, 12, 13, 14});
  auto free_var = c.run([&](proto::Op& op) {
    op.mutable_mem_free()->set_dptr(var.dptr());
  });
  CHECK(free_var.status() == CUDA_ERROR_INVALID_VALUE);
  auto unload = c.run([](proto::Op& op) {
    op.mutable_module_unload()->set_module(5);
  });
  REQUIRE(unload.status() == CUDA_SUCCESS);
  CHECK(c.htod(var.dptr(), bytes) == CUDA_ERROR_INVALID_VALUE);
  auto again = c.run([](proto::Op& op) {
    op.mutable_module_unload()->set_module(5);
  });
  CHECK(again.status() == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("copies outside the session's allocations touch nothing",
          "[gpu][executor]") {
  client c{the_executor()};
  auto p = c.alloc(256);
  auto q = c.alloc(256);
  auto pattern = random_bytes(256, 1);
  REQUIRE(c.htod(p, pattern) == CUDA_SUCCESS);
  auto r = c.run([&](proto::Op& op) {
    auto* m = op.mutable_memcpy_htod();
    m->set_dst(p + 200);
    m->set_data(std::string(100, '\x55'));
  });
  CHECK(r.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK_THAT(r.error(), Catch::Contains("outside this session's allocations"));
  CHECK_THAT(r.error(), Catch::Contains("+ 100 bytes"));
  CHECK(c.dtoh(p, 256) == pattern);
  auto over = c.run([&](proto::Op& op) {
    auto* m = op.mutable_memcpy_dtoh();
    m->set_src(p + 1);
    m->set_size(256);
  });
  CHECK(over.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(over.data().empty());
  auto dtod = c.run([&](proto::Op& op) {
    auto* m = op.mutable_memcpy_dtod();
    m->set_dst(q);
    m->set_src(p + 128);
    m->set_size(256);
  });
  CHECK(dtod.status() == CUDA_ERROR_INVALID_VALUE);
  auto huge = c.run([&](proto::Op& op) {
    auto* m = op.mutable_memcpy_dtoh();
    m->set_src(p);
    m->set_size((uint64_t{64} << 20) + 1);
  });
  CHECK(huge.status() == CUDA_ERROR_INVALID_VALUE);
  auto wild = c.run([&](proto::Op& op) {
    auto* m = op.mutable_memset();
    m->set_dst(0x10);
    m->set_element_size(1);
    m->set_count(4);
  });
  CHECK(wild.status() == CUDA_ERROR_INVALID_VALUE);
  auto ok = c.run([&](proto::Op& op) {
    auto* m = op.mutable_memcpy_dtod();
    m->set_dst(q);
    m->set_src(p);
    m->set_size(256);
    m->set_async(true);
  });
  REQUIRE(ok.status() == CUDA_SUCCESS);
  CHECK(c.dtoh(q, 256, 0, true) == pattern);
}

TEST_CASE("sessions never see each other's memory", "[gpu][executor]") {
  auto& ex = the_executor();
  client a{ex};
  client b{ex};
  auto p = a.alloc(4096);
  auto pattern = random_bytes(4096, 2);
  REQUIRE(a.htod(p, pattern) == CUDA_SUCCESS);
  auto f = b.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(p); });
  CHECK(f.status() == CUDA_ERROR_INVALID_VALUE);
  auto rd = b.run([&](proto::Op& op) {
    auto* m = op.mutable_memcpy_dtoh();
    m->set_src(p);
    m->set_size(16);
  });
  CHECK(rd.status() == CUDA_ERROR_INVALID_VALUE);
  CHECK(b.htod(p, "abcd") == CUDA_ERROR_INVALID_VALUE);
  CHECK(a.dtoh(p, 4096) == pattern);
  auto own = a.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(p); });
  CHECK(own.status() == CUDA_SUCCESS);
  auto twice = a.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(p); });
  CHECK(twice.status() == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("stream and event ops round-trip", "[gpu][executor]") {
  client c{the_executor()};
  auto p = c.alloc(1 << 20);
  auto q = c.alloc(1 << 20);
  auto data = random_bytes(1 << 20, 3);
  auto status = [&](const std::function<void(proto::Op&)>& fill) {
    return c.run(fill).status();
  };
  REQUIRE(status([](proto::Op& op) {
            auto* s = op.mutable_stream_create();
            s->set_stream(10);
            s->set_flags(CU_STREAM_NON_BLOCKING);
          })
          == CUDA_SUCCESS);
  CHECK(status([](proto::Op& op) { op.mutable_stream_create()->set_stream(10); })
        == CUDA_ERROR_INVALID_VALUE);
  CHECK(status([](proto::Op& op) { op.mutable_stream_create()->set_stream(1); })
        == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(status([](proto::Op& op) { op.mutable_event_create()->set_event(20); })
          == CUDA_SUCCESS);
  REQUIRE(status([](proto::Op& op) { op.mutable_event_create()->set_event(21); })
          == CUDA_SUCCESS);
  auto record = [&](uint64_t event, uint64_t stream) {
    return status([&](proto::Op& op) {
      auto* e = op.mutable_event_record();
      e->set_event(event);
      e->set_stream(stream);
    });
  };
  CHECK(record(20, 10) == CUDA_SUCCESS);
  CHECK(c.htod(p, data, 10, true) == CUDA_SUCCESS);
  auto dtod = status([&](proto::Op& op) {
    auto* m = op.mutable_memcpy_dtod();
    m->set_dst(q);
    m->set_src(p);
    m->set_size(1 << 20);
    m->set_stream(10);
    m->set_async(true);
  });
  CHECK(dtod == CUDA_SUCCESS);
  CHECK(record(21, 10) == CUDA_SUCCESS);
  CHECK(status([](proto::Op& op) {
          auto* w = op.mutable_stream_wait_event();
          w->set_stream(0);
          w->set_event(21);
        })
        == CUDA_SUCCESS);
  CHECK(status([](proto::Op& op) {
          op.mutable_event_synchronize()->set_event(21);
        })
        == CUDA_SUCCESS);
  CHECK(status([](proto::Op& op) { op.mutable_event_query()->set_event(21); })
        == CUDA_SUCCESS);
  auto elapsed = c.run([](proto::Op& op) {
    auto* e = op.mutable_event_elapsed_time();
    e->set_start(20);
    e->set_end(21);
  });
  REQUIRE(elapsed.status() == CUDA_SUCCESS);
  CHECK(elapsed.elapsed_ms() >= 0.0f);
  CHECK(status([](proto::Op& op) {
          op.mutable_stream_synchronize()->set_stream(10);
        })
        == CUDA_SUCCESS);
  CHECK(status([](proto::Op& op) { op.mutable_stream_query()->set_stream(10); })
        == CUDA_SUCCESS);
  CHECK(c.dtoh(q, 1 << 20, 10, true) == data);
  for (uint64_t implicit : {0, 1, 2})
    CHECK(status([&](proto::Op& op) {
            op.mutable_stream_synchronize()->set_stream(implicit);
          })
          == CUDA_SUCCESS);
  CHECK(status([](proto::Op& op) { op.mutable_ctx_synchronize(); })
        == CUDA_SUCCESS);
  CHECK(status([](proto::Op& op) { op.mutable_stream_query()->set_stream(99); })
        == CUDA_ERROR_INVALID_HANDLE);
  CHECK(record(99, 10) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(record(20, 99) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(c.htod(p, "x", 99, true) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(status([](proto::Op& op) { op.mutable_event_destroy()->set_event(20); })
        == CUDA_SUCCESS);
  CHECK(status([](proto::Op& op) { op.mutable_event_query()->set_event(20); })
        == CUDA_ERROR_INVALID_HANDLE);
  CHECK(status([](proto::Op& op) { op.mutable_stream_destroy()->set_stream(10); })
        == CUDA_SUCCESS);
  CHECK(status([](proto::Op& op) { op.mutable_stream_destroy()->set_stream(10); })
        == CUDA_ERROR_INVALID_HANDLE);
  CHECK(status([](proto::Op& op) { op.mutable_stream_destroy()->set_stream(0); })
        == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("memsets of 8, 16 and 32 bits and 2D copies give the right bytes",
          "[gpu][executor]") {
  client c{the_executor()};
  auto p = c.alloc(64);
  auto memset = [&](uint64_t dst, uint32_t value, uint32_t es, uint64_t count,
                    uint64_t pitch = 0, uint64_t height = 0) {
    return c
      .run([&](proto::Op& op) {
        auto* m = op.mutable_memset();
        m->set_dst(dst);
        m->set_value(value);
        m->set_element_size(es);
        m->set_count(count);
        m->set_pitch(pitch);
        m->set_height(height);
      })
      .status();
  };
  REQUIRE(memset(p, 0, 1, 64) == CUDA_SUCCESS);
  REQUIRE(memset(p, 0xab, 1, 3) == CUDA_SUCCESS);
  REQUIRE(memset(p + 8, 0x1234, 2, 2) == CUDA_SUCCESS);
  REQUIRE(memset(p + 16, 0xdeadbeef, 4, 2) == CUDA_SUCCESS);
  auto bytes = c.dtoh(p, 32);
  std::string expected(32, '\0');
  expected[0] = expected[1] = expected[2] = '\xab';
  uint16_t v16 = 0x1234;
  uint32_t v32 = 0xdeadbeef;
  std::memcpy(&expected[8], &v16, 2);
  std::memcpy(&expected[10], &v16, 2);
  std::memcpy(&expected[16], &v32, 4);
  std::memcpy(&expected[20], &v32, 4);
  CHECK(bytes == expected);
  CHECK(memset(p, 0, 3, 4) == CUDA_ERROR_INVALID_VALUE);
  CHECK(memset(p + 60, 0, 4, 2) == CUDA_ERROR_INVALID_VALUE);

  // A pitched buffer: 12 bytes a row, 5 rows.
  auto pitched = c.run([](proto::Op& op) {
    auto* m = op.mutable_mem_alloc_pitch();
    m->set_width(12);
    m->set_height(5);
    m->set_element_size(4);
  });
  REQUIRE(pitched.status() == CUDA_SUCCESS);
  const uint64_t d = pitched.dptr();
  const uint64_t pitch = pitched.pitch();
  REQUIRE(pitch >= 12);
  REQUIRE(memset(d, 0, 1, pitch * 5) == CUDA_SUCCESS);
  REQUIRE(memset(d, 0x7f, 1, 12, pitch, 5) == CUDA_SUCCESS);
  auto whole = c.dtoh(d, pitch * 5);
  for (uint64_t row = 0; row < 5; ++row)
    for (uint64_t col = 0; col < pitch; ++col)
      CHECK(whole[row * pitch + col] == (col < 12 ? '\x7f' : '\0'));

  auto copy2d = [&](proto::Memcpy2D::Kind kind, uint64_t dst, uint64_t dpitch,
                    uint64_t src, uint64_t spitch, const std::string& data) {
    return c.run([&](proto::Op& op) {
      auto* m = op.mutable_memcpy_2d();
      m->set_kind(kind);
      m->set_dst(dst);
      m->set_dst_pitch(dpitch);
      m->set_src(src);
      m->set_src_pitch(spitch);
      m->set_width(12);
      m->set_height(5);
      m->set_data(data);
    });
  };
  auto dense = random_bytes(60, 4);
  REQUIRE(copy2d(proto::Memcpy2D::HTOD, d, pitch, 0, 0, dense).status()
          == CUDA_SUCCESS);
  auto back = copy2d(proto::Memcpy2D::DTOH, 0, 0, d, pitch, "");
  REQUIRE(back.status() == CUDA_SUCCESS);
  CHECK(back.data() == dense);
  whole = c.dtoh(d, pitch * 5);
  for (uint64_t row = 0; row < 5; ++row) {
    CHECK(whole.substr(row * pitch, 12) == dense.substr(row * 12, 12));
    CHECK(whole.substr(row * pitch + 12, pitch - 12)
          == std::string(pitch - 12, '\0'));
  }
  auto linear = c.alloc(60);
  REQUIRE(copy2d(proto::Memcpy2D::DTOD, linear, 12, d, pitch, "").status()
          == CUDA_SUCCESS);
  CHECK(c.dtoh(linear, 60) == dense);
  CHECK(copy2d(proto::Memcpy2D::HTOD, d, pitch, 0, 0, dense.substr(1)).status()
        == CUDA_ERROR_INVALID_VALUE);
  CHECK(copy2d(proto::Memcpy2D::DTOD, linear, 13, d, pitch, "").status()
        == CUDA_ERROR_INVALID_VALUE);
  CHECK(copy2d(proto::Memcpy2D::DTOH, 0, 0, d, 8, "").status()
        == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("replayed ops are skipped and not answered again", "[gpu][executor]") {
  auto& ex = the_executor();
  client c{ex};
  auto p = c.alloc(16);
  uint64_t base = c.next_seq();
  auto make = [&](uint64_t first, uint64_t last) {
    proto::OpBatch batch;
    batch.set_session(c.id());
    batch.set_session_secret(c.secret());
    for (uint64_t s = first; s <= last; ++s) {
      auto* op = batch.add_ops();
      op->set_seq(s);
      auto* m = op->mutable_memset();
      m->set_dst(p + (s - base));
      m->set_value(static_cast<uint32_t>(s - base + 1));
      m->set_element_size(1);
      m->set_count(1);
    }
    return batch;
  };
  auto first = ex.execute(make(base, base + 2));
  REQUIRE(first.results_size() == 3);
  CHECK(first.executed_through() == base + 2);
  auto replay = ex.execute(make(base + 1, base + 3));
  REQUIRE(replay.results_size() == 1);
  CHECK(replay.results(0).seq() == base + 3);
  CHECK(replay.results(0).status() == CUDA_SUCCESS);
  CHECK(replay.executed_through() == base + 3);
  c.skip_seq(4);
  auto bytes = c.dtoh(p, 4);
  CHECK(bytes == std::string("\x01\x02\x03\x04", 4));
  proto::OpBatch stranger;
  stranger.set_session(987654321);
  stranger.add_ops()->set_seq(1);
  stranger.mutable_ops(0)->mutable_ctx_synchronize();
  auto none = ex.execute(stranger);
  REQUIRE(none.results_size() == 1);
  CHECK(none.results(0).status() == CUDA_ERROR_INVALID_CONTEXT);
  CHECK_THAT(none.results(0).error(), Catch::Contains("987654321"));
}

TEST_CASE("limits round-trip and DeviceReset frees only the session's resources",
          "[gpu][executor]") {
  client c{the_executor()};
  auto get = c.run([](proto::Op& op) {
    op.mutable_ctx_get_limit()->set_limit(CU_LIMIT_STACK_SIZE);
  });
  REQUIRE(get.status() == CUDA_SUCCESS);
  CHECK(get.value() > 0);
  auto p = c.alloc(1024);
  REQUIRE(c.run([](proto::Op& op) {
             op.mutable_stream_create()->set_stream(7);
           })
            .status()
          == CUDA_SUCCESS);
  auto reset = c.run([](proto::Op& op) { op.mutable_device_reset(); });
  REQUIRE(reset.status() == CUDA_SUCCESS);
  CHECK(c.htod(p, "abcd") == CUDA_ERROR_INVALID_VALUE);
  CHECK(c.run([](proto::Op& op) {
           op.mutable_stream_synchronize()->set_stream(7);
         })
          .status()
        == CUDA_ERROR_INVALID_HANDLE);
  auto q = c.alloc(16);
  CHECK(c.htod(q, "abcd") == CUDA_SUCCESS);
  CHECK(c.dtoh(q, 4) == "abcd");
}

TEST_CASE("close_session gives the session's memory back", "[gpu][executor]") {
  auto& ex = the_executor();
  client observer{ex};
  {
    // Warm up the allocator so that the measurement sees only the session.
    client warm{ex};
    static_cast<void>(warm.alloc(1 << 20));
  }
  const uint64_t before = observer.free_memory();
  constexpr uint64_t big = uint64_t{1} << 30;
  {
    client c{ex};
    for (int i = 0; i < 4; ++i)
      static_cast<void>(c.alloc(big));
    CHECK(observer.free_memory() <= before - 4 * big);
    auto summaries = ex.sessions();
    auto it = std::find_if(summaries.begin(), summaries.end(),
                           [&](const auto& s) { return s.session() == c.id(); });
    REQUIRE(it != summaries.end());
    CHECK(it->allocated_bytes() == 4 * big);
  }
  CHECK(observer.free_memory() == before);
}

TEST_CASE("a captured kernel replays as a graph; capture rules come from the op",
          "[gpu][executor][capture]") {
  client c{the_executor()};
  constexpr int n = 1024;
  auto mod = load_kernels(c, 7);
  const auto& saxpb = mod.functions(0);
  auto dy = c.alloc(n * sizeof(float));
  std::vector<float> ones(n, 1.0f);
  REQUIRE(c.htod(dy, from_floats(ones)) == CUDA_SUCCESS);
  auto ok = [](const proto::OpResult& r) {
    INFO(r.error());
    return r.status() == CUDA_SUCCESS;
  };
  REQUIRE(ok(c.run([](proto::Op& op) {
    op.mutable_stream_create()->set_stream(0x5000);
    op.mutable_stream_create()->set_flags(CU_STREAM_NON_BLOCKING);
  })));
  auto begin = c.run([](proto::Op& op) {
    auto* b = op.mutable_stream_begin_capture();
    b->set_stream(0x5000);
    b->set_mode(CU_STREAM_CAPTURE_MODE_GLOBAL);
    b->set_graph(0x6000);
  });
  REQUIRE(ok(begin));
  CHECK(begin.capture_info().status() == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  // y = 2*y + 1, captured: nothing runs yet.
  auto launch = c.run([&](proto::Op& op) {
    auto* l = op.mutable_launch_kernel();
    l->set_module(7);
    l->set_function("saxpb");
    l->set_grid_x(n / 256);
    l->set_grid_y(1);
    l->set_grid_z(1);
    l->set_block_x(256);
    l->set_block_y(1);
    l->set_block_z(1);
    l->set_stream(0x5000);
    l->set_params(pack_saxpb(saxpb, dy, dy, 2.0f, 1.0f, n));
  });
  REQUIRE(ok(launch));
  // An op of a thread the capture rules bind: the driver refuses cuMemAlloc.
  auto bound_alloc = [](proto::Op& op) {
    op.mutable_mem_alloc()->set_size(256);
    op.set_capture_checked(true);
    op.add_prohibited_by(0x5000);
  };
  auto bound = c.run(bound_alloc);
  CHECK(bound.status() == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  auto info = c.run([](proto::Op& op) { op.mutable_stream_capture_info()->set_stream(0x5000); });
  REQUIRE(ok(info));
  CHECK(info.capture_info().status() == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
  auto end = c.run([](proto::Op& op) {
    op.mutable_stream_end_capture()->set_stream(0x5000);
    op.mutable_stream_end_capture()->set_graph(0x6000);
  });
  CHECK(end.status() == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  CHECK(end.capture_info().status() == CU_STREAM_CAPTURE_STATUS_NONE);

  // Again, with the executor's own (relaxed) allocation in the middle.
  REQUIRE(ok(c.run([](proto::Op& op) {
    auto* b = op.mutable_stream_begin_capture();
    b->set_stream(0x5000);
    b->set_mode(CU_STREAM_CAPTURE_MODE_GLOBAL);
    b->set_graph(0x6010);
  })));
  REQUIRE(ok(c.run([&](proto::Op& op) {
    auto* l = op.mutable_launch_kernel();
    l->set_module(7);
    l->set_function("saxpb");
    l->set_grid_x(n / 256);
    l->set_grid_y(1);
    l->set_grid_z(1);
    l->set_block_x(256);
    l->set_block_y(1);
    l->set_block_z(1);
    l->set_stream(0x5000);
    l->set_params(pack_saxpb(saxpb, dy, dy, 2.0f, 1.0f, n));
  })));
  auto relaxed = c.run([](proto::Op& op) { op.mutable_mem_alloc()->set_size(256); });
  CHECK(ok(relaxed));
  {
    // Meanwhile another session's app, bound by a global-mode capture of
    // its own, makes an unsafe call: refused, and only its capture breaks.
    client other{the_executor()};
    REQUIRE(ok(other.run([](proto::Op& op) {
      op.mutable_stream_create()->set_stream(0x5000);
      op.mutable_stream_create()->set_flags(CU_STREAM_NON_BLOCKING);
    })));
    REQUIRE(ok(other.run([](proto::Op& op) {
      auto* b = op.mutable_stream_begin_capture();
      b->set_stream(0x5000);
      b->set_mode(CU_STREAM_CAPTURE_MODE_GLOBAL);
      b->set_graph(0x6000);
    })));
    CHECK(other.run(bound_alloc).status() == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    auto theirs = other.run([](proto::Op& op) {
      op.mutable_stream_end_capture()->set_stream(0x5000);
      op.mutable_stream_end_capture()->set_graph(0x6000);
    });
    CHECK(theirs.status() == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
  }
  auto mine = c.run([](proto::Op& op) { op.mutable_stream_capture_info()->set_stream(0x5000); });
  REQUIRE(ok(mine));
  CHECK(mine.capture_info().status() == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  auto host_copy = c.htod(dy, std::string(16, '\0'), 0x5000, true);
  CHECK(host_copy == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  REQUIRE(ok(c.run([](proto::Op& op) {
    op.mutable_stream_end_capture()->set_stream(0x5000);
    op.mutable_stream_end_capture()->set_graph(0x6010);
  })));
  REQUIRE(ok(c.run([](proto::Op& op) {
    op.mutable_graph_instantiate()->set_graph(0x6010);
    op.mutable_graph_instantiate()->set_exec(0x6020);
  })));
  for (int i = 0; i < 10; ++i)
    REQUIRE(ok(c.run([](proto::Op& op) {
      op.mutable_graph_launch()->set_exec(0x6020);
      op.mutable_graph_launch()->set_stream(0x5000);
    })));
  REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_stream_synchronize()->set_stream(0x5000); })));
  auto y = to_floats(c.dtoh(dy, n * sizeof(float)));
  REQUIRE(y.size() == n);
  // 1 -> 3 -> 7 -> ... : 2^(k+1) - 1 after k replays.
  CHECK(y[0] == 2047.0f);
  CHECK(y[n - 1] == 2047.0f);
  REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_graph_exec_destroy()->set_exec(0x6020); })));
  REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_graph_destroy()->set_graph(0x6010); })));
}

TEST_CASE("no session's work, legal or refused, breaks another session's capture",
          "[gpu][executor][capture]") {
  auto ok = [](const proto::OpResult& r) {
    INFO(r.error());
    return r.status() == CUDA_SUCCESS;
  };
  constexpr int n = 1024;
  auto begin_capture = [&](client& c, uint64_t stream, uint64_t graph) {
    REQUIRE(ok(c.run([&](proto::Op& op) {
      auto* b = op.mutable_stream_begin_capture();
      b->set_stream(stream);
      b->set_mode(CU_STREAM_CAPTURE_MODE_GLOBAL);
      b->set_graph(graph);
    })));
  };
  auto launch = [&](client& c, const proto::FunctionInfo& f, uint64_t y, uint64_t stream) {
    return c.run([&](proto::Op& op) {
      auto* l = op.mutable_launch_kernel();
      l->set_module(7);
      l->set_function("saxpb");
      l->set_grid_x(n / 256);
      l->set_grid_y(1);
      l->set_grid_z(1);
      l->set_block_x(256);
      l->set_block_y(1);
      l->set_block_z(1);
      l->set_stream(stream);
      l->set_params(pack_saxpb(f, y, y, 2.0f, 1.0f, n));
    });
  };
  auto stream_create = [&](client& c, uint64_t stream, unsigned flags) {
    REQUIRE(ok(c.run([&](proto::Op& op) {
      op.mutable_stream_create()->set_stream(stream);
      op.mutable_stream_create()->set_flags(flags);
    })));
  };
  // B captures y = 2*y + 1 on a blocking stream and keeps capturing while
  // A does everything an app does, including what the capture rules refuse.
  client b{the_executor()};
  auto bmod = load_kernels(b, 7);
  auto by = b.alloc(n * sizeof(float));
  REQUIRE(b.htod(by, from_floats(std::vector<float>(n, 1.0f))) == CUDA_SUCCESS);
  stream_create(b, 0x5000, 0);
  begin_capture(b, 0x5000, 0x6000);
  REQUIRE(ok(launch(b, bmod.functions(0), by, 0x5000)));
  auto b_status = [&] {
    auto r = b.run([](proto::Op& op) { op.mutable_stream_capture_info()->set_stream(0x5000); });
    REQUIRE(ok(r));
    return r.capture_info().status();
  };
  auto bound = [](proto::Op& op) {
    op.set_capture_checked(true);
    op.add_prohibited_by(0x5000);
  };
  {
    client a{the_executor()};
    auto amod = load_kernels(a, 7);
    CHECK(b_status() == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    auto ay = a.alloc(n * sizeof(float));
    std::vector<std::pair<const char*, std::function<void()>>> steps = {
      {"launch on the legacy stream", [&] { CHECK(ok(launch(a, amod.functions(0), ay, 0))); }},
      {"sync copies, memset and free", [&] {
         auto p = a.alloc(4096);
         CHECK(a.htod(p, std::string(4096, 'x')) == CUDA_SUCCESS);
         CHECK(a.dtoh(p, 4096) == std::string(4096, 'x'));
         CHECK(ok(a.run([&](proto::Op& op) {
           op.mutable_memset()->set_dst(p);
           op.mutable_memset()->set_value(0);
           op.mutable_memset()->set_count(4096);
           op.mutable_memset()->set_element_size(1);
         })));
         CHECK(ok(a.run([&](proto::Op& op) { op.mutable_mem_free()->set_dptr(p); })));
       }},
      {"device sync", [&] { CHECK(ok(a.run([](proto::Op& op) { op.mutable_ctx_synchronize(); }))); }},
      {"streams and events", [&] {
         stream_create(a, 0x5100, 0);
         CHECK(ok(a.run([](proto::Op& op) { op.mutable_event_create()->set_event(0x7000); })));
         CHECK(ok(a.run([](proto::Op& op) {
           op.mutable_event_record()->set_event(0x7000);
           op.mutable_event_record()->set_stream(0x5100);
         })));
         CHECK(ok(a.run([](proto::Op& op) { op.mutable_event_synchronize()->set_event(0x7000); })));
         CHECK(ok(a.run([](proto::Op& op) { op.mutable_stream_synchronize()->set_stream(0x5100); })));
       }},
      {"own capture: judged allocation refused", [&] {
         stream_create(a, 0x5000, 0);
         begin_capture(a, 0x5000, 0x6000);
         CHECK(ok(launch(a, amod.functions(0), ay, 0x5000)));
         CHECK(a.run([&](proto::Op& op) {
                  op.mutable_mem_alloc()->set_size(256);
                  bound(op);
                }).status() == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
       }},
      {"own capture: judged sync copy", [&] {
         static_cast<void>(a.run([&](proto::Op& op) {
           op.mutable_memcpy_htod()->set_dst(ay);
           op.mutable_memcpy_htod()->set_data(std::string(16, 'y'));
           bound(op);
         }));
       }},
      {"own capture: judged device sync", [&] {
         static_cast<void>(a.run([&](proto::Op& op) {
           op.mutable_ctx_synchronize();
           bound(op);
         }));
       }},
      {"own capture: query and sync of the capturing stream", [&] {
         static_cast<void>(a.run([](proto::Op& op) { op.mutable_stream_query()->set_stream(0x5000); }));
         static_cast<void>(
           a.run([](proto::Op& op) { op.mutable_stream_synchronize()->set_stream(0x5000); }));
       }},
      {"own capture: event query of a captured event", [&] {
         static_cast<void>(a.run([](proto::Op& op) {
           op.mutable_event_record()->set_event(0x7000);
           op.mutable_event_record()->set_stream(0x5000);
         }));
         static_cast<void>(a.run([](proto::Op& op) { op.mutable_event_query()->set_event(0x7000); }));
       }},
      {"own capture: legacy work while a blocking stream captures", [&] {
         static_cast<void>(launch(a, amod.functions(0), ay, 0));
         static_cast<void>(a.run([](proto::Op& op) {
           op.mutable_stream_end_capture()->set_stream(0x5000);
           op.mutable_stream_end_capture()->set_graph(0x6000);
         }));
       }},
      {"a graph of its own, replayed", [&] {
         begin_capture(a, 0x5100, 0x6100);
         CHECK(ok(launch(a, amod.functions(0), ay, 0x5100)));
         CHECK(ok(a.run([](proto::Op& op) {
           op.mutable_stream_end_capture()->set_stream(0x5100);
           op.mutable_stream_end_capture()->set_graph(0x6100);
         })));
         CHECK(ok(a.run([](proto::Op& op) {
           op.mutable_graph_instantiate()->set_graph(0x6100);
           op.mutable_graph_instantiate()->set_exec(0x6110);
         })));
         CHECK(ok(a.run([](proto::Op& op) {
           op.mutable_graph_launch()->set_exec(0x6110);
           op.mutable_graph_launch()->set_stream(0x5100);
         })));
         CHECK(ok(a.run([](proto::Op& op) { op.mutable_ctx_synchronize(); })));
         CHECK(ok(a.run([](proto::Op& op) { op.mutable_graph_mem_trim(); })));
       }},
      {"module unload", [&] {
         CHECK(ok(a.run([](proto::Op& op) { op.mutable_module_unload()->set_module(7); })));
       }},
    };
    for (auto& [name, step] : steps) {
      INFO("after A's " << name);
      step();
      CHECK(b_status() == CU_STREAM_CAPTURE_STATUS_ACTIVE);
    }
  }
  INFO("after A's session closed");
  CHECK(b_status() == CU_STREAM_CAPTURE_STATUS_ACTIVE);
  REQUIRE(ok(b.run([](proto::Op& op) {
    op.mutable_stream_end_capture()->set_stream(0x5000);
    op.mutable_stream_end_capture()->set_graph(0x6000);
  })));
  REQUIRE(ok(b.run([](proto::Op& op) {
    op.mutable_graph_instantiate()->set_graph(0x6000);
    op.mutable_graph_instantiate()->set_exec(0x6010);
  })));
  for (int i = 0; i < 3; ++i)
    REQUIRE(ok(b.run([](proto::Op& op) {
      op.mutable_graph_launch()->set_exec(0x6010);
      op.mutable_graph_launch()->set_stream(0x5000);
    })));
  REQUIRE(ok(b.run([](proto::Op& op) { op.mutable_stream_synchronize()->set_stream(0x5000); })));
  auto y = to_floats(b.dtoh(by, n * sizeof(float)));
  REQUIRE(y.size() == n);
  CHECK(y[0] == 15.0f); // 1 -> 3 -> 7 -> 15
  CHECK(y[n - 1] == 15.0f);
}

namespace {

/// A way back to the client that records each call and, while closed,
/// holds it until its session ends (a client that does not answer).
struct gated_port final : gleam::executor::host_call_port {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = true;
  std::vector<std::pair<uint64_t, uint64_t>> calls; // (session, callback)
  std::set<uint64_t> ended;

  void call(uint64_t session, uint64_t callback) override {
    std::unique_lock<std::mutex> lock{mutex};
    calls.emplace_back(session, callback);
    changed.wait(lock, [&] { return open || ended.count(session) != 0; });
  }
  /// Host ends of copies, as the client holds them.
  gleam::test::client_bytes client;
  bool copy(uint64_t, uint64_t copy, uint64_t offset, const std::string& to_client,
            uint64_t want, std::string* from_client) override {
    std::lock_guard<std::mutex> guard{mutex};
    return client.serve(copy, offset, to_client, want, from_client);
  }
  void end(uint64_t session) override {
    std::lock_guard<std::mutex> guard{mutex};
    ended.insert(session);
    changed.notify_all();
  }
  size_t count() {
    std::lock_guard<std::mutex> guard{mutex};
    return calls.size();
  }
};

} // namespace

TEST_CASE("host nodes replay on the driver's thread through the port, in order; closing a "
          "session frees a host node that waits for its client",
          "[gpu][executor][capture]") {
  auto port = std::make_shared<gated_port>();
  the_executor().set_host_calls(port);
  auto ok = [](const proto::OpResult& r) {
    INFO(r.error());
    return r.status() == CUDA_SUCCESS;
  };
  uint64_t session = 0;
  {
    client c{the_executor()};
    session = c.id();
    REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(0x5000); })));
    REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_graph_create()->set_graph(0x6000); })));
    REQUIRE(ok(c.run([](proto::Op& op) {
      auto* a = op.mutable_graph_add_host_node();
      a->set_graph(0x6000);
      a->set_node(0x7000);
      a->set_callback(5);
    })));
    REQUIRE(ok(c.run([](proto::Op& op) {
      auto* a = op.mutable_graph_add_host_node();
      a->set_graph(0x6000);
      a->set_node(0x7010);
      a->add_dependencies(0x7000);
      a->set_callback(6);
    })));
    REQUIRE(ok(c.run([](proto::Op& op) {
      op.mutable_graph_instantiate()->set_graph(0x6000);
      op.mutable_graph_instantiate()->set_exec(0x6100);
    })));
    auto launch = [](proto::Op& op) {
      op.mutable_graph_launch()->set_exec(0x6100);
      op.mutable_graph_launch()->set_stream(0x5000);
    };
    for (int i = 0; i < 100; ++i)
      REQUIRE(ok(c.run(launch)));
    REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_stream_synchronize()->set_stream(0x5000); })));
    {
      std::lock_guard<std::mutex> guard{port->mutex};
      REQUIRE(port->calls.size() == 200);
      for (size_t i = 0; i < port->calls.size(); ++i) {
        CHECK(port->calls[i].first == session);
        CHECK(port->calls[i].second == (i % 2 == 0 ? 5u : 6u));
      }
      port->open = false;
    }
    // The client stops answering: the next replay waits in its first node.
    REQUIRE(ok(c.run(launch)));
    for (int i = 0; i < 500 && port->count() < 201; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    CHECK(port->count() == 201);
  } // closes the session: it must end the port's wait, not hang on it
  std::lock_guard<std::mutex> guard{port->mutex};
  CHECK(port->ended.count(session) == 1);
  CHECK(port->calls.size() == 202); // the second node ran once its session ended
  the_executor().set_host_calls(nullptr);
}

TEST_CASE("memcpy nodes with host ends carry the client's bytes at every replay, in graphs "
          "and captures",
          "[gpu][executor][capture]") {
  auto port = std::make_shared<gated_port>();
  the_executor().set_host_calls(port);
  auto ok = [](const proto::OpResult& r) {
    INFO(r.error());
    return r.status() == CUDA_SUCCESS;
  };
  {
    client c{the_executor()};
    auto dev = c.run([](proto::Op& op) { op.mutable_mem_alloc()->set_size(1 << 20); }).dptr();
    REQUIRE(dev != 0);
    // 1 MiB of host bytes: one request each way at every replay.
    constexpr uint64_t n = 1 << 20;
    auto copy_params = [&](proto::MemcpyNodeParams* p, uint64_t host_copy, bool to_device) {
      p->set_dst(dev);
      p->set_src(dev);
      p->set_dst_pitch(n);
      p->set_src_pitch(n);
      p->set_width(n);
      p->set_height(1);
      p->set_depth(1);
      p->set_host_copy(host_copy);
      p->set_to_device(to_device);
    };
    REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_stream_create()->set_stream(0x5000); })));
    REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_graph_create()->set_graph(0x6000); })));
    REQUIRE(ok(c.run([&](proto::Op& op) {
      auto* a = op.mutable_graph_add_memcpy_node();
      a->set_graph(0x6000);
      a->set_node(0x7000);
      copy_params(a->mutable_copy(), 1, true);
    })));
    REQUIRE(ok(c.run([&](proto::Op& op) {
      auto* a = op.mutable_graph_add_memcpy_node();
      a->set_graph(0x6000);
      a->set_node(0x7010);
      a->add_dependencies(0x7000);
      copy_params(a->mutable_copy(), 2, false);
    })));
    REQUIRE(ok(c.run([](proto::Op& op) {
      op.mutable_graph_instantiate()->set_graph(0x6000);
      op.mutable_graph_instantiate()->set_exec(0x6100);
    })));
    for (char round : {'a', 'b'}) {
      {
        std::lock_guard<std::mutex> guard{port->mutex};
        port->client.bytes[1] = std::string(n, round);
        port->client.bytes.erase(2);
      }
      REQUIRE(ok(c.run([](proto::Op& op) {
        op.mutable_graph_launch()->set_exec(0x6100);
        op.mutable_graph_launch()->set_stream(0x5000);
      })));
      REQUIRE(
        ok(c.run([](proto::Op& op) { op.mutable_stream_synchronize()->set_stream(0x5000); })));
      std::lock_guard<std::mutex> guard{port->mutex};
      CHECK(port->client.bytes[2] == std::string(n, round));
    }
    // The same two copies captured on the stream.
    REQUIRE(ok(c.run([](proto::Op& op) {
      auto* b = op.mutable_stream_begin_capture();
      b->set_stream(0x5000);
      b->set_mode(CU_STREAM_CAPTURE_MODE_GLOBAL);
      b->set_graph(0x6200);
    })));
    for (bool to_device : {true, false})
      REQUIRE(ok(c.run([&](proto::Op& op) {
        op.mutable_stream_host_copy()->set_stream(0x5000);
        copy_params(op.mutable_stream_host_copy()->mutable_copy(), to_device ? 3 : 4, to_device);
      })));
    REQUIRE(ok(c.run([](proto::Op& op) {
      op.mutable_stream_end_capture()->set_stream(0x5000);
      op.mutable_stream_end_capture()->set_graph(0x6200);
    })));
    REQUIRE(ok(c.run([](proto::Op& op) {
      op.mutable_graph_instantiate()->set_graph(0x6200);
      op.mutable_graph_instantiate()->set_exec(0x6300);
    })));
    {
      std::lock_guard<std::mutex> guard{port->mutex};
      port->client.bytes[3] = std::string(n, 'c');
    }
    REQUIRE(ok(c.run([](proto::Op& op) {
      op.mutable_graph_launch()->set_exec(0x6300);
      op.mutable_graph_launch()->set_stream(0x5000);
    })));
    REQUIRE(ok(c.run([](proto::Op& op) { op.mutable_stream_synchronize()->set_stream(0x5000); })));
    std::lock_guard<std::mutex> guard{port->mutex};
    CHECK(port->client.bytes[4] == std::string(n, 'c'));
  }
  the_executor().set_host_calls(nullptr);
}
