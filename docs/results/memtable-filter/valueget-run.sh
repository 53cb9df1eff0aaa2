#!/bin/bash
cd /tmp/ab-mm
for round in 1 2; do
  for tag in lazy mm; do
    flock /tmp/heavy.lock java -jar /tmp/bench-$tag.jar "ValueStateBenchmark.valueGet$" -p backend=ROCKSDB,DISAGGREGATED -f 3 -wi 2 -i 4 -w 1s -r 1s -rf json -rff /tmp/ab-mm/$tag-$round.json > /tmp/ab-mm/$tag-$round.log 2>&1
  done
done
echo done > /tmp/ab-mm/DONE
