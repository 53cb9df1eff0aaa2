#!/bin/bash
cd /tmp/ab-dps
for round in 1 2; do
  for tag in main dps; do
    flock /tmp/heavy.lock java -jar /tmp/bench-$tag.jar "ListStateBenchmark.list(Add|Update|Get)$" -p backend=ROCKSDB,DISAGGREGATED -f 2 -wi 2 -i 4 -w 1s -r 1s -rf json -rff /tmp/ab-dps/$tag-$round.json > /tmp/ab-dps/$tag-$round.log 2>&1
  done
done
echo done > /tmp/ab-dps/DONE
