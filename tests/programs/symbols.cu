// __device__ and __constant__ variables: cudaMemcpyToSymbol/FromSymbol
// (with offsets, sync and async), cudaGetSymbolAddress, cudaGetSymbolSize.
#include "common.cuh"

#include <vector>

__device__ int device_counter;
__device__ float device_table[256];
__constant__ int constant_coeffs[16];
__constant__ double constant_scale;

__global__ void use_symbols(float* out) {
  int i = threadIdx.x;
  float v = device_table[i] * static_cast<float>(constant_coeffs[i % 16]);
  out[i] = v * static_cast<float>(constant_scale);
  atomicAdd(&device_counter, 1);
}

int main() {
  gleam_program::checksum sum;
  std::vector<float> table(256);
  for (int i = 0; i < 256; ++i)
    table[i] = 0.5f * static_cast<float>(i) - 3.0f;
  int coeffs[16];
  for (int i = 0; i < 16; ++i)
    coeffs[i] = i - 8;
  double scale = 0.125;
  int zero = 0;

  GLEAM_PROGRAM_CHECK(cudaMemcpyToSymbol(device_table, table.data(),
                                         table.size() * sizeof(float)));
  GLEAM_PROGRAM_CHECK(cudaMemcpyToSymbol(constant_coeffs, coeffs, sizeof coeffs));
  GLEAM_PROGRAM_CHECK(cudaMemcpyToSymbol(constant_scale, &scale, sizeof scale));
  GLEAM_PROGRAM_CHECK(cudaMemcpyToSymbol(device_counter, &zero, sizeof zero));
  // Overwrite the second half of the coefficients through an offset.
  int tail[8] = {100, 101, 102, 103, 104, 105, 106, 107};
  GLEAM_PROGRAM_CHECK(cudaMemcpyToSymbol(constant_coeffs, tail, sizeof tail,
                                         8 * sizeof(int)));

  size_t table_size = 0;
  GLEAM_PROGRAM_CHECK(cudaGetSymbolSize(&table_size, device_table));
  GLEAM_PROGRAM_EXPECT(table_size == 256 * sizeof(float), "symbol size");
  std::printf("device_table size %zu bytes\n", table_size);
  sum.add_value(table_size);
  float* table_addr = nullptr;
  GLEAM_PROGRAM_CHECK(
      cudaGetSymbolAddress(reinterpret_cast<void**>(&table_addr), device_table));

  float* out = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&out, 256 * sizeof(float)));
  use_symbols<<<1, 256>>>(out);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  use_symbols<<<1, 256>>>(out);
  GLEAM_PROGRAM_CHECK_LAUNCH();
  std::vector<float> host(256);
  GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), out, 256 * sizeof(float),
                                 cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(host[9] == table[9] * 101.0f * 0.125f, "symbol values");
  sum.add(host.data(), 256 * sizeof(float));

  int counter = 0;
  GLEAM_PROGRAM_CHECK(cudaMemcpyFromSymbol(&counter, device_counter, sizeof counter));
  std::printf("device_counter after two launches: %d\n", counter);
  GLEAM_PROGRAM_EXPECT(counter == 512, "atomic counter");
  sum.add_value(counter);

  // The symbol address is an ordinary device pointer.
  GLEAM_PROGRAM_CHECK(cudaMemset(table_addr + 128, 0, 128 * sizeof(float)));
  std::vector<float> table_back(256);
  cudaStream_t stream;
  GLEAM_PROGRAM_CHECK(cudaStreamCreate(&stream));
  GLEAM_PROGRAM_CHECK(cudaMemcpyFromSymbolAsync(
      table_back.data(), device_table, 256 * sizeof(float), 0,
      cudaMemcpyDeviceToHost, stream));
  int coeffs_back[4] = {};
  GLEAM_PROGRAM_CHECK(cudaMemcpyFromSymbolAsync(
      coeffs_back, constant_coeffs, sizeof coeffs_back, 6 * sizeof(int),
      cudaMemcpyDeviceToHost, stream));
  GLEAM_PROGRAM_CHECK(cudaStreamSynchronize(stream));
  GLEAM_PROGRAM_EXPECT(table_back[127] == table[127] && table_back[128] == 0.0f,
                       "memset through symbol address");
  GLEAM_PROGRAM_EXPECT(coeffs_back[0] == -2 && coeffs_back[2] == 100,
                       "constant read with offset");
  sum.add(table_back.data(), 256 * sizeof(float));
  sum.add(coeffs_back, sizeof coeffs_back);
  std::printf("symbols: ok\n");

  GLEAM_PROGRAM_CHECK(cudaStreamDestroy(stream));
  GLEAM_PROGRAM_CHECK(cudaFree(out));
  sum.print("symbols");
  return 0;
}
