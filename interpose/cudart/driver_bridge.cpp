// The runtime's side of the driver-level surface: the private interface that
// Gleam's libcuda.so.1 calls (interpose/private_interface.h) and
// cudaGetDriverEntryPoint*, which hand out libcuda.so.1's functions.
#define __CUDA_API_VERSION_INTERNAL
#include "interpose/export.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <mutex>
#include <set>
#include <string>

#include "actors/log.hpp"
#include "interpose/error_map.hpp"
#include "interpose/fatbin/fatbin.hpp"
#include "interpose/private_interface.h"
#include "interpose/runtime.hpp"
#include "interpose/vmm.hpp"

using namespace gleam::interpose;
namespace proto = gleam::proto;

namespace {

using gleam::actors::log;
using gleam::actors::log_level;

// --- module images --------------------------------------------------------

constexpr uint32_t fatbin_magic = 0xBA55ED50;

template <class T>
bool read_at(const std::string& img, size_t off, T* out) {
  if (off > img.size() || img.size() - off < sizeof(T))
    return false;
  std::memcpy(out, img.data() + off, sizeof(T));
  return true;
}

/// Bytes of an ELF64 image from its headers (the furthest section or
/// program header end); 0 when the headers are not ELF64.
size_t elf_size(const unsigned char* p) {
  if (std::memcmp(p, "\x7f" "ELF", 4) != 0 || p[4] != 2)
    return 0;
  uint64_t shoff = 0, phoff = 0;
  uint16_t shentsize = 0, shnum = 0, phentsize = 0, phnum = 0;
  std::memcpy(&phoff, p + 0x20, 8);
  std::memcpy(&shoff, p + 0x28, 8);
  std::memcpy(&phentsize, p + 0x36, 2);
  std::memcpy(&phnum, p + 0x38, 2);
  std::memcpy(&shentsize, p + 0x3A, 2);
  std::memcpy(&shnum, p + 0x3C, 2);
  size_t end = std::max<size_t>(shoff + size_t{shentsize} * shnum,
                                phoff + size_t{phentsize} * phnum);
  for (uint16_t i = 0; i < shnum; ++i) {
    const unsigned char* sh = p + shoff + size_t{i} * shentsize;
    uint32_t type = 0;
    uint64_t off = 0, size = 0;
    std::memcpy(&type, sh + 4, 4);
    std::memcpy(&off, sh + 0x18, 8);
    std::memcpy(&size, sh + 0x20, 8);
    if (type != 8) // SHT_NOBITS occupies no file bytes
      end = std::max<size_t>(end, off + size);
  }
  return end;
}

/// The size in bytes of a module image whose size the caller did not give.
size_t image_size(const void* image) {
  auto* p = static_cast<const unsigned char*>(image);
  uint32_t magic = 0;
  std::memcpy(&magic, p, 4);
  if (magic == fatbin_magic) {
    if (auto view = fatbin::parse_image(image, fatbin::unknown_size))
      return view->image().size;
    return 0;
  }
  if (auto n = elf_size(p); n != 0)
    return n;
  return std::strlen(static_cast<const char*>(image)) + 1; // PTX text
}

/// Names of the global functions (kernels and device functions) and the
/// objects (__device__ / __constant__ variables) in an uncompressed ELF64
/// cubin.
void elf_names(const std::string& img, std::set<std::string>& functions,
               std::set<std::string>& objects) {
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0;
  if (img.size() < 64 || img.compare(0, 4, "\x7f" "ELF") != 0
      || !read_at(img, 0x28, &shoff) || !read_at(img, 0x3A, &shentsize)
      || !read_at(img, 0x3C, &shnum))
    return;
  for (uint16_t i = 0; i < shnum; ++i) {
    size_t sh = shoff + size_t{i} * shentsize;
    uint32_t type = 0, link = 0;
    uint64_t off = 0, size = 0, entsize = 0;
    if (!read_at(img, sh + 4, &type) || type != 2) // SHT_SYMTAB
      continue;
    if (!read_at(img, sh + 0x18, &off) || !read_at(img, sh + 0x20, &size)
        || !read_at(img, sh + 0x28, &link) || !read_at(img, sh + 0x38, &entsize)
        || entsize < 24)
      continue;
    uint64_t stroff = 0;
    if (!read_at(img, shoff + size_t{link} * shentsize + 0x18, &stroff))
      continue;
    for (uint64_t s = off; s + 24 <= off + size && s + 24 <= img.size(); s += entsize) {
      uint32_t name = 0;
      unsigned char info = 0;
      uint16_t shndx = 0;
      read_at(img, s, &name);
      read_at(img, s + 4, &info);
      read_at(img, s + 6, &shndx);
      int bind = info >> 4, kind = info & 0xf;
      if (shndx == 0 || stroff + name >= img.size())
        continue;
      std::string n{img.c_str() + stroff + name};
      if (n.empty())
        continue;
      // Kernels are global functions; a non-extern __device__ variable is a
      // local object, still found by cuModuleGetGlobal.
      if (kind == 2 && (bind == 1 || bind == 2))
        functions.insert(n);
      else if (kind == 1)
        objects.insert(n);
    }
  }
}

/// Names of the .entry functions and .global variables of PTX text.
void ptx_names(const std::string& img, std::set<std::string>& functions,
               std::set<std::string>& objects) {
  auto word_after = [&](size_t pos) {
    while (pos < img.size() && (img[pos] == ' ' || img[pos] == '\t'))
      ++pos;
    size_t end = pos;
    while (end < img.size() && (std::isalnum(static_cast<unsigned char>(img[end]))
                                || img[end] == '_' || img[end] == '$'))
      ++end;
    return img.substr(pos, end - pos);
  };
  for (size_t pos = img.find(".entry"); pos != std::string::npos;
       pos = img.find(".entry", pos + 6))
    if (auto n = word_after(pos + 6); !n.empty())
      functions.insert(n);
  (void) objects; // .global declarations are looked up on demand
}

/// A module loaded through the driver surface: its own copy of the image
/// (the caller may free its buffer after cuModuleLoadData) and the module
/// instances on the server. A name the image parse did not reveal (a
/// compressed fatbin) gets a further instance of the same image.
struct driver_module {
  std::string image;
  std::list<module_record> instances;
};

void driver_modules_after_fork();

std::list<driver_module>& driver_modules() {
  static auto* x = [] {
    ::pthread_atfork(nullptr, nullptr, driver_modules_after_fork);
    return new std::list<driver_module>;
  }();
  return *x;
}

/// A child after fork() has a new session: every module instance loads again
/// on first use (the runtime's own handler has reset the registry's maps).
void driver_modules_after_fork() {
  for (auto& m : driver_modules())
    for (auto& inst : m.instances)
      forget_server_state(inst);
}

driver_module* find_module(void* handle) {
  for (auto& m : driver_modules())
    if (&m == handle)
      return &m;
  return nullptr;
}

module_record& new_instance(driver_module& m, const std::set<std::string>& functions,
                            const std::set<std::string>& objects) {
  auto& inst = m.instances.emplace_back();
  inst.image = m.image.data();
  inst.image_size = m.image.size();
  auto& r = reg();
  for (const auto& name : functions) {
    auto f = std::make_unique<function_record>();
    f->module = &inst;
    f->name = name;
    f->host = f.get();
    r.functions[f.get()] = f.get();
    inst.functions.push_back(std::move(f));
  }
  for (const auto& name : objects) {
    auto v = std::make_unique<variable_record>();
    v->module = &inst;
    v->name = name;
    v->host = v.get();
    r.variables[v.get()] = v.get();
    inst.variables.push_back(std::move(v));
  }
  return inst;
}

void forget_instance(module_record& inst) {
  auto& r = reg();
  for (const auto& f : inst.functions)
    r.functions.erase(f.get());
  for (const auto& v : inst.variables) {
    r.variables.erase(v.get());
    if (v->found)
      r.allocations.erase(v->dptr);
  }
}

int p_connect() {
  return connect();
}

int p_connected() {
  return connected() ? 1 : 0;
}

int p_to_cu_result(int x) {
  return to_cu_result(static_cast<cudaError_t>(x));
}

int p_module_load(const void* image, size_t size, void** module) {
  try {
    if (image == nullptr || module == nullptr)
      return cudaErrorInvalidValue;
    if (auto err = connect(); err != cudaSuccess)
      return err;
    // The static runtime hands the driver its registration wrapper
    // (cuLibraryLoadData, CUDART_INTERFACE): load the fatbin it points to.
    uint32_t first = 0;
    std::memcpy(&first, image, 4);
    if (first == fatbin::wrapper_magic) {
      auto view = fatbin::parse_wrapper(image);
      if (!view)
        return cudaErrorInvalidKernelImage;
      if (view->wrapper_version() != 1)
        return cudaErrorNotSupported; // relocatable device code: not linked here
      image = view->image().data;
      size = view->image().size;
    }
    if (size == 0)
      size = image_size(image);
    if (size == 0)
      return cudaErrorInvalidKernelImage;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto& m = driver_modules().emplace_back();
    m.image.assign(static_cast<const char*>(image), size);
    std::set<std::string> functions, objects;
    uint32_t magic = 0;
    std::memcpy(&magic, m.image.data(), 4);
    if (magic == fatbin_magic) {
      if (auto view = fatbin::parse_image(m.image.data(), m.image.size()))
        for (const auto& e : view->entries()) {
          if (e.compressed())
            continue;
          std::string payload = m.image.substr(e.payload_offset, e.payload_size);
          if (e.kind == fatbin::entry_kind::elf)
            elf_names(payload, functions, objects);
          else if (e.kind == fatbin::entry_kind::ptx)
            ptx_names(payload, functions, objects);
        }
    } else if (m.image.compare(0, 4, "\x7f" "ELF") == 0) {
      elf_names(m.image, functions, objects);
    } else {
      ptx_names(m.image, functions, objects);
    }
    auto& inst = new_instance(m, functions, objects);
    if (auto err = load_module(inst); err != cudaSuccess) {
      forget_instance(inst);
      driver_modules().pop_back();
      return err;
    }
    log(log_level::debug, "driver module of {} bytes: {} functions, {} objects",
        size, functions.size(), objects.size());
    *module = &m;
    return cudaSuccess;
  } catch (...) {
    return cudaErrorMemoryAllocation;
  }
}

int p_module_get_function(void* module, const char* name, void** function) {
  try {
    if (name == nullptr || function == nullptr)
      return cudaErrorInvalidValue;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto* m = find_module(module);
    if (m == nullptr)
      return cudaErrorInvalidResourceHandle;
    for (auto& inst : m->instances)
      for (auto& f : inst.functions)
        if (f->name == name) {
          if (auto err = load_module(inst); err != cudaSuccess)
            return err;
          if (!f->found)
            return cudaErrorSymbolNotFound;
          *function = f.get();
          return cudaSuccess;
        }
    auto& inst = new_instance(*m, {name}, {});
    if (auto err = load_module(inst); err != cudaSuccess)
      return err;
    auto& f = inst.functions.front();
    if (!f->found)
      return cudaErrorSymbolNotFound;
    *function = f.get();
    return cudaSuccess;
  } catch (...) {
    return cudaErrorMemoryAllocation;
  }
}

int p_module_get_global(void* module, const char* name, uint64_t* dptr, size_t* bytes) {
  try {
    if (name == nullptr)
      return cudaErrorInvalidValue;
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto* m = find_module(module);
    if (m == nullptr)
      return cudaErrorInvalidResourceHandle;
    variable_record* found = nullptr;
    for (auto& inst : m->instances)
      for (auto& v : inst.variables)
        if (v->name == name) {
          if (auto err = load_module(inst); err != cudaSuccess)
            return err;
          found = v.get();
        }
    if (found == nullptr) {
      auto& inst = new_instance(*m, {}, {name});
      if (auto err = load_module(inst); err != cudaSuccess)
        return err;
      found = inst.variables.front().get();
    }
    if (!found->found)
      return cudaErrorSymbolNotFound;
    if (dptr != nullptr)
      *dptr = found->dptr;
    if (bytes != nullptr)
      *bytes = found->size;
    r.allocations.emplace(found->dptr, found->size);
    return cudaSuccess;
  } catch (...) {
    return cudaErrorMemoryAllocation;
  }
}

int p_module_unload(void* module) {
  try {
    auto& r = reg();
    std::lock_guard<std::recursive_mutex> guard{r.mutex};
    auto* m = find_module(module);
    if (m == nullptr)
      return cudaErrorInvalidResourceHandle;
    cudaError_t first = cudaSuccess;
    for (auto& inst : m->instances) {
      forget_instance(inst);
      if (inst.loaded && inst.load_error == cudaSuccess) {
        proto::Op op;
        op.mutable_module_unload()->set_module(inst.handle);
        if (auto err = run_op(std::move(op)); err != cudaSuccess && first == cudaSuccess)
          first = err;
      }
    }
    driver_modules().remove_if([m](const driver_module& x) { return &x == m; });
    return first;
  } catch (...) {
    return cudaErrorUnknown;
  }
}

int p_function_attribute(void* function, int attribute, int* value) {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto i = r.functions.find(function);
  if (i == r.functions.end() || value == nullptr)
    return cudaErrorInvalidValue;
  auto a = i->second->attributes.find(attribute);
  if (a == i->second->attributes.end())
    return cudaErrorInvalidValue;
  *value = a->second;
  return cudaSuccess;
}

int p_allocation_range(uint64_t ptr, uint64_t* base, uint64_t* bytes) {
  // A mapping of the virtual memory API is its own range.
  if (uint64_t b = 0, n = 0; vmm_locate(ptr, &b, &n) == vmm_place::mapped) {
    if (base != nullptr)
      *base = b;
    if (bytes != nullptr)
      *bytes = n;
    return cudaSuccess;
  }
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto i = r.allocations.upper_bound(ptr);
  if (i == r.allocations.begin())
    return cudaErrorInvalidValue;
  --i;
  if (ptr >= i->first + std::max<uint64_t>(i->second, 1))
    return cudaErrorInvalidValue;
  if (base != nullptr)
    *base = i->first;
  if (bytes != nullptr)
    *bytes = i->second;
  return cudaSuccess;
}

int p_function_param(void* function, size_t index, size_t* offset, size_t* size) {
  auto& r = reg();
  std::lock_guard<std::recursive_mutex> guard{r.mutex};
  auto i = r.functions.find(function);
  if (i == r.functions.end())
    return cudaErrorInvalidResourceHandle;
  const auto& params = i->second->params;
  if (index >= params.size())
    return cudaErrorInvalidValue;
  if (offset != nullptr)
    *offset = params[index].offset();
  if (size != nullptr)
    *size = params[index].size();
  return cudaSuccess;
}

int p_memset_d32(uint64_t dst, uint32_t value, size_t count, void* stream, int async) {
  try {
    proto::Op op;
    auto* m = op.mutable_memset();
    m->set_dst(dst);
    m->set_value(value);
    m->set_element_size(4);
    m->set_count(count);
    m->set_stream(wire_stream(static_cast<cudaStream_t>(stream)));
    m->set_async(async != 0);
    return run_op(std::move(op));
  } catch (...) {
    return cudaErrorUnknown;
  }
}

const gleam_private_interface the_interface = {
  sizeof(gleam_private_interface), p_connect, p_connected, p_to_cu_result,
  p_module_load, p_module_get_function, p_module_get_global, p_module_unload,
  p_function_attribute, p_allocation_range, p_memset_d32,
  // Virtual memory management: interpose/vmm.hpp.
  vmm_granularity, vmm_address_reserve, vmm_address_free, vmm_create, vmm_release,
  vmm_retain, vmm_map, vmm_unmap, vmm_set_access, vmm_get_access, vmm_properties,
  p_function_param,
};

// --- cudaGetDriverEntryPoint ----------------------------------------------

using get_proc_fn = CUresult (*)(const char*, void**, int, cuuint64_t,
                                 CUdriverProcAddressQueryResult*);

/// cuGetProcAddress_v2 of Gleam's libcuda.so.1, which lies in driver/ next
/// to this library; null (logged once) when it is missing.
get_proc_fn our_get_proc() {
  static get_proc_fn fn = [] () -> get_proc_fn {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&gleam_private_interface_v1), &info) == 0
        || info.dli_fname == nullptr)
      return nullptr;
    std::string path{info.dli_fname};
    auto slash = path.rfind('/');
    path = (slash == std::string::npos ? std::string{"."} : path.substr(0, slash))
           + "/driver/libcuda.so.1";
    void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      std::fprintf(stderr,
                   "gleam: cannot load Gleam's driver surface %s (%s): "
                   "cudaGetDriverEntryPoint finds no symbol\n",
                   path.c_str(), ::dlerror());
      return nullptr;
    }
    return reinterpret_cast<get_proc_fn>(::dlsym(lib, "cuGetProcAddress_v2"));
  }();
  return fn;
}

