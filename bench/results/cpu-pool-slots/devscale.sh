# Does one thread's kernel speed hold when 8 run at once? kernel_speed (Q4_1 rows of 1536,
# in L2 and streamed from memory) alone, then as 8 processes at once on CPUs 0-7, then on
# the even CPUs 0-14. .bench carried.
set -u
q41() { grep "^Q4_1" | grep -v prefetch | sed -n "1p;3p" | sed "s/ per 32 weights//; s/ *Avx[A-Za-z0-9]* *:/:/"; }
echo "== alone" >> $OUT/scale.txt
taskset -c 0 .bench/pool-new kernel_speed --ignored --nocapture 2>&1 | q41 >> $OUT/scale.txt
for set in "0 1 2 3 4 5 6 7" "0 2 4 6 8 10 12 14"; do
  echo "== 8 at once on CPUs $set" >> $OUT/scale.txt
  for c in $set; do (taskset -c $c .bench/pool-new kernel_speed --ignored --nocapture 2>&1 | q41 > /tmp/k$c.txt) & done; wait
  for c in $set; do echo "cpu $c: $(tr '\n' ' ' < /tmp/k$c.txt)" >> $OUT/scale.txt; done
done
cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list /sys/devices/system/cpu/cpu0/topology/core_siblings_list >> $OUT/scale.txt 2>&1
