#pragma once

#include <string>
#include <utility>

#include <caf/error.hpp>
#include <caf/meta/load_callback.hpp>
#include <caf/meta/save_callback.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/none.hpp>
#include <caf/sec.hpp>

namespace gleam::actors {

/// Carries one Protocol Buffers message inside a CAF message. The generic
/// inspect adapter below serializes the message to its protobuf wire bytes,
/// so the schema (with its pinned field numbers) is the cross-node contract
/// and CAF only moves opaque bytes. A value type: copying copies the message.
template <class Message>
struct pb {
  Message value;

  pb() = default;
  explicit pb(Message x) : value(std::move(x)) {
  }

  Message* operator->() {
    return &value;
  }
  const Message* operator->() const {
    return &value;
  }
};

/// The one inspect adapter for every protobuf message. Saving serializes the
/// message to wire bytes before they are written; loading parses them after
/// they are read and fails the whole CAF message on malformed bytes
/// (sec::invalid_argument) instead of delivering a half-parsed message.
template <class Inspector, class Message>
typename Inspector::result_type inspect(Inspector& f, pb<Message>& x) {
  std::string bytes;
  auto save = caf::meta::save_callback([&]() -> caf::error {
    if (!x.value.SerializeToString(&bytes))
      return caf::make_error(caf::sec::invalid_argument);
    return caf::none;
  });
  auto load = caf::meta::load_callback([&]() -> caf::error {
    if (!x.value.ParseFromString(bytes))
      return caf::make_error(caf::sec::invalid_argument);
    return caf::none;
  });
  return f(caf::meta::type_name("gleam.pb"), save, bytes, load);
}

} // namespace gleam::actors
