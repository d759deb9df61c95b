#!/bin/sh
# iomark's guest suite: runs inside the QEMU guest (tests/guest/run.sh),
# with cwd /out and the namespaces in IMK_{CONV,PI,ZNS,FDP}_{BDEV,CDEV,CTRL}.
#
# Each case runs its commands in /out/cases/NAME and keeps what they
# printed (LABEL.out, LABEL.err) and their exit status (LABEL.rc); it
# decides nothing. tests/it/guest.rs reads the cases back and checks each
# one (iomark's counts against fio's, zone reports, placement). The cases
# run in order on shared devices, so each leaves its namespace as the
# next expects (zones reset, no signature written).
export PATH=/payload:$PATH
CASES=/out/cases
mkdir -p $CASES
: > /out/cases.txt
up() { cut -d' ' -f1 /proc/uptime; }

# case NAME: starts a case (its directory becomes the working directory).
case_begin() {
  CASE=$1; CASE_T0=$(up)
  mkdir -p "$CASES/$CASE" && cd "$CASES/$CASE" || exit 1
  echo "$CASE" >> /out/cases.txt
}
case_end() {
  echo "CASE $CASE $(awk -v a="$CASE_T0" -v b="$(up)" 'BEGIN{printf "%.1f", b-a}') s"
  cd /out
}
# run LABEL CMD...: runs CMD, keeping its output and status as LABEL.*.
run() {
  l=$1; shift
  echo "$*" > "$l.cmd"
  "$@" > "$l.out" 2> "$l.err"
  echo $? > "$l.rc"
}
# zones of the zoned namespace, as blkzone prints them, into LABEL.zones
zones() { blkzone report "$IMK_ZNS_BDEV" > "$1.zones" 2>&1; }
reset_zones() { blkzone reset "$IMK_ZNS_BDEV"; }

# --- the environment the other cases rely on ------------------------------
case_begin env
run fio fio --version
run nvme nvme list
run iomark iomark --version
zones before
run lsblk sh -c 'for b in /sys/block/nvme*; do echo "${b##*/} zoned=$(cat $b/queue/zoned) max_open=$(cat $b/queue/max_open_zones) chunk=$(cat $b/queue/chunk_sectors) lbs=$(cat $b/queue/logical_block_size)"; done'
case_end

# --- conventional namespace, block device: iomark and fio do the same I/O --
case_begin conv-bdev-randwrite-verify
J="--name=rw --filename=$IMK_CONV_BDEV --ioengine=psync --direct=1 --rw=randwrite --bs=4k --size=8m --verify=crc32c --output-format=json"
run iomark iomark $J
run fio fio $J
case_end

# --- passthrough works in this guest (fio's io_uring_cmd) ------------------
case_begin fio-uring-cmd-randread
run fio fio --name=pt --filename="$IMK_CONV_CDEV" --ioengine=io_uring_cmd --cmd_type=nvme \
  --rw=randread --bs=4k --iodepth=8 --size=8m --output-format=json
case_end

# --- FDP: the subsystem reports its reclaim unit handles -------------------
case_begin fdp-env
run status nvme fdp status "$IMK_FDP_BDEV"
run configs nvme fdp configs "$IMK_FDP_CTRL" -e 1
case_end

sync
touch /out/suite.done
