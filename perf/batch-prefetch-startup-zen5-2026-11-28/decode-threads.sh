#!/bin/bash
cd /work/main
for w in f32 bf16 int8; do
  echo "### weights=$w $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  /tmp/trainbench -decode -no-torch -weights $w -ctx 64,512 -tokens 32 -rounds 3 -threads 1,2 2>&1
done
echo "### end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
