#!/bin/bash
# LRU_100 hit path (issue 12): valueUpdate against HashMap in the same invocation, 5 forks each
cd "$(dirname "$0")/../../.."
java -jar flink-state-benchmarks/target/benchmarks.jar "ValueStateBenchmark.valueUpdate$" \
  -p backend=HASHMAP,LRU_100 -p setupKeyCount=100000 -f 5 -wi 3 -i 5 -w 1s -r 1s \
  -rf json -rff docs/results/lru100-valueupdate-5forks/lru100-5forks.json
