#!/bin/busybox sh
# The guest's /init (tests/guest/run.sh puts it in the initramfs): mounts
# the pseudo filesystems, loads NVMe, finds each namespace by its
# controller's serial number, runs /payload/suite.sh with cwd /out, and
# writes /out onto the results disk (/dev/vda) as a tar stream.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/payload
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
ln -s /proc/self/fd /dev/fd
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
up() { cut -d' ' -f1 /proc/uptime; }
while read -r m p; do
  insmod "/lib/modules/$m.ko" $p || echo "GUEST_WARN insmod $m failed"
done < /lib/modules/order
# Namespaces appear asynchronously: wait for the four and the results disk.
i=0
while [ $i -lt 600 ]; do
  n=$(ls /sys/block | grep -cE '^nvme[0-9]+n[0-9]+$')
  [ "$n" -ge 6 ] && [ -e /dev/vda ] && break
  sleep 0.05; i=$((i + 1))
done
for c in /sys/class/nvme/nvme*; do
  ser=$(tr -d ' ' < "$c/serial"); ctl=${c##*/}
  b=$(ls "$c/" | grep -E '^nvme[0-9]+n[0-9]+$' | head -1)
  g=$(echo "$b" | sed 's/^nvme/ng/')
  case "$ser" in
    imkconv) export IMK_CONV_BDEV=/dev/$b IMK_CONV_CDEV=/dev/$g IMK_CONV_CTRL=/dev/$ctl ;;
    imkpi) export IMK_PI_BDEV=/dev/$b IMK_PI_CDEV=/dev/$g IMK_PI_CTRL=/dev/$ctl
      b2=${b%n1}n2 b3=${b%n1}n3
      export IMK_PI2_BDEV=/dev/$b2 IMK_PI2_CDEV=/dev/ng${b2#nvme}
      export IMK_PI3_BDEV=/dev/$b3 IMK_PI3_CDEV=/dev/ng${b3#nvme} ;;
    imkzns) export IMK_ZNS_BDEV=/dev/$b IMK_ZNS_CDEV=/dev/$g IMK_ZNS_CTRL=/dev/$ctl ;;
    imkfdp) export IMK_FDP_BDEV=/dev/$b IMK_FDP_CDEV=/dev/$g IMK_FDP_CTRL=/dev/$ctl ;;
  esac
  echo "GUEST_DEV serial=$ser ctrl=/dev/$ctl bdev=/dev/$b cdev=/dev/$g"
done
echo "GUEST_READY uptime=$(up) kernel=$(uname -r) namespaces=$n"
export HOME=/tmp IMK_OUT=/out
[ -e /payload/env ] && . /payload/env
cd /out
# (busybox sh has no PIPESTATUS: the suite's status goes through a file)
{ sh /payload/suite.sh; echo $? > /tmp/rc; } 2>&1 | tee /out/suite.log
echo "GUEST_DONE uptime=$(up) rc=$(cat /tmp/rc)"
dmesg > /out/dmesg.txt
tar -cf /dev/vda -C /out . && sync
poweroff -f
