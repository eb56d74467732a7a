// Tests of what NVIDIA's static runtime needs from Gleam's libcuda.so.1:
// cuGetExportTable's tables (interpose/driver/export_tables.cpp), the MD2
// digest of its integrity check, the legacy names and the versioned lookup.
// No GPU, no server.
#include "tests/support/files.hpp"
#include "tests/support/gpu_probe.hpp"
#include "tests/support/process.hpp"

#include <catch2/catch.hpp>
#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "interpose/driver/md2.hpp"

namespace {

using gleam::test::build_path;
using gleam::test::lines_of;
using gleam::test::read_file;
using gleam::test::source_path;

void* driver() {
  static void* lib =
    dlopen(build_path("lib/driver/libcuda.so.1").c_str(), RTLD_NOW | RTLD_LOCAL);
  return lib;
}

template <class F>
F sym(const char* name) {
  return reinterpret_cast<F>(dlsym(driver(), name));
}

using export_table_t = CUresult (*)(const void**, const CUuuid*);
using get_proc_t = CUresult (*)(const char*, void**, int, cuuint64_t,
                                CUdriverProcAddressQueryResult*);
using get_proc_v1_t = CUresult (*)(const char*, void**, int, cuuint64_t);

CUuuid uuid(std::initializer_list<unsigned char> bytes) {
  CUuuid id{};
  std::memcpy(id.bytes, bytes.begin(), 16);
  return id;
}

const CUuuid cudart_interface = uuid({0x6B, 0xD5, 0xFB, 0x6C, 0x5B, 0xF4, 0xE7, 0x4A, 0x89, 0x87,
                                      0xD9, 0x39, 0x12, 0xFD, 0x9D, 0xF9});
const CUuuid context_storage = uuid({0xC6, 0x93, 0x33, 0x6E, 0x11, 0x21, 0xDF, 0x11, 0xA8, 0xC3,
                                     0x68, 0xF3, 0x55, 0xD8, 0x95, 0x93});
const CUuuid integrity_check = uuid({0xD4, 0x08, 0x20, 0x55, 0xBD, 0xE6, 0x70, 0x4B, 0x8D, 0x34,
                                     0xBA, 0x12, 0x3C, 0x66, 0xE1, 0xF2});
const CUuuid tools_tls = uuid({0x42, 0xD8, 0x5A, 0x81, 0x23, 0xF6, 0xCB, 0x47, 0x82, 0x98, 0xF6,
                               0xE7, 0x8A, 0x3A, 0xEC, 0xDC});

std::string hex(const gleam::interpose::driver::md2_digest& d) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (auto b : d) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

} // namespace

TEST_CASE("MD2 gives RFC 1319's test digests", "[interpose][driver]") {
  using gleam::interpose::driver::md2;
  CHECK(hex(md2("")) == "8350e5a3e24c153df2275c9f80692773");
  CHECK(hex(md2("a")) == "32ec01ec4a6dac72c0ab96fb34c0b5d1");
  CHECK(hex(md2("abc")) == "da853b0d3f88d99b30283a69e6ded6bb");
  CHECK(hex(md2("message digest")) == "ab4f496bfb2a530b219ff33031fe06b0");
  CHECK(hex(md2("abcdefghijklmnopqrstuvwxyz")) == "4e8ddff3650292ab5a4108c3aa47940b");
  CHECK(hex(md2("12345678901234567890123456789012345678901234567890123456789012345678901234567890"))
        == "d5976f79d83d3a0dc9806c3c66f3efd8");
}

TEST_CASE("the driver spec names exactly the vendor's libcuda.so.1 exports",
          "[interpose][driver][spec]") {
  std::set<std::string> vendor;
  for (const auto& line : lines_of(read_file(source_path("interpose/spec/libcuda.so.1.symbols"))))
    if (!line.empty())
      vendor.insert(line);
  std::set<std::string> spec;
  for (const auto& line : lines_of(read_file(source_path("interpose/spec/cuda.spec"))))
    if (line.rfind("fn ", 0) == 0)
      spec.insert(line.substr(3));
  CHECK(vendor.size() == 637);
  CHECK(spec == vendor);
}

