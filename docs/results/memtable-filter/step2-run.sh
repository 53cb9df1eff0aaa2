#!/bin/bash
cd /tmp/ab-cur
for round in 1 2; do
  for tag in mfilter cursor; do
    flock /tmp/heavy.lock java -jar /tmp/bench-$tag.jar "ListStateBenchmark.listGet(AndIterate)?$" -p backend=ROCKSDB,DISAGGREGATED -f 2 -wi 2 -i 4 -w 1s -r 1s -rf json -rff /tmp/ab-cur/$tag-$round.json > /tmp/ab-cur/$tag-$round.log 2>&1
  done
done
echo done > /tmp/ab-cur/DONE
