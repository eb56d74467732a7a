// Argument packing: scalars of every width, structs by value with odd sizes
// and alignments, arrays inside structs, pointers, templates, a kernel with
// many parameters and one with a 4 KiB parameter. Each kernel stores every
// field it received, as 64-bit values, so the host can compare them.
#include "common.cuh"

#include <vector>

struct three_chars {
  char a, b, c;
};

struct char_double {
  char tag;
  double value;
};

struct short_char {
  short s;
  char c;
};

struct with_array {
  int values[5];
  char tag;
};

struct __align__(16) aligned_quad {
  float x, y, z, w;
};

struct nested {
  three_chars head;
  char_double middle;
  unsigned long long tail;
};

struct big_param {
  int values[1024];
};

using i64 = long long;

__device__ i64 bits(double d) {
  return __double_as_longlong(d);
}

__device__ i64 bits(float f) {
  return __float_as_int(f);
}

__global__ void scalars(i64* out, char c, unsigned char uc, short s,
                        unsigned short us, int i, unsigned u, i64 l,
                        unsigned long long ul, float f, double d, bool flag) {
  out[0] = c;
  out[1] = uc;
  out[2] = s;
  out[3] = us;
  out[4] = i;
  out[5] = u;
  out[6] = l;
  out[7] = static_cast<i64>(ul);
  out[8] = bits(f);
  out[9] = bits(d);
  out[10] = flag ? 1 : 0;
}

__global__ void structs(i64* out, three_chars t, char c, char_double cd,
                        short_char sc, with_array wa, aligned_quad q,
                        nested n) {
  int k = 0;
  out[k++] = t.a;
  out[k++] = t.b;
  out[k++] = t.c;
  out[k++] = c;
  out[k++] = cd.tag;
  out[k++] = bits(cd.value);
  out[k++] = sc.s;
  out[k++] = sc.c;
  for (int v : wa.values)
    out[k++] = v;
  out[k++] = wa.tag;
  out[k++] = bits(q.x);
  out[k++] = bits(q.y);
  out[k++] = bits(q.z);
  out[k++] = bits(q.w);
  out[k++] = n.head.a;
  out[k++] = n.head.c;
  out[k++] = n.middle.tag;
  out[k++] = bits(n.middle.value);
  out[k++] = static_cast<i64>(n.tail);
}

__global__ void pointers(i64* out, const int* in, int* const inout,
                         const double* dbl, const void* opaque) {
  out[0] = in[0] + in[1];
  inout[0] *= 2;
  out[1] = bits(dbl[0] * 2.0);
  out[2] = *static_cast<const unsigned char*>(opaque);
}

template <class T, int Scale>
__global__ void scaled(i64* out, T value, int slot) {
  out[slot] = static_cast<i64>(value * static_cast<T>(Scale));
}

template <>
__global__ void scaled<aligned_quad, 2>(i64* out, aligned_quad value, int slot) {
  out[slot] = bits(value.x * 2.0f + value.w);
}

__global__ void many(i64* out, char a0, int a1, short a2, double a3, char a4,
                     i64 a5, float a6, char a7, short a8, int a9, char a10,
                     double a11, unsigned char a12, i64 a13, short a14,
                     float a15, char a16, int a17, char a18, double a19) {
  out[0] = a0 + a1 + a2 + a4 + a5 + a7 + a8 + a9 + a10 + a12 + a13 + a14 + a16
           + a17 + a18;
  out[1] = bits(a3 + a6 + a11 + a15 + a19);
}

__global__ void big(i64* out, big_param p, char after) {
  i64 total = 0;
  for (int v : p.values)
    total = total * 31 + v;
  out[0] = total;
  out[1] = p.values[1023];
  out[2] = after;
}

