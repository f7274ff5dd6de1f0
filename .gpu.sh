#!/bin/bash
# the proof run, from .wt/i22 in the device copy
L=$OUT/logs; mkdir -p $L
G="--arch sm_90 --jobs 16 --timeout 30"
{
rm -rf /tmp/g && mkdir -p /tmp/g
python3 scripts/lab.py make ch02 /tmp/g/sol --solution >/dev/null
python3 scripts/lab.py make ch02 /tmp/g/sol2 --solution >/dev/null
sed -i 's|    // LAB ch02.grid-stride {|    // LAB ch02.grid-stride {\n    // another student|' /tmp/g/sol2/ch02_vector_add/VA-GPU-NN.cu
sed -i 's|    // LAB ch02.one-per-block {|    // LAB ch02.one-per-block {\n    // another student|' /tmp/g/sol2/ch02_vector_add/VA-GPU-N1.cu
TIMEFORMAT="ONE-CH02-COLD %R s"; time python3 scripts/lab.py grade /tmp/g/sol --lab ch02 $G --work /tmp/w --out /tmp/g/r1; echo "rc=$?"
TIMEFORMAT="ONE-CH02-WARM-REF %R s"; time python3 scripts/lab.py grade /tmp/g/sol2 --lab ch02 $G --work /tmp/w --out /tmp/g/r2; echo "rc=$?"
cat /tmp/g/r2/results.json | head -30
ps -eo uid,pid,cmd | awk '$1>=61000' | head
} > $L/timing.log 2>&1
for ch in ch03 ch04 ch05 ch06 ch02; do
  LIMIT=65; [ $ch = ch02 ] && LIMIT=185
  timeout $LIMIT python3 scripts/lab.py selftest --labs $ch $G --work /tmp/lw > $L/selftest-$ch.log 2>&1; echo "$ch rc=$?" >> $L/summary.txt
  grep -E "SELFTEST FAIL|selftest:|graded in" $L/selftest-$ch.log >> $L/summary.txt
done
ps -eo uid,pid,cmd | awk '$1>=61000' >> $L/summary.txt
cat $L/summary.txt
