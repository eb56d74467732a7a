// Fuzz target: the fatbin parser (interpose/fatbin), which reads images the
// client registers and the server receives. Property: parse_image never
// reads outside the input, and every entry it accepts lies inside the image
// it reports, which lies inside the input.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "interpose/fatbin/fatbin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fb = gleam::interpose::fatbin;
  // A private copy, so that ASan catches a read one byte past the input.
  std::vector<uint8_t> copy(data, data + size);
  auto view = fb::parse_image(copy.data(), copy.size());
  if (!view)
    return 0;
  auto image = view->image();
  if (image.data != copy.data() || image.size > copy.size())
    std::abort();
  for (const auto& e : view->entries()) {
    if (e.payload_offset < e.header_offset
        || e.payload_offset > image.size
        || e.payload_size > image.size - e.payload_offset)
      std::abort();
    (void) e.arch_name();
    (void) e.runs_on(9, 0);
  }
  (void) view->best_match(9, 0);
  return 0;
}
