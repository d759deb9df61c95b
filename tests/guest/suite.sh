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
# The names the guest's kernel gave the namespaces (found by serial number
# in /init; the probe order varies), for the checks on the host.
env | grep -E '^IMK_[A-Z0-9]+_(BDEV|CDEV|CTRL)=' | sort > /out/devices.env
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

# --- io_uring_cmd: iomark and fio do the same I/O on /dev/ngXnY ----------
# each: iomark and fio with the same options (JSON output)
both() {
  run iomark iomark "$@" --output-format=json
  run fio fio "$@" --output-format=json
}
PT="--filename=$IMK_CONV_CDEV --ioengine=io_uring_cmd --cmd_type=nvme"
case_begin uring-cmd-randread
both --name=rr $PT --rw=randread --bs=4k --iodepth=8 --size=8m
case_end
case_begin uring-cmd-randwrite-verify
both --name=rw $PT --rw=randwrite --bs=4k --iodepth=16 --size=8m --verify=crc32c
case_end
case_begin uring-cmd-fixedbufs-sqpoll
both --name=fx $PT --rw=randwrite --bs=8k --iodepth=16 --size=8m --fixedbufs --registerfiles \
  --sqthread_poll --verify=md5
case_end
case_begin uring-cmd-vectored-batches
both --name=vb $PT --rw=randwrite --bs=16k --iodepth=32 --size=8m --nonvectored=0 \
  --iodepth_batch_submit=8 --iodepth_batch_complete_min=4 --iodepth_batch_complete_max=16 \
  --verify=crc32c
case_end
case_begin uring-cmd-hipri
both --name=hp $PT --rw=randread --bs=4k --iodepth=8 --size=4m --hipri
case_end
case_begin uring-cmd-zipf-rate-logs
ZR="--name=zr $PT --rw=randread --bs=4k --iodepth=4 --size=4m --random_distribution=zipf:1.2 --rate_iops=4000 --log_avg_msec=100"
run iomark iomark $ZR --write_bw_log=iomark --write_lat_log=iomark --output-format=json
run fio fio $ZR --write_bw_log=fio --write_lat_log=fio --output-format=json
ls > files.out
case_end
# a write away from a zone's write pointer: the NVMe status is named
case_begin uring-cmd-nvme-status
run iomark iomark --name=st --filename="$IMK_ZNS_CDEV" --ioengine=io_uring_cmd --rw=write \
  --offset=64k --bs=4k --size=4k --output-format=json
# nowait means nothing to passthrough commands: refused (fio 3.33 takes it)
run nowait iomark --name=nw $PT --rw=read --size=64k --nowait=1
run fionowait fio --name=nw $PT --rw=read --size=64k --nowait=1
case_end

# --- per-I/O priorities (cmdprio*): Linux fails a passthrough command that
# carries a priority (EINVAL), so iomark refuses cmdprio with io_uring_cmd;
# fio 3.33 takes it and fails; a job priority (prio, prioclass) is not
# sent with the commands and runs. On the block device libaio and io_uring
# give the same I/Os at the same priorities as fio (JSON prios arrays).
case_begin cmdprio-uring-cmd
CU="--name=cp $PT --rw=randread --bs=4k --iodepth=8 --size=8m --cmdprio_percentage=30 --cmdprio_class=1 --cmdprio=2 --output-format=json"
run iomark iomark $CU
run fio fio $CU
run jobprio iomark --name=jp $PT --rw=randread --bs=4k --iodepth=8 --size=1m --prioclass=2 --prio=4 \
  --output-format=json
case_end
case_begin cmdprio-bdev
for e in libaio io_uring; do
  CP="--name=cb --filename=$IMK_CONV_BDEV --direct=1 --rw=randread --bs=4k --iodepth=8 --size=8m --ioengine=$e --cmdprio_percentage=40 --cmdprio_class=3 --cmdprio=0"
  run iomark-$e iomark $CP --output-format=json
  run fio-$e fio $CP --output-format=json
done
CW="--name=cw --filename=$IMK_CONV_BDEV --direct=1 --rw=randwrite --bs=4k --iodepth=8 --size=4m --ioengine=io_uring --cmdprio_bssplit=4k/40 --cmdprio_class=2 --cmdprio=5"
run iomark-w iomark $CW --output-format=json
run fio-w fio $CW --output-format=json
case_end

