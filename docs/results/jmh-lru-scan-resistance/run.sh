#!/bin/bash
# LRU_0 / LRU_100 value operations, jar without (old) and with (new) scan resistance, alternating
for round in 1 2; do
  for jar in old new; do
    java -jar /tmp/bench-$jar.jar "(ValueStateBenchmark.valueGet|ValueStateBenchmark.valueUpdate)$" \
      -p backend=ROCKSDB,LRU_0,HASHMAP,LRU_100 -p setupKeyCount=100000 \
      -f 1 -wi 2 -i 4 -w 1s -r 1s -rf json -rff /tmp/jmh/$jar-$round.json > /tmp/jmh/$jar-$round.log 2>&1
  done
done
echo DONE
