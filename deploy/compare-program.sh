# Sourced by gpu-check.sh and quick-check.sh, after hide-driver.sh. Defines
# compare_program PROGRAM: runs it locally (with $LOCAL_LIBS, if set, on
# LD_LIBRARY_PATH) and through Gleam with the driver hidden (gleamd on
# 127.0.0.1:$port, bundle $bundle), outputs in $out, and counts the result
# in $same / $differ.
compare_program() {
  local p=$1 name lrc grc
  name=$(basename "$p")
  LD_LIBRARY_PATH=${LOCAL_LIBS:-} "$p" > "$out/$name.local" 2>&1; lrc=$?
  unshare -m sh -c "$hide; GLEAM_CHECK_NO_DRIVER=1 GLEAM_SERVER=127.0.0.1:$port \
    '$bundle/bin/gleam-run' -- '$p'" > "$out/$name.gleam" 2>&1; grc=$?
  if [ $lrc -eq 0 ] && [ $grc -eq 0 ] && cmp -s "$out/$name.local" "$out/$name.gleam"; then
    same=$((same+1)); echo "same     $name: $(grep -m1 checksum "$out/$name.local")"
  else
    differ=$((differ+1)); echo "DIFFERS  $name (local rc=$lrc, gleam rc=$grc)"
    diff "$out/$name.local" "$out/$name.gleam" | head -12
  fi
}
