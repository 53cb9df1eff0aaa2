#!/bin/bash
# LRU_0 floor (issue 12): valueUpdate and mapContains, LRU_0 and RocksDB in the same invocation, 5 forks each
cd "$(dirname "$0")/../../.."
java -jar flink-state-benchmarks/target/benchmarks.jar "(ValueStateBenchmark.valueUpdate|MapStateBenchmark.mapContains)$" \
  -p backend=ROCKSDB,LRU_0 -p setupKeyCount=100000 -f 5 -wi 3 -i 5 -w 1s -r 1s \
  -rf json -rff docs/results/lru0-floor-5forks/lru0-5forks.json
