#!/bin/bash
# Point operations at 100% hits against HashMap (issue 12), away from the 100,000-key setting whose
# fork scores spread 4x: 50,000 and 200,000 keys, HASHMAP and LRU_100 in every invocation, 3 forks.
# Run in a folder holding the benchmarks jar (flink-state-benchmarks/target/benchmarks.jar) as
# bench.jar, then `python3 summary.py .`.
set -e
B="(ValueStateBenchmark.valueGet|ValueStateBenchmark.valueUpdate|ListStateBenchmark.listAppend|MapStateBenchmark.mapGet)$"
for n in 50000 200000; do
  java -jar bench.jar "$B" -p backend=HASHMAP,LRU_100 -p setupKeyCount=$n -f 3 -wi 3 -i 5 -w 1s -r 1s \
    -rf json -rff keys-$n.json
done

# Tried and dropped: cached lists started with room for 10 elements (list-capacity-tried.diff, on
# f2545ad) against f2545ad, listAppend at 200,000 keys, two rounds alternating the jars:
# for r in 1 2; do for j in before cap; do
#   java -jar bench-$j.jar "ListStateBenchmark.listAppend$" -p backend=HASHMAP,LRU_100 -p setupKeyCount=200000 \
#     -f 3 -wi 3 -i 5 -w 1s -r 1s -rf json -rff list-cap-$j-$r.json
# done; done
# python3 summary.py . "list-cap-*.json"
