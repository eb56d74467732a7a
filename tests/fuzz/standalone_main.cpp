// Replays a corpus through a fuzz target without libFuzzer: every regular
// file under each argument (a file or a directory) is one input. Exits 0 when
// every input ran; a crash or a failed check ends the process as it would
// under libFuzzer.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool run_file(const std::filesystem::path& p) {
  std::ifstream in{p, std::ios::binary};
  if (!in)
    return false;
  std::vector<char> bytes{std::istreambuf_iterator<char>{in}, {}};
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

} // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path arg{argv[i]};
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      for (const auto& e : fs::recursive_directory_iterator{arg})
        if (e.is_regular_file() && run_file(e.path()))
          ++inputs;
    } else if (run_file(arg)) {
      ++inputs;
    } else {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
      return 2;
    }
  }
  // An empty corpus would make this test pass vacuously.
  if (inputs == 0) {
    std::fprintf(stderr, "%s: no inputs found\n", argv[0]);
    return 2;
  }
  std::printf("%s: %zu inputs ran\n", argv[0], inputs);
  return 0;
}
