#include <catch2/catch.hpp>

#include "placement/error.hpp"

using namespace gleam::placement;

TEST_CASE("placement errors carry their code and category", "[placement]") {
  auto err = make_error(error_code::not_enough_samples);
  CHECK(err.code() == static_cast<uint8_t>(error_code::not_enough_samples));
  CHECK(err.category() == caf::atom("gleam_plc"));
  CHECK(to_string(error_code::invalid_snapshot) == "invalid_snapshot");
  auto with_context = make_error(error_code::invalid_argument, "option --tasks got 'x'");
  CHECK(with_context.code() == static_cast<uint8_t>(error_code::invalid_argument));
  CHECK(with_context.context().get_as<std::string>(0) == "option --tasks got 'x'");
}
