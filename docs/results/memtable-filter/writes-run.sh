#!/bin/bash
cd /tmp/ab-w
for round in 1 2; do
  for tag in main cursor; do
    flock /tmp/heavy.lock java -jar /tmp/bench-$tag.jar "ValueStateBenchmark.valueUpdate$|ListStateBenchmark.list(Append|Update)$" -p backend=ROCKSDB,DISAGGREGATED -f 2 -wi 2 -i 4 -w 1s -r 1s -rf json -rff /tmp/ab-w/$tag-$round.json > /tmp/ab-w/$tag-$round.log 2>&1
  done
done
echo done > /tmp/ab-w/DONE
