#!/bin/bash
# A/B: jar before (bench-cur) and after (bench-lru-new) the blind value write admission, alternating
cd /tmp/ab-blind
for round in 1 2 3; do
  for jar in cur lru-new; do
    java -jar /tmp/bench-$jar.jar "ValueStateBenchmark.valueUpdate$" -p backend=ROCKSDB,LRU_0,LRU_50,LRU_100,HASHMAP \
      -p setupKeyCount=100000 -f 1 -wi 2 -i 4 -w 1s -r 1s -rf json -rff $jar-$round.json > $jar-$round.log 2>&1
  done
done
echo ALLDONE