cudaError_t entry_point(const char* where, const char* symbol, void** funcPtr,
                        unsigned int cudaVersion, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* driverStatus) {
  if (symbol == nullptr || funcPtr == nullptr)
    return record(cudaErrorInvalidValue);
  *funcPtr = nullptr;
  auto status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (auto fn = our_get_proc())
    fn(symbol, funcPtr, static_cast<int>(cudaVersion), flags, &status);
  if (status != CU_GET_PROC_ADDRESS_SUCCESS)
    *funcPtr = nullptr;
  // GLEAM_LOG=debug: each requested name once, with the outcome (before the
  // session exists the client's logger is not configured yet).
  if (const char* v = std::getenv("GLEAM_LOG");
      v != nullptr && (std::strcmp(v, "debug") == 0 || std::strcmp(v, "trace") == 0)) {
    static std::mutex mutex;
    static std::set<std::string> logged;
    std::lock_guard<std::mutex> guard{mutex};
    if (logged.insert(symbol).second)
      std::fprintf(stderr, "gleam-client [debug] %s(%s, version %u, flags %llu): %s\n", where,
                   symbol, cudaVersion, flags,
                   status == CU_GET_PROC_ADDRESS_SUCCESS ? "found" : "not found");
  }
  if (driverStatus != nullptr)
    *driverStatus = status == CU_GET_PROC_ADDRESS_SUCCESS
                      ? cudaDriverEntryPointSuccess
                      : status == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          ? cudaDriverEntryPointVersionNotSufficent
                          : cudaDriverEntryPointSymbolNotFound;
  return cudaSuccess;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) const gleam_private_interface*
gleam_private_interface_v1(void) {
  return &the_interface;
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetDriverEntryPoint(
  const char* symbol, void** funcPtr, unsigned long long flags,
  cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point("cudaGetDriverEntryPoint", symbol, funcPtr, CUDART_VERSION, flags,
                     driverStatus);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(
  const char* symbol, void** funcPtr, unsigned long long flags,
  cudaDriverEntryPointQueryResult* driverStatus) {
  return cudaGetDriverEntryPoint(symbol, funcPtr, flags, driverStatus);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(
  const char* symbol, void** funcPtr, unsigned int cudaVersion,
  unsigned long long flags, cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point("cudaGetDriverEntryPointByVersion", symbol, funcPtr, cudaVersion,
                     flags, driverStatus);
}

GLEAM_INTERPOSE_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(
  const char* symbol, void** funcPtr, unsigned int cudaVersion,
  unsigned long long flags, cudaDriverEntryPointQueryResult* driverStatus) {
  return cudaGetDriverEntryPointByVersion(symbol, funcPtr, cudaVersion, flags,
                                          driverStatus);
}

} // extern "C"