int main() {
  gleam_program::checksum sum;
  constexpr int slots = 64;
  i64* out = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&out, slots * sizeof(i64)));
  std::vector<i64> host(slots);
  auto fetch = [&](const char* what) {
    GLEAM_PROGRAM_CHECK_LAUNCH();
    GLEAM_PROGRAM_CHECK(cudaMemcpy(host.data(), out, slots * sizeof(i64),
                                   cudaMemcpyDeviceToHost));
    sum.add(host.data(), slots * sizeof(i64));
    std::printf("%s: %lld %lld %lld\n", what, host[0], host[1], host[2]);
    GLEAM_PROGRAM_CHECK(cudaMemset(out, 0, slots * sizeof(i64)));
  };
  GLEAM_PROGRAM_CHECK(cudaMemset(out, 0, slots * sizeof(i64)));

  scalars<<<1, 1>>>(out, static_cast<char>(-5), 250, -30000, 65000,
                    -2000000000, 4000000000u, -9000000000000000000ll,
                    18000000000000000000ull, 1.5f, -2.25e300, true);
  fetch("scalars");
  GLEAM_PROGRAM_EXPECT(host[0] == -5 && host[1] == 250 && host[2] == -30000
                           && host[6] == -9000000000000000000ll && host[10] == 1,
                       "scalar values");

  three_chars t{1, 2, 3};
  char_double cd{'x', 3.25};
  short_char sc{-12345, 'q'};
  with_array wa{{10, 20, 30, 40, 50}, 'w'};
  aligned_quad q{1.0f, 2.0f, 3.0f, 4.0f};
  nested n{{7, 8, 9}, {'n', -0.5}, 0xfedcba9876543210ull};
  structs<<<1, 1>>>(out, t, 'c', cd, sc, wa, q, n);
  fetch("structs");
  GLEAM_PROGRAM_EXPECT(host[2] == 3 && host[3] == 'c' && host[6] == -12345
                           && host[12] == 50 && host[13] == 'w',
                       "struct fields");

  int in_host[2] = {40, 2};
  int inout_host = 21;
  double dbl_host = 1.25;
  unsigned char opaque_host = 0xab;
  int* in = nullptr;
  int* inout = nullptr;
  double* dbl = nullptr;
  unsigned char* opaque = nullptr;
  GLEAM_PROGRAM_CHECK(cudaMalloc(&in, sizeof in_host));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&inout, sizeof(int)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&dbl, sizeof(double)));
  GLEAM_PROGRAM_CHECK(cudaMalloc(&opaque, 1));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(in, in_host, sizeof in_host, cudaMemcpyHostToDevice));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(inout, &inout_host, sizeof(int), cudaMemcpyHostToDevice));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(dbl, &dbl_host, sizeof(double), cudaMemcpyHostToDevice));
  GLEAM_PROGRAM_CHECK(cudaMemcpy(opaque, &opaque_host, 1, cudaMemcpyHostToDevice));
  pointers<<<1, 1>>>(out, in, inout, dbl, opaque);
  fetch("pointers");
  GLEAM_PROGRAM_CHECK(cudaMemcpy(&inout_host, inout, sizeof(int), cudaMemcpyDeviceToHost));
  GLEAM_PROGRAM_EXPECT(host[0] == 42 && inout_host == 42 && host[2] == 0xab,
                       "pointer arguments");
  sum.add_value(inout_host);

  scaled<int, 3><<<1, 1>>>(out, 14, 0);
  scaled<double, 10><<<1, 1>>>(out, 0.5, 1);
  scaled<short, 7><<<1, 1>>>(out, static_cast<short>(-6), 2);
  scaled<aligned_quad, 2><<<1, 1>>>(out, q, 3);
  fetch("templates");
  GLEAM_PROGRAM_EXPECT(host[0] == 42 && host[1] == 5 && host[2] == -42,
                       "template instances");

  many<<<1, 1>>>(out, 1, 2, 3, 0.5, 4, 5, 0.25f, 6, 7, 8, 9, 1.0, 10, 11, 12,
                 2.0f, 13, 14, 15, 4.0);
  fetch("many parameters");
  GLEAM_PROGRAM_EXPECT(host[0] == 120, "sum of integer parameters");

  big_param p;
  for (int i = 0; i < 1024; ++i)
    p.values[i] = i * 3 - 1000;
  big<<<1, 1>>>(out, p, 'z');
  fetch("4 KiB parameter");
  GLEAM_PROGRAM_EXPECT(host[1] == 1023 * 3 - 1000 && host[2] == 'z',
                       "big parameter");

  for (void* ptr : {static_cast<void*>(in), static_cast<void*>(inout),
                    static_cast<void*>(dbl), static_cast<void*>(opaque),
                    static_cast<void*>(out)})
    GLEAM_PROGRAM_CHECK(cudaFree(ptr));
  sum.print("kernel_args");
  return 0;
}
