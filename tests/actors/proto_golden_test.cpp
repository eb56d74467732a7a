// Pins the wire schema: every message's field names, numbers and types, and
// every enum value, must equal tests/actors/proto_golden.txt. Renumbering a
// field or an op breaks old peers; only additions are allowed, and an
// addition is made by appending its line to the golden file.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <google/protobuf/descriptor.h>

#include "actors/proto/control.pb.h"
#include "actors/proto/ops.pb.h"
#include "tests/support/gpu_probe.hpp"

namespace {

void describe_message(const google::protobuf::Descriptor* d, std::set<std::string>& out) {
  for (int i = 0; i < d->field_count(); ++i) {
    const auto* f = d->field(i);
    std::string oneof = f->real_containing_oneof() != nullptr
                          ? " oneof " + f->real_containing_oneof()->name()
                          : "";
    out.insert(d->full_name() + "." + f->name() + " = " + std::to_string(f->number()) + " "
               + (f->is_repeated() ? "repeated " : "") + f->type_name() + oneof);
  }
  for (int i = 0; i < d->nested_type_count(); ++i)
    describe_message(d->nested_type(i), out);
  for (int i = 0; i < d->enum_type_count(); ++i) {
    const auto* e = d->enum_type(i);
    for (int j = 0; j < e->value_count(); ++j)
      out.insert(e->full_name() + "." + e->value(j)->name() + " = "
                 + std::to_string(e->value(j)->number()));
  }
}

std::set<std::string> describe_file(const google::protobuf::FileDescriptor* file) {
  std::set<std::string> out;
  for (int i = 0; i < file->message_type_count(); ++i)
    describe_message(file->message_type(i), out);
  for (int i = 0; i < file->enum_type_count(); ++i) {
    const auto* e = file->enum_type(i);
    for (int j = 0; j < e->value_count(); ++j)
      out.insert(e->full_name() + "." + e->value(j)->name() + " = "
                 + std::to_string(e->value(j)->number()));
  }
  return out;
}

} // namespace

TEST_CASE("wire schema field and op numbers match the golden file", "[actors][proto]") {
  auto actual = describe_file(gleam::proto::Op::descriptor()->file());
  auto control = describe_file(gleam::proto::NodeRegister::descriptor()->file());
  actual.insert(control.begin(), control.end());
  // Writing the golden file is a deliberate act: GLEAM_PROTO_GOLDEN_OUT=path.
  if (const char* out_path = std::getenv("GLEAM_PROTO_GOLDEN_OUT")) {
    std::ofstream out(out_path);
    out << "# Pinned wire schema (see tests/actors/proto_golden_test.cpp). Append only.\n";
    for (const auto& a : actual)
      out << a << "\n";
  }
  std::ifstream in(gleam::test::source_path("tests/actors/proto_golden.txt"));
  REQUIRE(in.good());
  std::set<std::string> golden;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#')
      golden.insert(line);
  std::ostringstream missing;
  for (const auto& g : golden)
    if (actual.count(g) == 0)
      missing << "  changed or removed: " << g << "\n";
  std::ostringstream added;
  for (const auto& a : actual)
    if (golden.count(a) == 0)
      added << "  not in golden file: " << a << "\n";
  INFO(missing.str() << added.str());
  CHECK(missing.str().empty());
  CHECK(added.str().empty());
}

TEST_CASE("op numbers are the ones clients and servers agree on", "[actors][proto]") {
  // Spot checks that read as documentation of the pinned numbers.
  using gleam::proto::Op;
  CHECK(Op::kMemAlloc == 10);
  CHECK(Op::kMemcpyHtod == 12);
  CHECK(Op::kModuleLoad == 30);
  CHECK(Op::kLaunchKernel == 32);
  CHECK(Op::kStreamCreate == 50);
  CHECK(Op::kEventRecord == 62);
  CHECK(Op::kCtxSynchronize == 80);
}
