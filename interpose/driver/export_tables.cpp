// cuGetExportTable: the driver's private tables that NVIDIA's runtime asks
// for by UUID. A program linked with the static runtime (plain `nvcc x.cu`)
// carries its own cudart, which loads this libcuda.so.1 and will not start
// without them: it registers its fatbins through CUDART_INTERFACE, keeps its
// per-context state in CONTEXT_LOCAL_STORAGE and checks the driver with
// INTEGRITY_CHECK. The tables, their slots and the check's inputs are not
// documented; the layout here is what the runtime is known to call (as
// ZLUDA and other driver replacements found). A slot whose meaning is not
// known logs "export table <name> slot <n>" once and returns
// CUDA_ERROR_NOT_SUPPORTED; an unknown table id gets CUDA_ERROR_NOT_FOUND.
#include "interpose/driver/common.hpp"

#include <pthread.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "interpose/driver/md2.hpp"
#include "interpose/driver/report.hpp"
#include "interpose/fatbin/fatbin.hpp"

namespace {

using uuid_bytes = std::array<unsigned char, 16>;

/// Logs once per (table, slot) that the runtime called a slot Gleam does
/// not know.
void report_slot(const char* table, int slot) {
  auto what = std::string{"export table "} + table + " slot " + std::to_string(slot);
  gleam_driver_report_unsupported(what.c_str(), "the static CUDA runtime asked for it");
}

/// A function for slot `Slot` of table `Name` whose meaning is unknown. Its
/// arguments are ignored: under the SysV ABI the caller owns them.
template <const char* Name, int Slot>
CUresult unknown_slot() {
  report_slot(Name, Slot);
  return CUDA_ERROR_NOT_SUPPORTED;
}

/// Slot 0 of most tables: the table's size in bytes.
template <size_t N>
void* size_entry() {
  return reinterpret_cast<void*>(N * sizeof(void*));
}

/// Fills slots [first, N) that are still null with unknown_slot<Name, i>.
template <const char* Name, size_t N, size_t I = 0>
void fill_unknown(void* (&table)[N], size_t first) {
  if constexpr (I < N) {
    if (I >= first && table[I] == nullptr)
      table[I] = reinterpret_cast<void*>(&unknown_slot<Name, static_cast<int>(I)>);
    fill_unknown<Name, N, I + 1>(table, first);
  }
}

// --- CUDART_INTERFACE: module registration and the primary context -------

/// The runtime's fatbin wrapper (__fatBinC_Wrapper_t).
struct fatbin_wrapper {
  uint32_t magic;
  uint32_t version;
  const void* data;
  const void* filename_or_fatbins;
};

CUresult module_from_wrapper(CUmodule* module, const fatbin_wrapper* wrapper) {
  if (module == nullptr || wrapper == nullptr || wrapper->data == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (wrapper->magic != gleam::interpose::fatbin::wrapper_magic)
    return CUDA_ERROR_INVALID_IMAGE;
  // Version 2 wrappers come from relocatable device code (nvcc -rdc): their
  // image must be linked with others first, which Gleam does not do.
  if (wrapper->version != 1) {
    report_slot("CUDART_INTERFACE (relocatable device code, fatbin wrapper version 2)", 1);
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  return cuModuleLoadData(module, wrapper->data);
}

CUresult cudart_module_from_cubin(CUmodule* module, const fatbin_wrapper* wrapper) {
  return module_from_wrapper(module, wrapper);
}

CUresult cudart_primary_context(CUcontext* ctx, CUdevice dev) {
  return cuDevicePrimaryCtxRetain(ctx, dev);
}

CUresult cudart_module_from_cubin_ext1(CUmodule* module, const fatbin_wrapper* wrapper,
                                       void*, void*, unsigned) {
  return module_from_wrapper(module, wrapper);
}

void cudart_hint(size_t) {}

CUresult cudart_module_from_cubin_ext2(const fatbin_wrapper* wrapper, CUmodule* module,
                                       void*, void*, unsigned) {
  return module_from_wrapper(module, wrapper);
}

/// The runtime asks the driver to load its JIT compilers; PTX is compiled
/// by the server's driver, so there is nothing to load here.
CUresult cudart_load_compilers() {
  return CUDA_SUCCESS;
}

constexpr char cudart_interface_name[] = "CUDART_INTERFACE";
void* cudart_interface[13] = {};

// --- TOOLS_TLS and TOOLS_RUNTIME_CALLBACK_HOOKS --------------------------

constexpr char tools_tls_name[] = "TOOLS_TLS";
void* tools_tls[4] = {};

/// Buffers the runtime fills with its tool callbacks; no tool reads them
/// under Gleam. Sized for 8-byte entries whatever unit the count is in.
uint64_t hook_buffer1[1024];
uint64_t hook_buffer2[14];

void hooks_buffer1(void** buffer, size_t* count) {
  *buffer = hook_buffer1;
  *count = 1024;
}

void hooks_buffer2(void** buffer, size_t* count) {
  *buffer = hook_buffer2;
  *count = 14;
}

constexpr char tools_hooks_name[] = "TOOLS_RUNTIME_CALLBACK_HOOKS";
void* tools_hooks[7] = {};

// --- CONTEXT_LOCAL_STORAGE: the runtime's state per context --------------

using storage_dtor = void (*)(CUcontext, void*, void*);

struct storage_entry {
  void* value = nullptr;
  storage_dtor dtor = nullptr;
};

std::mutex storage_mutex;

/// Never destroyed: the runtime deletes its entries from its own exit
/// handler, which may run after this library's static destructors.
std::map<std::pair<CUcontext, void*>, storage_entry>& storage() {
  static auto* entries = new std::map<std::pair<CUcontext, void*>, storage_entry>;
  return *entries;
}

CUcontext context_or_current(CUcontext ctx) {
  if (ctx == nullptr)
    cuCtxGetCurrent(&ctx);
  return ctx;
}

CUresult storage_put(CUcontext ctx, void* key, void* value, storage_dtor dtor) {
  if (key == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  ctx = context_or_current(ctx);
  if (ctx == nullptr)
    return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard<std::mutex> guard{storage_mutex};
  storage()[{ctx, key}] = storage_entry{value, dtor};
  return CUDA_SUCCESS;
}

CUresult storage_delete(CUcontext ctx, void* key) {
  ctx = context_or_current(ctx);
  std::lock_guard<std::mutex> guard{storage_mutex};
  return storage().erase({ctx, key}) > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult storage_get(void** value, CUcontext ctx, void* key) {
  if (value == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  ctx = context_or_current(ctx);
  std::lock_guard<std::mutex> guard{storage_mutex};
  auto i = storage().find({ctx, key});
  if (i == storage().end())
    return CUDA_ERROR_INVALID_VALUE;
  *value = i->second.value;
  return CUDA_SUCCESS;
}

} // namespace

void gleam::interpose::driver::release_context_storage(CUcontext ctx) {
  std::vector<std::pair<void*, storage_entry>> ended;
  {
    std::lock_guard<std::mutex> guard{storage_mutex};
    for (auto i = storage().begin(); i != storage().end();) {
      if (i->first.first == ctx) {
        ended.emplace_back(i->first.second, i->second);
        i = storage().erase(i);
      } else {
        ++i;
      }
    }
  }
  // Outside the lock: a callback may use the table again.
  for (const auto& [key, entry] : ended)
    if (entry.dtor != nullptr)
      entry.dtor(ctx, key, entry.value);
}

namespace {

constexpr char storage_name[] = "CONTEXT_LOCAL_STORAGE";
void* context_storage[4] = {};

// --- tables whose services Gleam declines ---------------------------------

/// Creating a context past the runtime: only the primary context exists.
CUresult ctx_create_bypass(CUcontext*, unsigned, CUdevice) {
  return CUDA_ERROR_NOT_SUPPORTED;
}

constexpr char ctx_bypass_name[] = "CTX_CREATE_BYPASS";
void* ctx_bypass[2] = {};

constexpr char heap_name[] = "HEAP_ACCESS";
void* heap_access[3] = {};

/// An extended device attribute; the runtime falls back to
/// cuDeviceGetAttribute when refused.
CUresult device_attribute_ext(CUdevice, unsigned, int, size_t*) {
  return CUDA_ERROR_NOT_SUPPORTED;
}

/// A per-device flag the runtime reads at start-up; 0 is what a plain
/// (non-virtualized, non-MIG-partitioned) device reports.
CUresult device_flag(unsigned char* result, CUdevice) {
  if (result == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  *result = 0;
  return CUDA_SUCCESS;
}

constexpr char device_ext_name[] = "DEVICE_EXTENDED_RT";
void* device_ext[26] = {};

/// The runtime's check of a context before use: no restriction applies.
CUresult context_check(CUcontext, uint32_t* result, const void**) {
  if (result != nullptr)
    *result = 0;
  return CUDA_SUCCESS;
}

uint32_t context_check_flags() {
  return 0;
}

constexpr char context_checks_name[] = "CONTEXT_CHECKS";
void* context_checks[4] = {};

/// Present in CUDA 13.4 drivers; the runtime checks that it exists.
constexpr char runtime13_name[] = "CUDART13";
void* runtime13[95] = {};

// --- INTEGRITY_CHECK: the runtime verifies the driver --------------------
//
// HMAC-MD2 under a fixed key of the process and thread ids, the driver
// version, where the tables live, the runtime's clock reading and every
// device's UUID and PCI location.

constexpr char integrity_name[] = "INTEGRITY_CHECK";
void* integrity[3] = {};

CUresult integrity_check(uint32_t version, uint64_t unix_seconds, uint64_t result[2]) {
  if (result == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  // Runtimes of these check versions expect a fixed answer.
  if (version % 10 == 0) {
    result[0] = 0x3341181C03CB675CULL;
    result[1] = 0x8ED383AA1F4CD1E8ULL;
    return CUDA_SUCCESS;
  }
  if (version % 10 == 1) {
    result[0] = 0x1841181C03CB675CULL;
    result[1] = 0x8ED383AA1F4CD1E8ULL;
    return CUDA_SUCCESS;
  }
  static const unsigned char key[16] = {0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
                                        0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F};
  struct process_part {
    uint32_t driver_version;
    uint32_t version;
    uint32_t pid;
    uint32_t tid;
    const void* cudart_table;
    const void* integrity_table;
    const void* check_function;
    uint64_t unix_seconds;
  };
  struct device_part {
    unsigned char uuid[16];
    int32_t pci_domain;
    int32_t pci_bus;
    int32_t pci_device;
  };
  static_assert(sizeof(process_part) == 48 && sizeof(device_part) == 28);
  int driver_version = 0;
  cuDriverGetVersion(&driver_version);
  process_part p{static_cast<uint32_t>(driver_version),
                 version,
                 static_cast<uint32_t>(::getpid()),
                 static_cast<uint32_t>(::pthread_self()),
                 cudart_interface,
                 integrity,
                 integrity[1],
                 unix_seconds};
  std::string message(reinterpret_cast<const char*>(&p), sizeof p);
  int count = 0;
  if (auto err = cuDeviceGetCount(&count); err != CUDA_SUCCESS)
    return err;
  for (int d = 0; d < count; ++d) {
    device_part dev{};
    CUuuid uuid{};
    cuDeviceGetUuid_v2(&uuid, d);
    std::memcpy(dev.uuid, uuid.bytes, sizeof dev.uuid);
    cuDeviceGetAttribute(&dev.pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d);
    cuDeviceGetAttribute(&dev.pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d);
    cuDeviceGetAttribute(&dev.pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d);
    message.append(reinterpret_cast<const char*>(&dev), sizeof dev);
  }
  auto mac = gleam::interpose::driver::hmac_md2(key, message);
  std::memcpy(result, mac.data(), mac.size());
  return CUDA_SUCCESS;
}

// --- the lookup -------------------------------------------------------------

struct known_table {
  uuid_bytes id;
  void** table;
};

const std::array<known_table, 10>& tables() {
  static const auto* t = [] {
    cudart_interface[0] = size_entry<13>();
    cudart_interface[1] = reinterpret_cast<void*>(&cudart_module_from_cubin);
    cudart_interface[2] = reinterpret_cast<void*>(&cudart_primary_context);
    cudart_interface[6] = reinterpret_cast<void*>(&cudart_module_from_cubin_ext1);
    cudart_interface[7] = reinterpret_cast<void*>(&cudart_hint);
    cudart_interface[8] = reinterpret_cast<void*>(&cudart_module_from_cubin_ext2);
    cudart_interface[12] = reinterpret_cast<void*>(&cudart_load_compilers);
    fill_unknown<cudart_interface_name>(cudart_interface, 1);

    tools_tls[0] = size_entry<4>();
    fill_unknown<tools_tls_name>(tools_tls, 1);

    tools_hooks[0] = size_entry<7>();
    tools_hooks[2] = reinterpret_cast<void*>(&hooks_buffer1);
    tools_hooks[6] = reinterpret_cast<void*>(&hooks_buffer2);
    fill_unknown<tools_hooks_name>(tools_hooks, 1);

    // This table has no size entry: slot 0 is a function.
    context_storage[0] = reinterpret_cast<void*>(&storage_put);
    context_storage[1] = reinterpret_cast<void*>(&storage_delete);
    context_storage[2] = reinterpret_cast<void*>(&storage_get);
    fill_unknown<storage_name>(context_storage, 0);

    ctx_bypass[0] = size_entry<2>();
    ctx_bypass[1] = reinterpret_cast<void*>(&ctx_create_bypass);

    heap_access[0] = size_entry<3>();
    fill_unknown<heap_name>(heap_access, 1);

    device_ext[0] = size_entry<26>();
    device_ext[5] = reinterpret_cast<void*>(&device_attribute_ext);
    device_ext[13] = reinterpret_cast<void*>(&device_flag);
    fill_unknown<device_ext_name>(device_ext, 1);

    context_checks[0] = size_entry<4>();
    context_checks[2] = reinterpret_cast<void*>(&context_check);
    context_checks[3] = reinterpret_cast<void*>(&context_check_flags);
    fill_unknown<context_checks_name>(context_checks, 1);

    runtime13[0] = size_entry<95>();
    fill_unknown<runtime13_name>(runtime13, 1);

    integrity[0] = size_entry<3>();
    integrity[1] = reinterpret_cast<void*>(&integrity_check);
    fill_unknown<integrity_name>(integrity, 2);

    return new std::array<known_table, 10>{{
      {{0x6B, 0xD5, 0xFB, 0x6C, 0x5B, 0xF4, 0xE7, 0x4A, 0x89, 0x87, 0xD9, 0x39, 0x12, 0xFD,
        0x9D, 0xF9},
       cudart_interface},
      {{0x42, 0xD8, 0x5A, 0x81, 0x23, 0xF6, 0xCB, 0x47, 0x82, 0x98, 0xF6, 0xE7, 0x8A, 0x3A,
        0xEC, 0xDC},
       tools_tls},
      {{0xA0, 0x94, 0x79, 0x8C, 0x2E, 0x74, 0x2E, 0x74, 0x93, 0xF2, 0x08, 0x00, 0x20, 0x0C,
        0x0A, 0x66},
       tools_hooks},
      {{0xC6, 0x93, 0x33, 0x6E, 0x11, 0x21, 0xDF, 0x11, 0xA8, 0xC3, 0x68, 0xF3, 0x55, 0xD8,
        0x95, 0x93},
       context_storage},
      {{0x0C, 0xA5, 0x0B, 0x8C, 0x10, 0x04, 0x92, 0x9A, 0x89, 0xA7, 0xD0, 0xDF, 0x10, 0xE7,
        0x72, 0x86},
       ctx_bypass},
      {{0x19, 0x5B, 0xCB, 0xF4, 0xD6, 0x7D, 0x02, 0x4A, 0xAC, 0xC5, 0x1D, 0x29, 0xCE, 0xA6,
        0x31, 0xAE},
       heap_access},
      {{0xB1, 0x05, 0x41, 0xE1, 0xF7, 0xC7, 0xC7, 0x4A, 0x9F, 0x64, 0xF2, 0x23, 0xBE, 0x99,
        0xF1, 0xE2},
       device_ext},
      {{0xD4, 0x08, 0x20, 0x55, 0xBD, 0xE6, 0x70, 0x4B, 0x8D, 0x34, 0xBA, 0x12, 0x3C, 0x66,
        0xE1, 0xF2},
       integrity},
      {{0x21, 0x31, 0x8C, 0x60, 0x97, 0x14, 0x32, 0x48, 0x8C, 0xA6, 0x41, 0xFF, 0x73, 0x24,
        0xC8, 0xF2},
       runtime13},
      {{0x26, 0x3E, 0x88, 0x60, 0x7C, 0xD2, 0x61, 0x43, 0x92, 0xF6, 0xBB, 0xD5, 0x00, 0x6D,
        0xFA, 0x7E},
       context_checks},
    }};
  }();
  return *t;
}

} // namespace

extern "C" {

GLEAM_INTERPOSE_EXPORT CUresult cuGetExportTable(const void** ppExportTable,
                                                 const CUuuid* pExportTableId) {
  if (ppExportTable == nullptr || pExportTableId == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  for (const auto& t : tables())
    if (std::memcmp(t.id.data(), pExportTableId->bytes, 16) == 0) {
      *ppExportTable = t.table;
      return CUDA_SUCCESS;
    }
  // A table the runtime probes for and goes on without: not worth a line.
  static const unsigned char startup_probe[16] = {0xF8, 0xCF, 0xF9, 0x51, 0x21, 0x46,
                                                  0x8B, 0x4E, 0xB9, 0xE2, 0xFB, 0x46,
                                                  0x9E, 0x7C, 0x0D, 0xD9};
  if (std::memcmp(startup_probe, pExportTableId->bytes, 16) == 0) {
    *ppExportTable = nullptr;
    return CUDA_ERROR_NOT_FOUND;
  }
  std::string name = "cuGetExportTable(";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(pExportTableId->bytes[i]));
    name += hex;
  }
  name += ")";
  gleam_driver_report_unsupported(name.c_str(), "unknown export table");
  // NOT_FOUND, not another error: the runtime probes some tables (one that
  // would let it skip its usual start-up) and goes on without them only on
  // this answer.
  *ppExportTable = nullptr;
  return CUDA_ERROR_NOT_FOUND;
}

} // extern "C"
