#!/bin/bash
# Whole-map reads of the LRU cache (issue 12), ROCKSDB, LRU_50 and LRU_100 in every invocation, the
# jars alternating. Jars (flink-state-benchmarks/target/benchmarks.jar built with
# `mvn -B package -DskipTests` at each commit): bench-now.jar at bb2478e (before complete map rows),
# bench-rows.jar at 49e364f (complete rows), bench-nocopy.jar at f2545ad (an iteration
# copies the cached user keys once, and not at all when the delegate has no entries).
# Run in the folder that holds the jars, then `python3 summary.py <set>` for each set.
set -e
run() { # set jar round keys
  mkdir -p $1
  java -jar bench-$2.jar "MapStateBenchmark.(mapIterator|mapKeys)$" -p backend=ROCKSDB,LRU_50,LRU_100 \
    -p setupKeyCount=$4 -f 2 -wi 3 -i 5 -w 1s -r 1s -rf json -rff $1/maps-$2-$3.json
}
for r in 1 2; do for j in now rows; do run 100k-a $j $r 100000; done; done
for r in 1 2; do for j in rows nocopy; do run 100k-b $j $r 100000; done; done
for r in 1 2 3; do for j in rows nocopy; do run 50k $j $r 50000; done; done
