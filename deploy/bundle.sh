#!/usr/bin/env bash
# Makes a relocatable bundle of the build: binaries, the interposer
# libraries, test binaries and CUDA test programs, plus every non-system
# shared library they need, with rpath $ORIGIN/../lib. The layout mirrors
# build/ (bin/, lib/, tests/), so GLEAM_BUILD_DIR=<bundle> runs the tests
# from it on another machine (e.g. the GPU host).
#   deploy/bundle.sh [BUILD_DIR] [OUT_DIR]   -> OUT_DIR/gleam.tar.gz
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-dist}
root="$out/gleam"
rm -rf "$root"
mkdir -p "$root/bin" "$root/lib" "$root/tests"

copy_elf() { # file dest_dir
  cp -L "$1" "$2/"
  local f="$2/$(basename "$1")"
  chmod u+w "$f"
  strip --strip-debug "$f" 2>/dev/null || true
  patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN/../../lib' "$f"
}

for f in "$build"/bin/*; do [ -x "$f" ] && [ -f "$f" ] && copy_elf "$f" "$root/bin"; done
for f in "$build"/lib/*.so*; do [ -f "$f" ] && [ ! -L "$f" ] && copy_elf "$f" "$root/lib"; done
# Gleam's libcuda.so.1 in lib/driver/, off every RUNPATH (gleamd and the GPU
# tests dlopen the real driver); it finds libcudart.so.13 in lib/.
if [ -d "$build/lib/driver" ]; then
  mkdir -p "$root/lib/driver"
  for f in "$build"/lib/driver/*.so*; do
    if [ -L "$f" ]; then cp -P "$f" "$root/lib/driver/"; elif [ -f "$f" ]; then
      cp -L "$f" "$root/lib/driver/"; g="$root/lib/driver/$(basename "$f")"
      chmod u+w "$g"; strip --strip-debug "$g" 2>/dev/null || true
      patchelf --set-rpath '$ORIGIN/..' "$g"
    fi
  done
fi
# Keep the SONAME links (libcudart.so.13 -> libcudart.so.13.0.0; the same for
# libcublas.so.13, libcublasLt.so.13, libcurand.so.10, libcufft.so.12,
# libcusparse.so.12, libcusolver.so.12, libcudnn.so.9 and libnvidia-ml.so.1,
# which gleam-run preloads; the vendor's libraries are never bundled: the
# server loads the GPU host's own).
for f in "$build"/lib/*.so*; do
  [ -L "$f" ] && cp -P "$f" "$root/lib/"
done
for f in "$build"/tests/*; do [ -x "$f" ] && [ -f "$f" ] && copy_elf "$f" "$root/tests"; done
if [ -d "$build/tests/programs" ]; then
  mkdir -p "$root/tests/programs"
  for f in "$build"/tests/programs/*; do
    [ -f "$f" ] || continue
    if [ -x "$f" ]; then cp "$f" "$root/tests/programs/"; else cp "$f" "$root/tests/programs/"; fi
  done
  # programs.txt lists absolute build paths; rewrite them relative to the bundle.
  if [ -f "$root/tests/programs/programs.txt" ]; then
    sed -i "s|^.*/tests/programs/|tests/programs/|" "$root/tests/programs/programs.txt"
  fi
fi
# Data files tests and gleam-run --doctor read from the build tree
# (fatbins, every library's generated name lists: interpose/<lib>_*.txt).
find "$build" -maxdepth 3 \( -name '*.fatbin' -o -path "$build/interpose/*.txt" -o -name '*.map' \) -type f \
  -exec sh -c 'mkdir -p "$2/$(dirname "${1#$3/}")"; cp "$1" "$2/${1#$3/}"' _ {} "$root" "$build" \;
# Bench programs.
[ -d "$build/bench" ] && cp -r "$build/bench" "$root/bench"

# Non-system shared libraries, resolved here: everything ldd finds that is
# not part of glibc / the compiler runtime / the CUDA driver.
system_re='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libgcc_s|libstdc\+\+|libcuda\.so|libcudart\.so|libcublas|libcurand|libcufft|libcusparse|libcusolver|libnvidia-ml|libcudnn)'
for f in "$root"/bin/* "$root"/lib/*.so* "$root"/tests/*; do
  [ -f "$f" ] || continue
  ldd "$f" 2>/dev/null | awk '/=> \//{print $1" "$3}' | while read -r name path; do
    if [[ ! "$name" =~ $system_re ]] && [ ! -e "$root/lib/$name" ]; then
      cp -L "$path" "$root/lib/$name"
      chmod u+w "$root/lib/$name"
      patchelf --set-rpath '$ORIGIN' "$root/lib/$name"
    fi
  done
done
# Second pass: dependencies of the copied libraries.
for f in "$root"/lib/*.so*; do
  ldd "$f" 2>/dev/null | awk '/=> \//{print $1" "$3}' | while read -r name path; do
    if [[ ! "$name" =~ $system_re ]] && [ ! -e "$root/lib/$name" ]; then
      cp -L "$path" "$root/lib/$name"
      chmod u+w "$root/lib/$name"
      patchelf --set-rpath '$ORIGIN' "$root/lib/$name"
    fi
  done
done
cp -r deploy/examples "$root/examples"
cp -r deploy/systemd "$root/systemd"
cp README.md "$root/README.md"
tar -C "$out" -czf "$out/gleam.tar.gz" gleam
echo "bundle: $out/gleam.tar.gz ($(du -sh "$out/gleam.tar.gz" | cut -f1)); unpack and run gleam/bin/gleamd --config-file=gleam/examples/all-in-one.conf"
