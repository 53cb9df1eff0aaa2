#!/bin/bash
# A/B: jar before (bench-pr, e151423) and after (bench-map-new) map-read scan resistance, alternating
cd /tmp/ab-map
for round in 1 2 3; do
  for jar in pr map-new; do
    java -jar /tmp/bench-$jar.jar "MapStateBenchmark.(mapGet|mapContains)$" -p backend=ROCKSDB,LRU_0,LRU_50 \
      -p setupKeyCount=100000 -f 1 -wi 2 -i 4 -w 1s -r 1s -rf json -rff $jar-$round.json > $jar-$round.log 2>&1
  done
done
echo ALLDONE