# --- zonemode=zbd on the zoned namespace (32 zones of 4 MiB, 3 MiB of
# capacity, at most 8 open). Each job starts on reset zones; iomark's and
# fio's runs are compared, and the zones are reported after each.
ZB="--filename=$IMK_ZNS_BDEV --ioengine=psync --direct=1 --zonemode=zbd"
ZC="--filename=$IMK_ZNS_CDEV --ioengine=io_uring_cmd --zonemode=zbd"
# zbd_both ARGS: iomark then fio, each on reset zones, zones after each, their
# write_iolog traces kept as iomark-NAME and fio-NAME
zbd_both() {
  reset_zones
  run iomark iomark "$@" --output-format=json,normal
  zones iomark
  for f in *.iolog; do [ -e "$f" ] && mv "$f" "iomark-$f"; done
  reset_zones
  run fio fio "$@" --output-format=json,normal
  zones fio
  for f in *.iolog; do case "$f" in iomark-*) ;; *) [ -e "$f" ] && mv "$f" "fio-$f" ;; esac; done
}
case_begin zbd-seq-write
zbd_both --name=seq $ZB --rw=write --bs=64k --size=32m --loops=2 --write_iolog=seq.iolog
case_end
case_begin zbd-rand-write
zbd_both --name=rnd $ZB --rw=randwrite --bs=16k --size=16m --max_open_zones=4 --write_iolog=rnd.iolog
case_end
case_begin zbd-max-open
zbd_both --name=mo $ZB --rw=randwrite --bs=4k --size=32m --io_size=8m --max_open_zones=2 \
  --write_iolog=mo.iolog
case_end
# a job limit under the device's (8, the global limit when max_open_zones
# is not given); a global limit beyond the device's with ignore_zone_limits
case_begin zbd-job-max-open
zbd_both --name=jm $ZB --rw=randwrite --bs=4k --size=32m --io_size=8m --job_max_open_zones=3 \
  --write_iolog=jm.iolog
case_end
case_begin zbd-ignore-limits
zbd_both --name=il $ZB --rw=write --bs=64k --size=16m --max_open_zones=9 --ignore_zone_limits=1
case_end
case_begin zbd-uring-cmd
zbd_both --name=pt $ZC --rw=write --bs=64k --size=16m --loops=2 --iodepth=1
case_end
case_begin zbd-verify-read
zbd_both --name=vf $ZB --rw=randwrite --bs=4k --size=16m --verify=crc32c
run iomarkread iomark --name=rd $ZB --rw=randread --bs=4k --size=16m --output-format=json
run fioread fio --name=rd $ZB --rw=randread --bs=4k --size=16m --output-format=json
case_end
# several jobs on one zoned device share its zones (write pointers, open
# zones, resets): iomark and fio side by side, group_reporting, the zones
# reported after each (8 zones of 3 MiB take 128 of the 512 writes of 64k)
ZU="--filename=$IMK_ZNS_BDEV --ioengine=io_uring --iodepth=4 --direct=1 --zonemode=zbd"
case_begin zbd-jobs-uring
zbd_both --name=ju $ZU --rw=randwrite --bs=64k --size=32m --io_size=16m --numjobs=2 \
  --max_open_zones=4 --group_reporting=1
case_end
case_begin zbd-jobs-psync
zbd_both --name=jp $ZB --rw=randwrite --bs=64k --size=32m --io_size=16m --numjobs=2 \
  --max_open_zones=4 --group_reporting=1
case_end
# two sections on overlapping regions, 40 KiB blocks (76 fit a zone, 32 KiB
# are left over), the device's open limit
case_begin zbd-two-sections
cat > two.fio <<EOF2
[global]
filename=$IMK_ZNS_BDEV
ioengine=io_uring
zonemode=zbd
direct=1
thread=1
iodepth=16
bs=40k
rw=randwrite
io_size=4m
group_reporting=1
[append1]
[append2]
offset=10%
EOF2
zbd_both two.fio
case_end
# many jobs of random 512 KiB writes under an open limit across the
# whole namespace (the shape of fio's zbd-rand-write example)
case_begin zbd-many-jobs
cat > many.fio <<EOF2
[global]
filename=$IMK_ZNS_BDEV
ioengine=io_uring
zonemode=zbd
direct=1
rw=randwrite
bs=512k
max_open_zones=8
numjobs=8
io_size=16m
group_reporting=1
[many]
EOF2
zbd_both many.fio
case_end
# a trim of a zone is a zone reset (trims a zone long); a random trim of an
# empty zone moves to the nearest zone holding data
case_begin zbd-trim
for t in iomark fio; do
  reset_zones
  run $t-fill $t --name=fill $ZB --rw=write --bs=64k --size=16m
  run $t $t --name=trim $ZB --rw=trim --bs=4m --size=16m --output-format=json,normal
  zones $t
  reset_zones
  run $t-fill2 $t --name=fill $ZB --rw=write --bs=64k --size=16m
  run $t-rand $t --name=rtrim $ZB --rw=randtrim --bs=4m --size=32m --output-format=json,normal
  zones $t-rand
