#!/bin/bash
cd /tmp/ab-dps2
for round in 1 2; do
  for tag in main dps2; do
    flock /tmp/heavy.lock java -jar /tmp/bench-$tag.jar "ListStateBenchmark.list(Add|Update)$|ValueStateBenchmark.valueGet$" -p backend=ROCKSDB,DISAGGREGATED -f 2 -wi 2 -i 4 -w 1s -r 1s -rf json -rff /tmp/ab-dps2/$tag-$round.json > /tmp/ab-dps2/$tag-$round.log 2>&1
  done
done
echo done > /tmp/ab-dps2/DONE
