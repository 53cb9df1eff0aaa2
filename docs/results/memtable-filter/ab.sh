#!/bin/bash
# Alternates two benchmark jars in rounds, each invocation running ROCKSDB and DISAGGREGATED:
#   ab.sh <out-dir> <benchmark-regex> <forks> <tag-before> <tag-after>
# reads /tmp/bench-<tag>.jar, writes <out-dir>/<tag>-<round>.json; run alone on the machine.
out=$1; regex=$2; forks=$3; shift 3
mkdir -p "$out"
for round in 1 2; do
  for tag in "$@"; do
    flock /tmp/heavy.lock java -jar /tmp/bench-$tag.jar "$regex" -p backend=ROCKSDB,DISAGGREGATED \
      -f "$forks" -wi 2 -i 4 -w 1s -r 1s -rf json -rff "$out/$tag-$round.json" > "$out/$tag-$round.log" 2>&1
  done
done