done
run smallbs iomark --name=t $ZB --rw=trim --bs=64k --size=16m
case_end
case_begin zbd-refusals
run toomany iomark --name=r $ZB --rw=write --size=16m --max_open_zones=9
run zonesize iomark --name=r $ZB --rw=write --size=16m --zonesize=1m
run buffered iomark --name=r --filename="$IMK_ZNS_BDEV" --zonemode=zbd --rw=write --size=16m
case_end
reset_zones

# --- the longer zoned suite (IMK_LONG=1): the whole namespace, and fio's
# io_uring_cmd examples (their devices and sizes replaced)
if [ "$IMK_LONG" = 1 ]; then
  case_begin zbd-long-seq
  zbd_both --name=all $ZB --rw=write --bs=64k --loops=2
  case_end
  case_begin zbd-long-rand-cmd
  # 8 zones (the open limit): every zone takes 64 writes a loop
  zbd_both --name=allr $ZC --rw=randwrite --bs=64k --iodepth=1 --size=32m --loops=4
  case_end
  case_begin examples
  for ex in uring-cmd-ng uring-cmd-zoned; do
    dev=$IMK_CONV_CDEV; [ $ex = uring-cmd-zoned ] && dev=$IMK_ZNS_CDEV
    sed -e "s|^filename=.*|filename=$dev|" -e "s|^size=.*|size=16m|" \
      /payload/examples/$ex.fio > $ex.fio
    reset_zones
    run iomark-$ex iomark $ex.fio --output-format=json
    reset_zones
    run fio-$ex fio $ex.fio --output-format=json
  done
  case_end
  reset_zones
fi

# --- protection information (namespace with 8 bytes of metadata, PI type 1)
PI="--filename=$IMK_PI_CDEV --ioengine=io_uring_cmd --bs=4k --iodepth=8 --size=4m"
case_begin pi
run pract iomark --name=pract $PI --rw=randwrite --pi_chk=GUARD,REFTAG,APPTAG --verify=crc32c \
  --output-format=json
run host iomark --name=host $PI --rw=randwrite --pi_act=0 --md_per_io_size=64 \
  --pi_chk=GUARD,REFTAG,APPTAG --apptag=0x4242 --verify=crc32c --output-format=json
run hostread iomark --name=hostread $PI --rw=randread --pi_act=0 --md_per_io_size=64 \
  --pi_chk=GUARD,REFTAG,APPTAG --apptag=0x4242 --output-format=json
run wrongtag iomark --name=wrongtag $PI --rw=read --size=64k --pi_act=0 --md_per_io_size=64 \
  --pi_chk=APPTAG --apptag=0x1111 --output-format=json
# only the masked bits of the application tag are compared: 0x..42 matches
run masked iomark --name=masked $PI --rw=read --size=64k --pi_act=0 --md_per_io_size=64 \
  --pi_chk=APPTAG --apptag=0x1142 --apptag_mask=0x00ff --output-format=json
run unmasked iomark --name=unmasked $PI --rw=read --size=64k --pi_act=0 --md_per_io_size=64 \
  --pi_chk=APPTAG --apptag=0x1142 --apptag_mask=0xff00 --output-format=json
run smallmd iomark --name=smallmd $PI --rw=randwrite --pi_act=0 --md_per_io_size=4 \
  --output-format=json
case_end

# --- PI with the default pi_act/pi_chk: what is written stays valid -------
# (type 1; 8-byte PI in 8 bytes of metadata, 8-byte PI last in 16, 16-byte
# PI first in 16): random writes, then a plain kernel read of the range
# (the block layer checks guard and reference tag) and nvme-cli verifies
# of sampled blocks checking guard, application and reference tags
case_begin pi-default
for v in PI PI2 PI3; do
  eval cdev=\$IMK_${v}_CDEV bdev=\$IMK_${v}_BDEV
  run $v iomark --name=d --filename="$cdev" --ioengine=io_uring_cmd --rw=randwrite --bs=8k \
    --iodepth=8 --size=2m --offset=1m --md_per_io_size=64 --output-format=json
  run $v-kread dd if="$bdev" of=/dev/null bs=64k skip=16 count=32 iflag=direct
  for lba in 256 257 300 401 511; do
    run $v-verify-$lba nvme verify "$bdev" -s $lba -c 0 -p 7 -r $lba -a 0x1234 -m 0xffff
  done
