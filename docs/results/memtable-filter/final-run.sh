#!/bin/bash
cd /tmp/ab-final
for round in 1 2; do
  for tag in main lazy; do
    flock /tmp/heavy.lock java -jar /tmp/bench-$tag.jar "ValueStateBenchmark.valueGet$|ListStateBenchmark.listGet(AndIterate)?$" -p backend=ROCKSDB,DISAGGREGATED -f 2 -wi 2 -i 4 -w 1s -r 1s -rf json -rff /tmp/ab-final/$tag-$round.json > /tmp/ab-final/$tag-$round.log 2>&1
  done
done
echo done > /tmp/ab-final/DONE
