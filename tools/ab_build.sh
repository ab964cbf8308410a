#!/usr/bin/env bash
# tools/ab_build.sh OLD_SRC: configure and build the benchmark of an older source tree (OLD_SRC, e.g.
# from `git archive REV | tar -x -C .ab/old`) into build-ab-old and of this tree into build-ab-new
# (with the examples), both at once, half the cores each. Sourced by tools/bench_ab.sh and
# tools/ab_sass.sh; logs in $OUT. Exits the caller on a failed configure or build.
ab_build() {
  local old=$1 side src
  for side in old new; do
    src=$([ $side = old ] && echo "$old" || echo .)
    cmake -S "$src" -B build-ab-$side -G Ninja -DCMAKE_BUILD_TYPE=Release -DHIPATTN_BACKEND=cuda \
      -DHIPATTN_BUILD_TESTS=OFF -DHIPATTN_BUILD_EXAMPLES=$([ $side = new ] && echo ON || echo OFF) \
      >"$OUT/ab_configure_$side.log" 2>&1 || { tail -20 "$OUT/ab_configure_$side.log"; exit 1; }
  done
  (cmake --build build-ab-old -j $(( $(nproc) / 2 )) --target hipattn_bench >"$OUT/ab_build_old.log" 2>&1
   echo $? >"$OUT/ab_build_old.rc") &
  cmake --build build-ab-new -j $(( $(nproc) / 2 )) --target hipattn_bench "${AB_NEW_TARGETS[@]}" \
    >"$OUT/ab_build_new.log" 2>&1
  echo $? >"$OUT/ab_build_new.rc"
  wait
  for side in old new; do
    [ "$(cat "$OUT/ab_build_$side.rc")" = 0 ] || { grep -E "error|FAILED" "$OUT/ab_build_$side.log" | head -20; exit 1; }
  done
}
