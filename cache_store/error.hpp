#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>

namespace gleam::cache_store {

/// Error codes of the chunk store, the tiers and the hashing helpers.
/// Values are stable: they travel inside `caf::error` across nodes.
enum class error_code : uint8_t {
  /// Reserved: no error.
  none = 0,
  /// A chunk's content does not hash to the key it was offered under.
  hash_mismatch = 1,
  /// No chunk with this key is stored.
  not_found = 2,
  /// A key string is not of the form "xxh3:<32 hex>" or "sha256:<64 hex>".
  bad_key_string = 3,
  /// The RocksDB database could not be opened (bad path, corrupt files).
  open_failed = 4,
  /// The RocksDB database is locked by another process or another instance.
  db_locked = 5,
  /// A RocksDB read or write failed.
  io_error = 6,
  /// A stored entry's metadata or bytes are damaged.
  corrupt_entry = 7,
  /// A caller buffer is smaller than the chunk.
  buffer_too_small = 8,
  /// unref() on an entry whose reference count is already zero.
  refcount_underflow = 9,
  /// The entry is referenced (refcount > 0) and cannot be erased.
  in_use = 10,
  /// A chunk does not fit into a tier's capacity, or the tier refused it.
  no_space = 11,
  /// A tier or a fill target failed (allocation, device copy).
  tier_failed = 12,
  /// An argument is out of its documented range.
  invalid_argument = 13,
  /// Bytes offered under a stored key hash to it but differ from the stored
  /// bytes (an XXH3 collision): they are not stored, and their tenant is not
  /// added to the chunk.
  collision = 14,
};

/// Atom naming this component's error category (at most 10 characters).
constexpr caf::atom_value error_category = caf::atom("gleam_cs");

/// Name of `x`, e.g. "hash_mismatch".
std::string to_string(error_code x);

/// Wraps `x` into a `caf::error` of category `error_category`.
caf::error make_error(error_code x);

/// Wraps `x` into a `caf::error` whose context is `what`: a sentence that
/// says what failed, with which value, and what to do about it.
caf::error make_error(error_code x, std::string what);

/// True when `err` belongs to this component and carries code `x`.
bool is(const caf::error& err, error_code x);

/// Human-readable rendering of any error of this component:
/// "cache_store: <code>: <context>"; other categories via CAF's to_string.
std::string render(const caf::error& err);

} // namespace gleam::cache_store
