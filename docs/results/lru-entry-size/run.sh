#!/bin/bash
# LRU_100 valueUpdate against HashMap (issue 12): the 72-byte entries (bench-before.jar, 422f18e) against
# the 56-byte entries (bench-after.jar, 93aaefd), alternating, HASHMAP and LRU_100 in every invocation.
# Build each jar with `mvn -B package -DskipTests` at its commit (flink-state-benchmarks/target/benchmarks.jar).
set -e
run() { # jar tag extra-args...
  local jar=$1 tag=$2; shift 2
  java -jar bench-$jar.jar "ValueStateBenchmark.valueUpdate$" -p backend=HASHMAP,LRU_100 "$@" -rf json -rff $tag.json
}
for r in 1 2 3; do for j in before after; do run $j ab-$j-$r -p setupKeyCount=100000 -f 2 -wi 3 -i 5 -w 1s -r 1s; done; done
for r in 1 2; do for j in before after; do run $j gc-$j-$r -p setupKeyCount=100000 -f 2 -wi 3 -i 5 -w 1s -r 1s -gc true; done; done
for r in 1 2; do for j in before after; do run $j thp-$j-$r -p setupKeyCount=100000 -f 3 -wi 3 -i 5 -w 1s -r 1s -jvmArgsAppend "-XX:+UseTransparentHugePages"; done; done
for n in 25000 50000 200000; do for j in before after; do run $j keys-$n-$j -p setupKeyCount=$n -f 3 -wi 3 -i 5 -w 1s -r 1s; done; done