TEST_CASE("cuGetExportTable hands out the runtime's tables and refuses unknown ids",
          "[interpose][driver]") {
  REQUIRE(driver() != nullptr);
  auto get = sym<export_table_t>("cuGetExportTable");
  REQUIRE(get != nullptr);
  const void* table = nullptr;
  CHECK(get(nullptr, &cudart_interface) == CUDA_ERROR_INVALID_VALUE);
  CHECK(get(&table, nullptr) == CUDA_ERROR_INVALID_VALUE);

  auto unknown = uuid({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  table = &table;
  CHECK(get(&table, &unknown) == CUDA_ERROR_NOT_FOUND);
  CHECK(table == nullptr);

  // Most tables start with their size in bytes.
  REQUIRE(get(&table, &cudart_interface) == CUDA_SUCCESS);
  auto* slots = static_cast<void* const*>(table);
  CHECK(reinterpret_cast<uintptr_t>(slots[0]) == 13 * sizeof(void*));

  SECTION("a slot of unknown meaning fails closed") {
    REQUIRE(get(&table, &tools_tls) == CUDA_SUCCESS);
    auto* tls = static_cast<void* const*>(table);
    REQUIRE(reinterpret_cast<uintptr_t>(tls[0]) == 4 * sizeof(void*));
    auto unknown_slot = reinterpret_cast<CUresult (*)()>(tls[1]);
    CHECK(unknown_slot() == CUDA_ERROR_NOT_SUPPORTED);
  }

  SECTION("context-local storage keeps a value per context and key") {
    REQUIRE(get(&table, &context_storage) == CUDA_SUCCESS);
    auto* cls = static_cast<void* const*>(table);
    using put_t = CUresult (*)(CUcontext, void*, void*, void (*)(CUcontext, void*, void*));
    using del_t = CUresult (*)(CUcontext, void*);
    using get_t = CUresult (*)(void**, CUcontext, void*);
    auto put = reinterpret_cast<put_t>(cls[0]);
    auto del = reinterpret_cast<del_t>(cls[1]);
    auto fetch = reinterpret_cast<get_t>(cls[2]);
    int a = 0, b = 0, key = 0, value1 = 0, value2 = 0;
    auto ctx_a = reinterpret_cast<CUcontext>(&a);
    auto ctx_b = reinterpret_cast<CUcontext>(&b);
    void* out = nullptr;
    CHECK(fetch(&out, ctx_a, &key) != CUDA_SUCCESS);
    CHECK(put(ctx_a, &key, &value1, nullptr) == CUDA_SUCCESS);
    CHECK(put(ctx_b, &key, &value2, nullptr) == CUDA_SUCCESS);
    CHECK(fetch(&out, ctx_a, &key) == CUDA_SUCCESS);
    CHECK(out == &value1);
    CHECK(fetch(&out, ctx_b, &key) == CUDA_SUCCESS);
    CHECK(out == &value2);
    CHECK(del(ctx_a, &key) == CUDA_SUCCESS);
    CHECK(fetch(&out, ctx_a, &key) != CUDA_SUCCESS);
    CHECK(fetch(&out, ctx_b, &key) == CUDA_SUCCESS);
    CHECK(del(ctx_b, &key) == CUDA_SUCCESS);
    CHECK(del(ctx_b, &key) != CUDA_SUCCESS);
  }

  SECTION("the integrity check answers the fixed values of its first versions") {
    REQUIRE(get(&table, &integrity_check) == CUDA_SUCCESS);
    auto* ic = static_cast<void* const*>(table);
    auto check = reinterpret_cast<CUresult (*)(uint32_t, uint64_t, uint64_t*)>(ic[1]);
    uint64_t result[2] = {};
    CHECK(check(10, 1700000000, result) == CUDA_SUCCESS);
    CHECK(result[0] == 0x3341181C03CB675CULL);
    CHECK(result[1] == 0x8ED383AA1F4CD1E8ULL);
    CHECK(check(21, 1700000000, result) == CUDA_SUCCESS);
    CHECK(result[0] == 0x1841181C03CB675CULL);
    CHECK(check(3, 0, nullptr) == CUDA_ERROR_INVALID_VALUE);
  }
}

TEST_CASE("cuGetProcAddress gives each caller the ABI of its CUDA version",
          "[interpose][driver]") {
  REQUIRE(driver() != nullptr);
  auto get_proc = sym<get_proc_t>("cuGetProcAddress_v2");
  REQUIRE(get_proc != nullptr);
  void* fn = nullptr;
  auto status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  auto at = [&](const char* name, int version) {
    fn = nullptr;
    REQUIRE(get_proc(name, &fn, version, 0, &status) == CUDA_SUCCESS);
    CHECK(status == CU_GET_PROC_ADDRESS_SUCCESS);
    return fn;
  };
  // cudaTypedefs.h: cuCtxCreate v2000, v3020 (_v2), v11040 (_v3), v12050 (_v4).
  CHECK(at("cuCtxCreate", 2000) == dlsym(driver(), "cuCtxCreate"));
  CHECK(at("cuCtxCreate", 11000) == dlsym(driver(), "cuCtxCreate_v2"));
  CHECK(at("cuCtxCreate", 12000) == dlsym(driver(), "cuCtxCreate_v3"));
  CHECK(at("cuCtxCreate", 13000) == dlsym(driver(), "cuCtxCreate_v4"));
  // A capture begun by a CUDA 10.0 caller has no mode argument.
  CHECK(at("cuStreamBeginCapture", 10000) == dlsym(driver(), "cuStreamBeginCapture"));
  CHECK(at("cuStreamBeginCapture", 10010) == dlsym(driver(), "cuStreamBeginCapture_v2"));
  CHECK(at("cuGetProcAddress", 11030) == dlsym(driver(), "cuGetProcAddress"));
  CHECK(at("cuGetProcAddress", 12000) == reinterpret_cast<void*>(get_proc));
  CHECK(at("cuGetExportTable", 3000) == dlsym(driver(), "cuGetExportTable"));

  // The v1 cuGetProcAddress (no status argument) finds the same functions.
  auto v1 = sym<get_proc_v1_t>("cuGetProcAddress");
  REQUIRE(v1 != nullptr);
  fn = nullptr;
  CHECK(v1("cuMemAlloc", &fn, 13000, 0) == CUDA_SUCCESS);
  CHECK(fn == dlsym(driver(), "cuMemAlloc_v2"));
  CHECK(v1("cuNoSuchFunction", &fn, 13000, 0) == CUDA_ERROR_NOT_FOUND);

  // Legacy names whose ABI is the current one answer as the current one.
  auto legacy_elapsed = sym<CUresult (*)(float*, CUevent, CUevent)>("cuEventElapsedTime");
  REQUIRE(legacy_elapsed != nullptr);
  CHECK(legacy_elapsed(nullptr, nullptr, nullptr) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("cuLink* links PTX into a cubin for the given target on this machine; bad PTX is "
          "refused with its log",
          "[interpose][driver]") {
  REQUIRE(driver() != nullptr);
  if (dlopen("libnvJitLink.so.13", RTLD_NOW | RTLD_NOLOAD) == nullptr
      && dlopen("/usr/local/cuda/lib64/libnvJitLink.so.13", RTLD_NOW | RTLD_LOCAL) == nullptr) {
    WARN("no libnvJitLink.so.13 on this machine: nothing to link with");
    return;
  }
  auto create = sym<decltype(&cuLinkCreate_v2)>("cuLinkCreate_v2");
  auto add = sym<decltype(&cuLinkAddData_v2)>("cuLinkAddData_v2");
  auto complete = sym<decltype(&cuLinkComplete)>("cuLinkComplete");
  auto destroy = sym<decltype(&cuLinkDestroy)>("cuLinkDestroy");
  auto legacy_create = sym<decltype(&cuLinkCreate_v2)>("cuLinkCreate");
  REQUIRE((create && add && complete && destroy && legacy_create));

  // A kernel that calls a device function defined in a second PTX input.
  const char* kernel_ptx = R"(.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 r) twice(.param .b32 x);
.visible .entry scale(.param .u64 out) {
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, 21;
  { .param .b32 x; st.param.b32 [x], %r1; .param .b32 r;
    call.uni (r), twice, (x); ld.param.b32 %r2, [r]; }
  st.global.u32 [%rd2], %r2;
  ret;
}
)";
  const char* helper_ptx = R"(.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 r) twice(.param .b32 x) {
  .reg .b32 %r<3>;
  ld.param.b32 %r1, [x];
  add.s32 %r2, %r1, %r1;
  st.param.b32 [r], %r2;
  ret;
}
)";
  char info[4096] = {}, error[4096] = {};
  CUjit_option options[] = {CU_JIT_TARGET, CU_JIT_INFO_LOG_BUFFER,
                            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {reinterpret_cast<void*>(uintptr_t{CU_TARGET_COMPUTE_90}), info,
                    reinterpret_cast<void*>(uintptr_t{sizeof(info)}), error,
                    reinterpret_cast<void*>(uintptr_t{sizeof(error)})};
  CUlinkState state = nullptr;
  REQUIRE(create(5, options, values, &state) == CUDA_SUCCESS);
  CHECK(add(state, CU_JIT_INPUT_PTX, const_cast<char*>(kernel_ptx), 0, "kernel.ptx", 0, nullptr,
            nullptr)
        == CUDA_SUCCESS);
  CHECK(add(state, CU_JIT_INPUT_PTX, const_cast<char*>(helper_ptx), std::strlen(helper_ptx) + 1,
            "helper.ptx", 0, nullptr, nullptr)
        == CUDA_SUCCESS);
  void* cubin = nullptr;
  size_t size = 0;
  INFO("error log: " << error);
  REQUIRE(complete(state, &cubin, &size) == CUDA_SUCCESS);
  REQUIRE(size > 64);
  CHECK(std::memcmp(cubin, "\x7f" "ELF", 4) == 0);
  // The linked image defines the kernel (its symbol name is in the ELF).
  std::string image(static_cast<const char*>(cubin), size);
  CHECK(image.find("scale") != std::string::npos);
  CHECK(destroy(state) == CUDA_SUCCESS);

  // PTX that does not compile: CUDA_ERROR_INVALID_PTX, with the reason in
  // the error log.
  // The sizes went back into the option values; a new link gets new ones.
  CHECK(reinterpret_cast<uintptr_t>(values[4]) == std::strlen(error) + 1);
  values[2] = reinterpret_cast<void*>(uintptr_t{sizeof(info)});
  values[4] = reinterpret_cast<void*>(uintptr_t{sizeof(error)});
  std::memset(error, 0, sizeof(error));
  REQUIRE(legacy_create(5, options, values, &state) == CUDA_SUCCESS);
  const char* broken = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k( {\n";
  CHECK(add(state, CU_JIT_INPUT_PTX, const_cast<char*>(broken), 0, "broken.ptx", 0, nullptr,
            nullptr)
        == CUDA_SUCCESS);
  CHECK(complete(state, &cubin, &size) == CUDA_ERROR_INVALID_PTX);
  CHECK_THAT(std::string{error}, Catch::Contains("broken.ptx"));
  CHECK(reinterpret_cast<uintptr_t>(values[4]) == std::strlen(error) + 1);
  CHECK(destroy(state) == CUDA_SUCCESS);
  CHECK(destroy(nullptr) == CUDA_ERROR_INVALID_HANDLE);
  CHECK(add(nullptr, CU_JIT_INPUT_PTX, const_cast<char*>(kernel_ptx), 0, "x", 0, nullptr,
            nullptr)
        == CUDA_ERROR_INVALID_HANDLE);
}

TEST_CASE("every implemented driver function has its per-thread default stream variants",
          "[interpose][driver][spec]") {
  std::map<std::string, std::string> classes;
  std::string name;
  for (const auto& line : lines_of(read_file(source_path("interpose/spec/cuda.spec")))) {
    if (line.rfind("fn ", 0) == 0)
      name = line.substr(3);
    else if (line.rfind("  class ", 0) == 0)
      classes[name] = line.substr(8);
  }
  int variants = 0;
  for (const auto& [fn, cls] : classes) {
    for (const char* suffix : {"_ptsz", "_ptds"}) {
      auto i = classes.find(fn + suffix);
      if (i == classes.end() || cls != "manual")
        continue;
      INFO(fn + suffix);
      CHECK(i->second == "manual");
      ++variants;
    }
  }
  CHECK(variants > 40);
}
