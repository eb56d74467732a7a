#include "tests/interpose_fatbin/registration_hooks.hpp"

#include <cstddef>

namespace gleam::test {

namespace {

registrations& state() {
  static registrations instance;
  return instance;
}

// The handle nvcc's code stores and passes back to the other entry points.
void* handle_storage[1];

} // namespace

const registrations& recorded_registrations() {
  return state();
}

} // namespace gleam::test

// Entry points that nvcc 13 host code references (crt/host_runtime.h). Only
// registration is exercised; the launch entry points fail.
extern "C" {

void** __cudaRegisterFatBinary(void* fat_cubin) {
  gleam::test::state().wrappers.push_back(fat_cubin);
  return gleam::test::handle_storage;
}

void __cudaRegisterFatBinaryEnd(void**) {
  ++gleam::test::state().ends;
}

void __cudaUnregisterFatBinary(void**) {
}

void __cudaRegisterFunction(void**, const char*, char*, const char* device_name,
                            int, void*, void*, void*, void*, int*) {
  gleam::test::state().functions.emplace_back(device_name);
}

void __cudaRegisterVar(void**, char*, char*, const char* device_name, int,
                       size_t, int, int) {
  gleam::test::state().variables.emplace_back(device_name);
}

char __cudaInitModule(void**) {
  return 0;
}

int __cudaPopCallConfiguration(void*, void*, void*, void*) {
  return 1;
}

int __cudaGetKernel(void**, const void*) {
  return 1;
}

int __cudaLaunchKernel(const void*, void*, void*, void**, size_t, void*) {
  return 1;
}

} // extern "C"
