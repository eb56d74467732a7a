// Shared by the cuSOLVER test programs: the status check, the program's
// checksum, and the helpers that print results, allocate and free device
// memory and make deterministic matrices. Each program is one translation
// unit: the helpers are its own (an unnamed namespace).
#pragma once

#include <cusolverDn.h>

#include <initializer_list>
#include <vector>

#include "common.cuh"

#define GLEAM_CUSOLVER_CHECK(call) GLEAM_PROGRAM_CHECK_STATUS(call, CUSOLVER_STATUS_SUCCESS)

namespace {

gleam_program::checksum sum;

/// Prints the bytes of `v` under `label` and adds them to the checksum.
template <class T>
void show(const char* label, const std::vector<T>& v) {
  gleam_program::show_words(sum, label, v);
}

/// Device memory for `count` elements of T (at least one: a workspace of
/// size 0 still gets an address).
template <class T = char>
T* scratch(size_t count) {
  T* p = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&p, (count > 0 ? count : 1) * sizeof(T)));
  return p;
}

/// Frees device memory of this program.
inline void release(std::initializer_list<void*> pointers) {
  for (void* p : pointers)
    GLEAM_PROGRAM_CHECK(cudaFree(p));
}

/// rows x cols values in [-1, 1), column-major.
template <class T>
std::vector<T> pattern(int rows, int cols, uint32_t seed) {
  std::vector<T> v(static_cast<size_t>(rows) * cols);
  for (auto& x : v)
    x = static_cast<T>(gleam_program::next_random(seed) % 2001) / static_cast<T>(1000) - 1;
  return v;
}

} // namespace
