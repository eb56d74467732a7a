#!/usr/bin/env bash
# Installs every package Gleam needs (Debian 12) and builds it into build/.
#   deploy/setup.sh            install + configure + build
#   GLEAM_WERROR=ON deploy/setup.sh   warnings as errors (CI)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  build-essential cmake ninja-build pkg-config python3
  libcaf-dev libprotobuf-dev protobuf-compiler librocksdb-dev libfmt-dev
  catch2 libxxhash-dev libzstd-dev libssl-dev gnuplot-nox binutils patchelf clang
)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cuda_root="${GLEAM_CUDA_ROOT:-/usr/local/cuda}"
if [ ! -f "$cuda_root/include/cuda_runtime_api.h" ]; then
  cat >&2 <<MSG
setup: the CUDA 13 toolkit is missing: $cuda_root/include/cuda_runtime_api.h not found.
  Gleam builds against the toolkit's headers (no GPU is needed on this machine).
  Install the CUDA 13 toolkit (NVIDIA's cuda-toolkit-13-0 package) at /usr/local/cuda,
  or point GLEAM_CUDA_ROOT at an existing one, then run deploy/setup.sh again.
MSG
  exit 1
fi
if [ ! -x "$cuda_root/bin/nvcc" ]; then
  echo "setup: note: $cuda_root/bin/nvcc not found; the CUDA test programs will not be built." >&2
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGLEAM_CUDA_ROOT="$cuda_root" -DGLEAM_WERROR="${GLEAM_WERROR:-OFF}" >/dev/null
jobs="${GLEAM_JOBS:-$(nproc)}"
ninja -C build -j"$jobs"
echo "setup: built into build/ (binaries in build/bin, libcudart.so.13 in build/lib)"
