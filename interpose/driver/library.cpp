// The driver's library API (context-independent loading, CUDA 12): a
// CUlibrary is a module of the session and a CUkernel its function, which
// cuLaunchKernel accepts in place of a CUfunction as CUDA documents; what
// a kernel's library and name are, the module registry of driver.cpp
// knows. The static runtime loads every fatbin of a program this way.
#include "interpose/driver/common.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace {

CUmodule module_of(CUlibrary library) {
  return reinterpret_cast<CUmodule>(library);
}

CUfunction function_of(CUkernel kernel) {
  return reinterpret_cast<CUfunction>(kernel);
}

} // namespace

extern "C" {

// JIT and library options tune the server's loading only; they are dropped,
// as cuModuleLoadDataEx drops its JIT options.
GLEAM_INTERPOSE_EXPORT CUresult cuLibraryLoadData(CUlibrary* library, const void* code,
                                                  CUjit_option*, void**, unsigned int,
                                                  CUlibraryOption*, void**, unsigned int) {
  if (library == nullptr || code == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  CUmodule module = nullptr;
  if (auto err = cuModuleLoadData(&module, code); err != CUDA_SUCCESS)
    return err;
  *library = reinterpret_cast<CUlibrary>(module);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary* library, const char* fileName,
                                                      CUjit_option* jitOptions,
                                                      void** jitOptionsValues,
                                                      unsigned int numJitOptions,
                                                      CUlibraryOption* libraryOptions,
                                                      void** libraryOptionValues,
                                                      unsigned int numLibraryOptions) {
  if (library == nullptr || fileName == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  std::ifstream in{fileName, std::ios::binary};
  if (!in)
    return CUDA_ERROR_FILE_NOT_FOUND;
  std::string image{std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
  image.push_back('\0'); // a PTX file is text without its terminator
  return cuLibraryLoadData(library, image.data(), jitOptions, jitOptionsValues, numJitOptions,
                           libraryOptions, libraryOptionValues, numLibraryOptions);
}

GLEAM_INTERPOSE_EXPORT CUresult cuLibraryUnload(CUlibrary library) {
  if (library == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  return cuModuleUnload(module_of(library));
}

GLEAM_INTERPOSE_EXPORT CUresult cuLibraryGetKernel(CUkernel* pKernel, CUlibrary library,
                                                   const char* name) {
  if (pKernel == nullptr || name == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (library == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  CUfunction f = nullptr;
  if (auto err = cuModuleGetFunction(&f, module_of(library), name); err != CUDA_SUCCESS)
    return err;
  *pKernel = reinterpret_cast<CUkernel>(f);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuLibraryGetModule(CUmodule* pMod, CUlibrary library) {
  if (pMod == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (library == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  *pMod = module_of(library);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuKernelGetFunction(CUfunction* pFunc, CUkernel kernel) {
  if (pFunc == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  if (kernel == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  *pFunc = function_of(kernel);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuKernelGetLibrary(CUlibrary* pLib, CUkernel kernel) {
  if (pLib == nullptr)
    return CUDA_ERROR_INVALID_VALUE;
  CUmodule module = nullptr;
  if (auto err = cuFuncGetModule(&module, function_of(kernel)); err != CUDA_SUCCESS)
    return err;
  *pLib = reinterpret_cast<CUlibrary>(module);
  return CUDA_SUCCESS;
}

GLEAM_INTERPOSE_EXPORT CUresult cuKernelGetName(const char** name, CUkernel hfunc) {
  return cuFuncGetName(name, function_of(hfunc));
}

GLEAM_INTERPOSE_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr* dptr, size_t* bytes,
                                                   CUlibrary library, const char* name) {
  if (library == nullptr)
    return CUDA_ERROR_INVALID_HANDLE;
  return cuModuleGetGlobal_v2(dptr, bytes, module_of(library), name);
}

GLEAM_INTERPOSE_EXPORT CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex,
                                                     size_t* paramOffset, size_t* paramSize) {
  return cuFuncGetParamInfo(function_of(kernel), paramIndex, paramOffset, paramSize);
}

// A kernel's attributes are its function's on the session's device.
GLEAM_INTERPOSE_EXPORT CUresult cuKernelGetAttribute(int* pi, CUfunction_attribute attrib,
                                                     CUkernel kernel, CUdevice dev) {
  if (auto err = gleam::interpose::driver::check_device(dev); err != CUDA_SUCCESS)
    return err;
  return cuFuncGetAttribute(pi, attrib, function_of(kernel));
}

GLEAM_INTERPOSE_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val,
                                                     CUkernel kernel, CUdevice dev) {
  if (auto err = gleam::interpose::driver::check_device(dev); err != CUDA_SUCCESS)
    return err;
  return cuFuncSetAttribute(function_of(kernel), attrib, val);
}

GLEAM_INTERPOSE_EXPORT CUresult cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config,
                                                       CUdevice dev) {
  if (auto err = gleam::interpose::driver::check_device(dev); err != CUDA_SUCCESS)
    return err;
  return cuFuncSetCacheConfig(function_of(kernel), config);
}

} // extern "C"
