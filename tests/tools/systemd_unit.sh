#!/usr/bin/env bash
# deploy/systemd/gleamd@.service passes `systemd-analyze verify` as an
# instance, with its ExecStart pointed at the built gleamd (the unit names
# /opt/gleam, where the README installs the bundle). Any complaint about
# the unit fails the test, warnings included. Exit 77 (skipped) without
# systemd-analyze.
set -u
src=${1:?usage: systemd_unit.sh <source dir> <build dir>}
build=${2:?usage: systemd_unit.sh <source dir> <build dir>}
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd-analyze not installed: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unit="$tmp/gleamd@check.service"
sed "s#/opt/gleam/bin/gleamd#$build/bin/gleamd#" "$src/deploy/systemd/gleamd@.service" > "$unit"
grep -q "^ExecStart=$build/bin/gleamd " "$unit" || { echo "no ExecStart of /opt/gleam/bin/gleamd"; exit 1; }
out=$(systemd-analyze verify "$unit" 2>&1)
rc=$?
echo "$out"
if [ $rc -ne 0 ] || grep -q "gleamd@check.service" <<<"$out"; then
  echo "systemd-analyze verify: the unit has problems (rc=$rc)"
  exit 1
fi
echo "systemd-analyze verify: clean"