done
case_end

# --- PI types 2 and 3 (8 bytes of separate metadata): writes with the
# default options and with each pi_act/pi_chk leave valid PI. Each write
# job is followed by a plain kernel read of its range and nvme-cli
# verifies of sampled blocks (type 2: guard, application tag and the
# reference tag of the first block, incrementing; type 3: guard and
# application tag, it has no reference tag). Then fio 3.33's run of the
# default job (it has no PI options), verified the same way.
pi_check() {   # pi_check LABEL BDEV PRCHK: kernel read, nvme verify
  run $1-kread dd if="$2" of=/dev/null bs=64k skip=16 count=32 iflag=direct
  for lba in 256 257 300 401 511 767; do
    r=$lba; [ "$3" = 6 ] && r=0
    run $1-verify-$lba nvme verify "$2" -s $lba -c 0 -p $3 -r $r -a 0x1234 -m 0xffff
  done
}
case_begin pi-types
for v in TYPE2 TYPE3; do
  eval cdev=\$IMK_${v}_CDEV bdev=\$IMK_${v}_BDEV
  p=7; [ $v = TYPE3 ] && p=6
  W="--name=d --filename=$cdev --ioengine=io_uring_cmd --rw=randwrite --bs=8k --iodepth=8 --size=2m --offset=1m"
  run $v iomark $W --output-format=json
  pi_check $v "$bdev" $p
  for a in "1 GUARD,REFTAG,APPTAG" "0 NONE" "0 GUARD" "0 REFTAG" "0 APPTAG" "0 GUARD,REFTAG,APPTAG"; do
    set -- $a
    l=$v-act$1-$(echo $2 | tr A-Z, a-z_)
    chk=""; [ $2 != NONE ] && chk="--pi_chk=$2"
    run $l iomark $W --pi_act=$1 $chk --md_per_io_size=16 --output-format=json
    pi_check $l "$bdev" $p
  done
  # iomark reads back what it wrote, checking the PI itself and asking
  # the device to check it all
  run $v-read iomark --name=r --filename=$cdev --ioengine=io_uring_cmd --rw=randread --bs=8k \
    --iodepth=8 --size=2m --offset=1m --pi_act=0 --pi_chk=GUARD,REFTAG,APPTAG --md_per_io_size=16 \
    --output-format=json
  run $v-fio fio $W --output-format=json
  pi_check $v-fio "$bdev" $p
done
case_end

# --- extended LBAs (metadata inline after each block's data) -----------
# 4096 + 8 without PI: iomark and fio side by side with bs=4104 (one
# block) and 16416 (four), verified; a block size of data alone refused.
# The kernel gives such a namespace's block device no capacity, so the
# safety check cannot read it: iomark's writes there need
# allow_destroy_data=1 (fio has no such check).
EXT="--filename=$IMK_EXT_CDEV --ioengine=io_uring_cmd"
case_begin ext-lba
E1="--name=e1 $EXT --rw=randwrite --bs=4104 --iodepth=8 --size=$((4104 * 1024)) --verify=crc32c"
run iomark iomark $E1 --allow_destroy_data=1 --output-format=json
run fio fio $E1 --output-format=json
E4="--name=e4 $EXT --rw=write --bs=16416 --iodepth=4 --size=$((16416 * 256)) --verify=md5"
run iomark4 iomark $E4 --allow_destroy_data=1 --output-format=json
run fio4 fio $E4 --output-format=json
run unchecked iomark $E1
run databs iomark --name=db $EXT --rw=write --bs=4096 --size=64k --allow_destroy_data=1
run offset iomark --name=of $EXT --rw=write --bs=4104 --size=41040 --offset=4096 \
  --allow_destroy_data=1
case_end
# 512 + 8 with PI type 1: with pi_act=1 (the default) the PI is the whole
# metadata and does not travel (bs counts data: 4096 is 8 blocks);
# with pi_act=0 iomark writes it inline (bs=520 is one block). Each is
# read by the kernel and checked with nvme verify; fio 3.33 runs the same
# job shapes (it has no PI options) and nvme verify looks at its blocks.
EP="--filename=$IMK_EXTPI_CDEV --ioengine=io_uring_cmd --iodepth=8"
ext_check() {  # ext_check LABEL: LBAs 2048-4095 (the second MiB of data)
  run $1-kread dd if="$IMK_EXTPI_BDEV" of=/dev/null bs=64k skip=16 count=16 iflag=direct
  for lba in 2048 2049 2500 3001 4095; do
    run $1-verify-$lba nvme verify "$IMK_EXTPI_BDEV" -s $lba -c 0 -p 7 -r $lba -a 0x1234 -m 0xffff
  done
}
case_begin ext-lba-pi
run act1 iomark --name=a1 $EP --rw=randwrite --bs=4k --size=1m --offset=1m --verify=crc32c \
  --output-format=json
