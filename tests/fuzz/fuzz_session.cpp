// Fuzz target: what a peer can make a GPU server's executor do. One executor
// over the fake GPU (tests/executor/fake_device_driver.hpp; every driver entry
// point it lacks answers CUDA_ERROR_NOT_SUPPORTED) takes a sequence of
// messages decoded from the input: OpenSession (new or resume), OpBatch and
// close. A flag byte may aim a batch or a close at a session the input opened
// and give it that session's secret, so the ops run; otherwise the ids and
// secrets are the input's own. Properties: nothing crashes; a batch without
// its session's secret runs nothing (one refusal, CUDA_ERROR_INVALID_CONTEXT);
// a close without it closes nothing. Ops that reach the vendor libraries
// (cuBLAS, library calls) are dropped: with fake device memory they would
// run the real libraries on host pointers.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/proto/ops.pb.h"
#include "executor/executor.hpp"
#include "tests/executor/fake_device_driver.hpp"

namespace {

namespace proto = gleam::proto;

template <class... A>
CUresult not_supported(A...) {
  return CUDA_ERROR_NOT_SUPPORTED;
}

template <class... A>
void fill(CUresult (*&fn)(A...)) {
  if (fn == nullptr)
    fn = &not_supported<A...>;
}

/// The fake GPU, every entry point filled, allocations bounded (64 MiB).
gleam::executor::driver_api& driver() {
  static auto* api = [] {
    auto* a = new gleam::executor::driver_api{};
    gleam::test::install_fake_device(*a);
    a->cuMemAlloc = [](CUdeviceptr* p, size_t n) {
      if (n > (size_t{64} << 20))
        return CUDA_ERROR_OUT_OF_MEMORY;
      *p = reinterpret_cast<CUdeviceptr>(std::calloc(1, n == 0 ? 1 : n));
      return *p != 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
    };
#define GLEAM_FUZZ_FILL(name) fill(a->name);
    GLEAM_EXECUTOR_DRIVER_FUNCTIONS(GLEAM_FUZZ_FILL)
#undef GLEAM_FUZZ_FILL
    return a;
  }();
  return *api;
}

gleam::executor::executor& exec() {
  static auto* e = [] {
    auto made = gleam::executor::executor::make(driver(), 0);
    if (!made)
      std::abort();
    return made->release();
  }();
  return *e;
}

/// Reads the input: bytes, little-endian integers, length-prefixed blobs.
struct reader {
  const uint8_t* at;
  const uint8_t* end;

  bool empty() const {
    return at >= end;
  }
  uint8_t byte() {
    return empty() ? 0 : *at++;
  }
  std::string blob() {
    size_t n = byte();
    n |= static_cast<size_t>(byte()) << 8;
    n = std::min(n, static_cast<size_t>(end - at));
    std::string out(reinterpret_cast<const char*>(at), n);
    at += n;
    return out;
  }
};

bool reaches_vendor_library(const proto::Op& op) {
  switch (op.kind_case()) {
    case proto::Op::kBlasCreate:
    case proto::Op::kBlasDestroy:
    case proto::Op::kBlasSetStream:
    case proto::Op::kBlasSetWorkspace:
    case proto::Op::kBlasSetMathMode:
    case proto::Op::kBlasSetAtomicsMode:
    case proto::Op::kBlasGemm:
    case proto::Op::kBlasLtCreate:
    case proto::Op::kBlasLtDestroy:
    case proto::Op::kBlasLtMatmul:
    case proto::Op::kBlasLtHeuristic:
    case proto::Op::kBlasLtAlgoGetIds:
    case proto::Op::kBlasLtAlgoInit:
    case proto::Op::kBlasLtAlgoCheck:
    case proto::Op::kBlasLtAlgoAttribute:
    case proto::Op::kBlasLtTransform:
    case proto::Op::kBlasLtHeuristicsCache:
    case proto::Op::kLibraryCall:
      return true;
    default:
      return false;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto& ex = exec();
  reader in{data, data + size};
  std::vector<std::pair<uint64_t, std::string>> opened; // id, secret
  for (int steps = 0; !in.empty() && steps < 16; ++steps) {
    auto kind = in.byte() % 3;
    auto flags = in.byte();
    auto bytes = in.blob();
    const std::pair<uint64_t, std::string>* target =
      opened.empty() ? nullptr : &opened[flags % opened.size()];
    if (kind == 0) {
      proto::OpenSession req;
      if (!req.ParseFromString(bytes))
        continue;
      if ((flags & 0x80) != 0 && target != nullptr) {
        req.set_resume_session(target->first);
        if ((flags & 0x40) != 0)
          req.set_resume_secret(target->second);
      }
      auto r = ex.open_session(req);
      if (r && req.resume_session() == 0)
        opened.emplace_back(r->session(), r->secret());
      // A resume is granted only with the session's own secret.
      if (r && req.resume_session() != 0
          && (target == nullptr || req.resume_session() != target->first
              || req.resume_secret() != target->second)) {
        bool known = false;
        for (const auto& [id, secret] : opened)
          known = known || (id == req.resume_session() && secret == req.resume_secret());
        if (!known)
          std::abort();
      }
    } else if (kind == 1) {
      proto::OpBatch batch;
      if (!batch.ParseFromString(bytes))
        continue;
      auto* ops = batch.mutable_ops();
      for (int i = ops->size() - 1; i >= 0; --i)
        if (reaches_vendor_library(ops->Get(i)))
          ops->DeleteSubrange(i, 1);
      if ((flags & 0x80) != 0 && target != nullptr) {
        batch.set_session(target->first);
        if ((flags & 0x40) != 0)
          batch.set_session_secret(target->second);
      }
      bool proven = false;
      for (const auto& [id, secret] : opened)
        proven = proven || (id == batch.session() && secret == batch.session_secret());
      auto reply = ex.execute(batch);
      if (!proven && (reply.results_size() > 1
                      || (reply.results_size() == 1
                          && reply.results(0).status() != CUDA_ERROR_INVALID_CONTEXT)))
        std::abort();
    } else if (target != nullptr) {
      // A close, as the GPU server does it: only with the secret.
      auto secret = (flags & 0x40) != 0 ? target->second : bytes;
      if (ex.authenticate(target->first, secret)) {
        ex.close_session(target->first);
        opened.erase(opened.begin() + (target - opened.data()));
      } else if (secret == target->second) {
        std::abort(); // the session's own secret must authenticate it
      }
    }
  }
  for (const auto& [id, secret] : opened)
    ex.close_session(id);
  return 0;
}
