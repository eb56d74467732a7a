#pragma once

#include <cstdint>

/// The host tables cuRAND hands out by pointer (curandGetDirectionVectors32
/// / 64, curandGetScrambleConstants32 / 64): their sizes, which client
/// (interpose/curand/tables.cpp) and server (executor/curand_tables.cpp)
/// agree on. The library documents 20,000 dimensions for every set.
namespace gleam::wire::curand_tables {

/// Dimensions of every direction vector set and scramble constant table.
inline constexpr uint64_t dimensions = 20000;

/// Bytes of a 32-bit direction vector set: 32 unsigned ints per dimension.
inline constexpr uint64_t vectors32_bytes = dimensions * 32 * sizeof(uint32_t);

/// Bytes of a 64-bit direction vector set: 64 unsigned long longs per
/// dimension.
inline constexpr uint64_t vectors64_bytes = dimensions * 64 * sizeof(uint64_t);

/// Bytes of the 32-bit and the 64-bit scramble constants: one per dimension.
inline constexpr uint64_t constants32_bytes = dimensions * sizeof(uint32_t);
inline constexpr uint64_t constants64_bytes = dimensions * sizeof(uint64_t);

} // namespace gleam::wire::curand_tables