ext_check act1
run act0 iomark --name=a0 $EP --rw=randwrite --bs=520 --size=$((520 * 2048)) --offset=$((520 * 2048)) \
  --pi_act=0 --pi_chk=GUARD,REFTAG,APPTAG --output-format=json
ext_check act0
run act0read iomark --name=r0 $EP --rw=randread --bs=1040 --size=$((520 * 2048)) \
  --offset=$((520 * 2048)) --pi_act=0 --pi_chk=GUARD,REFTAG,APPTAG --output-format=json
run act0nochk iomark --name=a0n $EP --rw=randwrite --bs=2080 --size=$((520 * 2048)) \
  --offset=$((520 * 2048)) --pi_act=0 --output-format=json
ext_check act0nochk
run act1bs iomark --name=x $EP --rw=write --bs=520 --size=64k
run verify iomark --name=x $EP --rw=write --bs=520 --size=$((520 * 16)) --pi_act=0 --verify=crc32c
run fio0 fio --name=a0 $EP --rw=randwrite --bs=520 --size=$((520 * 2048)) --offset=$((520 * 2048)) \
  --output-format=json
ext_check fio0
case_end

# --- the safety guard treats /dev/ngXnY as its namespace's block device ---
case_begin ng-safety
mkswap "$IMK_CONV_BDEV" > /dev/null
run sig iomark --name=s --filename="$IMK_CONV_CDEV" --ioengine=io_uring_cmd --rw=write --size=64k
swapon "$IMK_CONV_BDEV"
run inuse iomark --name=s --filename="$IMK_CONV_CDEV" --ioengine=io_uring_cmd --rw=write --size=64k \
  --allow_destroy_data=1
swapoff "$IMK_CONV_BDEV"
run consent iomark --name=s --filename="$IMK_CONV_CDEV" --ioengine=io_uring_cmd --rw=write \
  --size=64k --allow_destroy_data=1
run psync iomark --name=s --filename="$IMK_CONV_CDEV" --rw=read --size=64k
run bdev iomark --name=s --filename="$IMK_CONV_BDEV" --ioengine=io_uring_cmd --rw=read --size=64k
case_end

# --- FDP: writes land in the reclaim unit handles asked for ---------------
# (8 handles with 4 MiB reclaim units: 1024 blocks of 4 KiB each; nvme-cli's
# RUAMW counts the blocks a handle's unit can still take)
case_begin fdp-env
run status nvme fdp status "$IMK_FDP_BDEV"
run configs nvme fdp configs "$IMK_FDP_CTRL" -e 1
case_end
FDP="--filename=$IMK_FDP_CDEV --ioengine=io_uring_cmd --bs=4k --iodepth=8"
case_begin fdp-roundrobin
run iomark iomark --name=rr $FDP --rw=randwrite --size=2m --fdp=1 --fdp_pli=1,3 --output-format=json
run status nvme fdp status "$IMK_FDP_BDEV"
case_end
case_begin fdp-random
run iomark iomark --name=rnd $FDP --rw=write --offset=2m --size=1m --dataplacement=fdp \
  --plids=4-5 --plid_select=random --output-format=json
run status nvme fdp status "$IMK_FDP_BDEV"
case_end
case_begin fdp-scheme
printf '3145728, 3670016, 6\n3670016, 4194304, 7\n' > scheme.txt
run iomark iomark --name=sch $FDP --rw=write --offset=3m --size=1m --dataplacement=fdp \
  --plid_select=scheme --dp_scheme=scheme.txt --output-format=json
run status nvme fdp status "$IMK_FDP_BDEV"
run badindex iomark --name=bad $FDP --rw=write --size=64k --fdp=1 --plids=8
case_end
case_begin streams
run iomark iomark --name=st --filename="$IMK_FDP_CDEV" --ioengine=io_uring_cmd --rw=write \
  --size=64k --dataplacement=streams --plids=1 --output-format=json
run noids iomark --name=st --filename="$IMK_FDP_CDEV" --ioengine=io_uring_cmd --rw=write \
  --size=64k --dataplacement=streams
case_end

sync
touch /out/suite.done
