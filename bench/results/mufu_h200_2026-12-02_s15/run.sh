set -x
cd .dev/mufu && nvcc -O3 -arch=sm_90a mufu.cu -o mufu && cuobjdump -sass mufu | grep -E "MUFU|F2F|HADD2|PRMT" | sort | uniq -c | sort -rn | head -20
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm --format=csv
./mufu; ./mufu
