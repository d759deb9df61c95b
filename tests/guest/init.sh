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
# Namespaces appear asynchronously: wait for the ten and the results disk.
i=0
while [ $i -lt 600 ]; do
  n=$(ls /sys/block | grep -cE '^nvme[0-9]+n[0-9]+$')
  [ "$n" -ge 10 ] && [ -e /dev/vda ] && break
  sleep 0.05; i=$((i + 1))
done
for c in /sys/class/nvme/nvme*; do
  ser=$(tr -d ' ' < "$c/serial"); ctl=${c##*/}
  b=$(ls "$c/" | grep -E '^nvme[0-9]+n[0-9]+$' | head -1)
  g=$(echo "$b" | sed 's/^nvme/ng/')
  case "$ser" in
    imkconv) export IMK_CONV_BDEV=/dev/$b IMK_CONV_CDEV=/dev/$g IMK_CONV_CTRL=/dev/$ctl ;;
    imkpi) export IMK_PI_CTRL=/dev/$ctl
      # its namespaces by namespace id (the kernel numbers them in the
      # order their scans finish)
      for o in $(ls "$c/" | grep -E '^nvme[0-9]+n[0-9]+$'); do
        case $(cat "$c/$o/nsid") in
          1) v=PI ;; 2) v=PI2 ;; 3) v=PI3 ;; 4) v=EXT ;; 5) v=EXTPI ;; 6) v=TYPE2 ;;
          7) v=TYPE3 ;; *) continue ;;
        esac
        export "IMK_${v}_BDEV=/dev/$o" "IMK_${v}_CDEV=/dev/ng${o#nvme}"
      done ;;
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
