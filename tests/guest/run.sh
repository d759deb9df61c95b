#!/usr/bin/env bash
# tests/guest/run.sh — boots a throw-away QEMU guest with emulated NVMe
# devices and runs iomark's guest suite (tests/guest/suite.sh) inside it.
#
# Why a guest: NVMe passthrough (/dev/ngXnY), zoned namespaces and flexible
# data placement need a kernel with NVMe, and real (emulated) controllers
# that the machine running the tests does not have. QEMU's NVMe emulation
# gives all three, under software emulation (TCG) with a Debian kernel.
#
# Usage:
#   tests/guest/run.sh --setup-only          fetch and install what is needed
#   tests/guest/run.sh --iomark BIN [--out DIR] [--long] [--keep]
#
# What the guest has:
#   - a conventional namespace (4 KiB blocks), serial imkconv;
#   - a conventional namespace formatted with 8 bytes of metadata per
#     block and protection information type 1, serial imkpi (IMK_PI_*),
#     and on the same controller two more of type 1 with 16 bytes of
#     metadata: an 8-byte PI last (IMK_PI2_*) and a 16-byte PI with a
#     64-bit guard first (IMK_PI3_*); two with extended LBAs (8 bytes of
#     metadata inline after each block's data): 4096 + 8 without PI
#     (IMK_EXT_*) and 512 + 8 with PI type 1 (IMK_EXTPI_*); and PI types
#     2 and 3 with 8 bytes of separate metadata (IMK_TYPE2_*, IMK_TYPE3_*);
#   - a host-managed zoned namespace (ZNS): 32 zones of 4 MiB with a zone
#     capacity of 3 MiB (IOMARK_GUEST_ZCAP), at most 8 open and active
#     zones, serial imkzns;
#   - a namespace in an FDP-enabled subsystem (8 reclaim unit handles, one
#     reclaim group, 4 MiB reclaim units), serial imkfdp;
#   - busybox, blkzone, nvme-cli, Debian's fio 3.33 with its libraries, and
#     the iomark binary given (with its libraries).
#
# The suite's results (one directory per case under --out, default
# target/guest/out) come back on a small raw disk as a tar stream; the
# integration test tests/it/guest.rs decides pass or fail from them. The
# last lines this script prints are
#   guest: boot S s (devices ready), suite S s, wall S s
# and it exits 0 when the guest ran the suite to its end (whatever the
# cases found), non-zero when the guest could not be set up or booted.
#
# Everything fetched is kept under target/guest (IOMARK_GUEST_CACHE): a
# private apt state for Debian's backports (QEMU 10 and the kernel come from
# bookworm-backports; /etc/apt is not changed), the extracted kernel and
# packages, and a prebuilt base initramfs; a second run fetches nothing.
# Requirements: Debian 12 (bookworm) on x86_64, root (apt-get install of
# qemu-system-x86 when it is missing), Debian's fio installed.
#
# Environment:
#   IOMARK_GUEST_CACHE    cache directory (default: target/guest)
#   IOMARK_GUEST_KERNEL   kernel series from bookworm-backports (default 6.12)
#   IOMARK_GUEST_TIMEOUT  wall-clock limit of the guest in seconds (900)
#   IOMARK_GUEST_ACCEL    tcg (default) or kvm (only real VMX/SVM KVM can
#                         boot a stock Debian kernel)
#   IOMARK_GUEST_SHUFFLE  a number: the four controllers go on the PCI bus
#                         in an order drawn from it (by default conv, pi,
#                         zns, fdp), so the guest's kernel numbers them
#                         differently; the suite finds them by serial number
#                         and must pass in any order
set -euo pipefail
# The body is one { } block: bash reads it whole before running it, so an
# edit of this file during a run cannot break that run.
{
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
C=${IOMARK_GUEST_CACHE:-$REPO/target/guest}
KSERIES=${IOMARK_GUEST_KERNEL:-6.12}
TIMEOUT=${IOMARK_GUEST_TIMEOUT:-900}
ACCEL=${IOMARK_GUEST_ACCEL:-tcg}
SHUFFLE=${IOMARK_GUEST_SHUFFLE:-}
ZONE_SIZE=4M
ZONE_CAP=${IOMARK_GUEST_ZCAP:-3M}
MAX_OPEN=8
IOMARK=""
OUT=""
SETUP_ONLY=0
KEEP=0
LONG=0
while [ $# -gt 0 ]; do
  case "$1" in
    --iomark) IOMARK=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --setup-only) SETUP_ONLY=1; shift ;;
    --keep) KEEP=1; shift ;;
    --long) LONG=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
log() { printf 'guest-setup: %s\n' "$*" >&2; }
die() { printf 'guest-setup: %s\n' "$*" >&2; exit 2; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.1f", b-a}'; }
T0=$(now)
mkdir -p "$C"

# ---------------------------------------------------------------------------
# Packages through a private apt state: the machine's Debian sources plus
# the same archive's bookworm-backports suite.
# ---------------------------------------------------------------------------
APT=$C/apt
APTO=(-o "Dir::Etc::sourcelist=$APT/sources.list" -o "Dir::Etc::sourceparts=$APT/parts"
      -o "Dir::State::lists=$APT/lists" -o "Dir::Cache::archives=$APT/archives"
      -o "Debug::NoLocking=1")
apt_ready=0
setup_apt() {
  [ $apt_ready = 1 ] && return 0
  mkdir -p "$APT/lists/partial" "$APT/archives/partial" "$APT/parts"
  local uri
  uri=$(awk '/^URIs:/{u=$2} /^Suites:/{if ($0 ~ /bookworm( |$)/) {print u; exit}}' \
        /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '$1=="deb" && $3=="bookworm"{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$uri" ] || die "no Debian bookworm source in /etc/apt: the guest suite needs Debian 12"
  { grep -hv '^#' /etc/apt/sources.list 2>/dev/null | grep '^deb ' || true
    printf 'deb %s bookworm-backports main\n' "$uri"; } > "$APT/sources.list"
  cp /etc/apt/sources.list.d/*.sources "$APT/parts/" 2>/dev/null || true
  if [ ! -e "$APT/.updated" ] || [ -n "$(find "$APT/.updated" -mtime +6)" ]; then
    log "apt-get update (private state in $APT)"
    apt-get "${APTO[@]}" update -qq >/dev/null || die "apt-get update failed"
    touch "$APT/.updated"
  fi
  apt_ready=1
}
# Downloads the .deb files of packages $@ into $1 (not installed).
apt_download() {
  local dir=$1; shift
  mkdir -p "$dir"
  setup_apt
  (cd "$dir" && apt-get "${APTO[@]}" download "$@" >/dev/null 2>&1) && return 0
  rm -f "$APT/.updated"; apt_ready=0; setup_apt   # a stale index: refresh once
  (cd "$dir" && apt-get "${APTO[@]}" download "$@" >/dev/null 2>&1) \
    || die "could not download $* from Debian's archive"
}

# QEMU 10 (nvme-subsys fdp=on needs 8.0 or later; bookworm has 7.2).
need_qemu() {
  local v
  if command -v qemu-system-x86_64 >/dev/null; then
    v=$(qemu-system-x86_64 --version | awk 'NR==1{print $4}')
    case "$v" in [89].*|[1-9][0-9].*) return 0 ;; esac
    log "qemu-system-x86_64 $v is too old (FDP needs 8.0 or later)"
  fi
  [ "$(id -u)" = 0 ] || die "qemu-system-x86_64 (8.0 or later) is missing and installing it needs root"
  setup_apt
  log "installing qemu-system-x86 from bookworm-backports"
  DEBIAN_FRONTEND=noninteractive apt-get "${APTO[@]}" install -y -qq --no-install-recommends \
    -t bookworm-backports qemu-system-x86 >/dev/null || die "apt-get install qemu-system-x86 failed"
}

# The guest kernel: the newest bookworm-backports build of the pinned
# series (Debian keeps only the newest build of a series in its archive),
# downloaded and unpacked, never installed. NVMe and virtio_blk are
# modules there; zoned block devices and io_uring are built in.
fetch_kernel() {
  local pkg
  if [ -e "$C/kernel/.done" ] && [ "$(cat "$C/kernel/series")" = "$KSERIES" ]; then return 0; fi
  setup_apt
  pkg=$(apt-cache "${APTO[@]}" pkgnames "linux-image-$KSERIES." 2>/dev/null \
        | grep -E "^linux-image-$KSERIES\.[0-9]+\+[a-z0-9]+-amd64$" | sort -V | tail -1)
  [ -n "$pkg" ] || die "no linux-image-$KSERIES.*-amd64 in bookworm-backports (IOMARK_GUEST_KERNEL)"
  log "kernel package: $pkg"
  rm -rf "$C/kernel" && mkdir -p "$C/kernel/deb"
  apt_download "$C/kernel/deb" "$pkg"
  dpkg-deb -x "$C"/kernel/deb/linux-image-*.deb "$C/kernel/root"
  rm -rf "$C/kernel/deb"
  local kver; kver=$(ls "$C/kernel/root/lib/modules")
  # the guest needs a few modules only: drop the bulk
  find "$C/kernel/root/lib/modules/$kver/kernel" -name '*.ko*' \
    ! -path '*/nvme/*' ! -path '*/virtio*' ! -path '*/block/*' ! -path '*/crypto/*' \
    ! -path '*/lib/*' -delete
  echo "$kver" > "$C/kernel/version"
  echo "$KSERIES" > "$C/kernel/series"
  touch "$C/kernel/.done"
}

# Guest userland from Debian's packages, unpacked: busybox (static) and
# nvme-cli with its two libraries.
fetch_userland() {
  [ -e "$C/userland/.done" ] && return 0
  rm -rf "$C/userland" && mkdir -p "$C/userland/deb"
  apt_download "$C/userland/deb" busybox-static nvme-cli libnvme1 libjson-c5
  local d; for d in "$C"/userland/deb/*.deb; do dpkg-deb -x "$d" "$C/userland/root"; done
  rm -rf "$C/userland/deb"
  touch "$C/userland/.done"
}

command -v fio >/dev/null || die "fio is not installed (apt-get install fio)"
command -v blkzone >/dev/null || die "blkzone is not installed (apt-get install util-linux)"
command -v xz >/dev/null || die "xz is not installed (apt-get install xz-utils)"
need_qemu
fetch_kernel
fetch_userland
KVER=$(cat "$C/kernel/version")
KMOD=$C/kernel/root/lib/modules/$KVER/kernel

# ---------------------------------------------------------------------------
# The base initramfs (busybox, modules, nvme-cli, blkzone, fio and their
# libraries), built once per kernel and fio and kept; each run appends a
# small second archive with iomark and the suite (the kernel unpacks
# concatenated newc archives in turn).
# ---------------------------------------------------------------------------
# (bump the last word when build_base changes what goes in)
BASE_KEY="$KVER $(fio --version) $(md5sum < "$HERE/init.sh" | cut -c1-8) v2"
BASE=$C/base.cpio
# Copies host file $2 to $1$2 (same path), with every library ldd lists.
copy_with_libs() {
  local root=$1 f=$2 lib real
  mkdir -p "$root$(dirname "$f")"
  cp -L "$f" "$root$f"
  head -c4 "$f" | grep -q ELF || return 0
  ldd "$f" 2>/dev/null | grep -oE '/[^ ]+' | while read -r lib; do
    [ -e "$lib" ] || continue
    real=$(readlink -f "$lib")
    mkdir -p "$root$(dirname "$real")" "$root$(dirname "$lib")"
    [ -e "$root$real" ] || cp -L "$real" "$root$real"
    [ -e "$root$lib" ] || ln -s "$real" "$root$lib"
  done
}
# Puts module $2 and, first, the modules it depends on into $1/lib/modules,
# unpacked (busybox insmod wants a plain .ko), adding each to the load order.
add_module() {
  local ir=$1 name=$2 params=${3:-} f ko dep
  grep -qE "^$name( |$)" "$ir/lib/modules/order" 2>/dev/null && return 0
  f=$(find "$KMOD" \( -name "$name.ko.xz" -o -name "$name.ko" -o -name "${name//-/_}.ko.xz" \
        -o -name "${name//_/-}.ko.xz" \) | head -1)
  [ -n "$f" ] || die "module $name not found in kernel $KVER"
  ko=$(basename "${f%.xz}")
  case "$f" in *.xz) xz -dc "$f" > "$ir/lib/modules/$ko" ;; *) cp "$f" "$ir/lib/modules/$ko" ;; esac
  for dep in $(tr '\0' '\n' < "$ir/lib/modules/$ko" | sed -n 's/^depends=//p' | tr ',' ' '); do
    add_module "$ir" "$dep"
  done
  echo "${ko%.ko}${params:+ $params}" >> "$ir/lib/modules/order"
}
build_base() {
  local ir=$C/base.tmp
  rm -rf "$ir" && mkdir -p "$ir"/{bin,sbin,dev,proc,sys,tmp,out,lib/modules,etc,usr/sbin}
  cp "$C/userland/root/bin/busybox" "$ir/bin/busybox"
  # NVMe without multipath (a private namespace gets no head device whose
  # zone limits would read 0), then virtio for the results disk.
  add_module "$ir" nvme-core multipath=N
  # one poll queue per controller, for hipri (polled completions)
  add_module "$ir" nvme poll_queues=1
  [ -n "$(find "$KMOD" -name 'virtio_pci.ko*' | head -1)" ] && add_module "$ir" virtio_pci
  add_module "$ir" virtio_blk
  copy_with_libs "$ir" "$(command -v fio)"
  copy_with_libs "$ir" "$(command -v blkzone)"
  # nvme-cli from its unpacked package, its own libraries beside it
  cp "$C/userland/root/usr/sbin/nvme" "$ir/usr/sbin/nvme"
  mkdir -p "$ir/usr/lib/x86_64-linux-gnu"
  cp -a "$C"/userland/root/usr/lib/x86_64-linux-gnu/lib*.so* "$ir/usr/lib/x86_64-linux-gnu/"
  LD_LIBRARY_PATH=$C/userland/root/usr/lib/x86_64-linux-gnu ldd "$C/userland/root/usr/sbin/nvme" \
    | grep -oE '=> /[^ ]+' | cut -c4- | grep -v "^$C" | while read -r lib; do
      real=$(readlink -f "$lib"); mkdir -p "$ir$(dirname "$real")" "$ir$(dirname "$lib")"
      [ -e "$ir$real" ] || cp -L "$real" "$ir$real"
      [ -e "$ir$lib" ] || ln -s "$real" "$ir$lib"
    done
  cp "$HERE/init.sh" "$ir/init" && chmod +x "$ir/init"
  (cd "$ir" && find . | LC_ALL=C sort | "$ir/bin/busybox" cpio -o -H newc -R 0:0 2>/dev/null) > "$BASE.new"
  mv "$BASE.new" "$BASE"
  echo "$BASE_KEY" > "$BASE.key"
  rm -rf "$ir"
  log "base initramfs: $(du -h "$BASE" | cut -f1)"
}
if [ ! -e "$BASE" ] || [ "$(cat "$BASE.key" 2>/dev/null)" != "$BASE_KEY" ]; then build_base; fi
log "ready in $(secs "$T0" "$(now)") s: qemu $(qemu-system-x86_64 --version | awk 'NR==1{print $4}'), kernel $KVER, $(fio --version)"
[ $SETUP_ONLY = 1 ] && exit 0

# ---------------------------------------------------------------------------
# This run: iomark and the suite in a second archive, disk images, QEMU.
# ---------------------------------------------------------------------------
[ -n "$IOMARK" ] || die "--iomark BIN is required (or --setup-only)"
[ -x "$IOMARK" ] || die "--iomark $IOMARK: not an executable"
IOMARK=$(readlink -f "$IOMARK")
OUT=$(readlink -m "${OUT:-$C/out}")
mkdir -p "$C/runs"
RUN=$(mktemp -d "$C/runs/run.XXXXXX")
[ $KEEP = 1 ] || trap 'rm -rf "$RUN"' EXIT
IR=$RUN/ir
mkdir -p "$IR/payload"
# iomark without its debug information (a quarter of the size), with libraries
copy_with_libs "$IR" "$IOMARK"
mv "$IR$IOMARK" "$IR/payload/iomark.full"
strip -o "$IR/payload/iomark" "$IR/payload/iomark.full" 2>/dev/null \
  || cp "$IR/payload/iomark.full" "$IR/payload/iomark"
rm -f "$IR/payload/iomark.full"
cp "$HERE/suite.sh" "$IR/payload/suite.sh"
# fio's io_uring_cmd examples, for the long suite
mkdir -p "$IR/payload/examples"
cp /usr/share/doc/fio/examples/uring-cmd-*.fio "$IR/payload/examples/" 2>/dev/null || true
{ echo "export IMK_LONG=$LONG IMK_ZONE_SIZE=$ZONE_SIZE IMK_ZONE_CAP=$ZONE_CAP IMK_MAX_OPEN=$MAX_OPEN"; } > "$IR/payload/env"
(cd "$IR" && find . -mindepth 1 | LC_ALL=C sort | "$C/userland/root/bin/busybox" cpio -o -H newc -R 0:0 2>/dev/null) > "$RUN/run.cpio"
cat "$BASE" "$RUN/run.cpio" > "$RUN/initrd.cpio"

IMG=$RUN/img; mkdir -p "$IMG"
truncate -s 256M "$IMG/conv.img"
truncate -s 64M "$IMG/pi.img"
truncate -s 16M "$IMG/pi2.img" "$IMG/pi3.img"
truncate -s 8M "$IMG/ext.img" "$IMG/extpi.img" "$IMG/type2.img" "$IMG/type3.img"
truncate -s 128M "$IMG/zns.img"
truncate -s 128M "$IMG/fdp.img"
truncate -s 256M "$IMG/results.img"
NS="shared=off,logical_block_size=4096,physical_block_size=4096"
# One group of arguments per controller; QEMU gives the controllers PCI
# slots in the order of the arguments.
DEV_conv=(
  -device nvme,id=nvme0,serial=imkconv
  -drive "file=$IMG/conv.img,if=none,id=conv,format=raw,cache=unsafe"
  -device "nvme-ns,drive=conv,bus=nvme0,nsid=1,$NS"
)
DEV_pi=(
  -device nvme,id=nvme1,serial=imkpi
  -drive "file=$IMG/pi.img,if=none,id=pi,format=raw,cache=unsafe"
  -device "nvme-ns,drive=pi,bus=nvme1,nsid=1,$NS,ms=8,mset=0,pi=1,pil=0"
  -drive "file=$IMG/pi2.img,if=none,id=pi2,format=raw,cache=unsafe"
  -device "nvme-ns,drive=pi2,bus=nvme1,nsid=2,$NS,ms=16,mset=0,pi=1,pil=1"
  -drive "file=$IMG/pi3.img,if=none,id=pi3,format=raw,cache=unsafe"
  -device "nvme-ns,drive=pi3,bus=nvme1,nsid=3,$NS,ms=16,mset=0,pi=1,pif=2,pil=0"
  -drive "file=$IMG/ext.img,if=none,id=ext,format=raw,cache=unsafe"
  -device "nvme-ns,drive=ext,bus=nvme1,nsid=4,$NS,ms=8,mset=1"
  -drive "file=$IMG/extpi.img,if=none,id=extpi,format=raw,cache=unsafe"
  -device "nvme-ns,drive=extpi,bus=nvme1,nsid=5,shared=off,logical_block_size=512,physical_block_size=512,ms=8,mset=1,pi=1"
  -drive "file=$IMG/type2.img,if=none,id=type2,format=raw,cache=unsafe"
  -device "nvme-ns,drive=type2,bus=nvme1,nsid=6,$NS,ms=8,mset=0,pi=2"
  -drive "file=$IMG/type3.img,if=none,id=type3,format=raw,cache=unsafe"
  -device "nvme-ns,drive=type3,bus=nvme1,nsid=7,$NS,ms=8,mset=0,pi=3"
)
DEV_zns=(
  -device nvme,id=nvme2,serial=imkzns
  -drive "file=$IMG/zns.img,if=none,id=zns,format=raw,cache=unsafe"
  -device "nvme-ns,drive=zns,bus=nvme2,nsid=1,$NS,zoned=true,zoned.zone_size=$ZONE_SIZE,zoned.zone_capacity=$ZONE_CAP,zoned.max_open=$MAX_OPEN,zoned.max_active=$MAX_OPEN"
)
DEV_fdp=(
  -device nvme-subsys,id=fdpsub,nqn=imkfdp,fdp=on,fdp.runs=4M,fdp.nrg=1,fdp.nruh=8
  -device nvme,id=nvme3,serial=imkfdp,subsys=fdpsub
  -drive "file=$IMG/fdp.img,if=none,id=fdp,format=raw,cache=unsafe"
  -device "nvme-ns,drive=fdp,bus=nvme3,nsid=1,$NS,fdp.ruhs=0-7"
)
ORDER=(conv pi zns fdp)
if [ -n "$SHUFFLE" ]; then
  # A permutation drawn from the seed (bash's RANDOM, seeded): the same
  # seed gives the same order.
  RANDOM=$SHUFFLE
  for ((i = ${#ORDER[@]} - 1; i > 0; i--)); do
    j=$((RANDOM % (i + 1))); t=${ORDER[i]}; ORDER[i]=${ORDER[j]}; ORDER[j]=$t
  done
fi
NVME=()
for g in "${ORDER[@]}"; do eval 'NVME+=("${DEV_'"$g"'[@]}")'; done
if [ "$ACCEL" = kvm ]; then CPU=(-accel kvm -cpu host); else CPU=(-accel tcg -cpu max,la57=off); fi
QEMU=(qemu-system-x86_64 -nodefaults -no-user-config -display none -monitor none
      -serial stdio -no-reboot "${CPU[@]}" -smp 1 -m 1536
      -kernel "$C/kernel/root/boot/vmlinuz-$KVER" -initrd "$RUN/initrd.cpio"
      -append "console=ttyS0 panic=-1 quiet loglevel=3 mitigations=off nokaslr"
      "${NVME[@]}"
      -drive "file=$IMG/results.img,if=virtio,format=raw,cache=unsafe")
printf '%q ' "${QEMU[@]}" > "$RUN/qemu-cmdline.txt"
log "booting the guest (accel=$ACCEL, initramfs $(du -h "$RUN/initrd.cpio" | cut -f1), controllers ${ORDER[*]})"
TB=$(now)
set +e
# The console is kept whole; the time the guest said its devices were
# ready is taken as the host sees it.
timeout -k 10 "$TIMEOUT" "${QEMU[@]}" < /dev/null 2>&1 | while IFS= read -r line; do
  case "$line" in GUEST_READY*) now > "$RUN/ready.ts" ;; GUEST_DONE*) now > "$RUN/done.ts" ;; esac
  printf '%s\n' "$line" >> "$RUN/console.log"
  case "$line" in GUEST_*|CASE*) printf 'guest> %s\n' "$line" >&2 ;; esac
done
qrc=${PIPESTATUS[0]}
set -e
TE=$(now)

rm -rf "$OUT" && mkdir -p "$OUT"
tar -xf "$IMG/results.img" -C "$OUT" 2>/dev/null || true
cp "$RUN/console.log" "$RUN/qemu-cmdline.txt" "$OUT/" 2>/dev/null || true
boot=?; suite=?
[ -e "$RUN/ready.ts" ] && boot=$(secs "$TB" "$(cat "$RUN/ready.ts")")
[ -e "$RUN/ready.ts" ] && [ -e "$RUN/done.ts" ] && suite=$(secs "$(cat "$RUN/ready.ts")" "$(cat "$RUN/done.ts")")
order=""; [ -n "$SHUFFLE" ] && order=", controllers $(IFS=,; echo "${ORDER[*]}") (IOMARK_GUEST_SHUFFLE=$SHUFFLE)"
echo "guest: boot $boot s (devices ready), suite $suite s, wall $(secs "$TB" "$TE") s, qemu exit $qrc$order" | tee "$OUT/timing.txt"
if [ ! -e "$OUT/suite.done" ]; then
  echo "guest: the suite did not finish (timeout after ${TIMEOUT}s or a guest crash); console: $OUT/console.log" >&2
  tail -20 "$OUT/console.log" >&2 || true
  exit 3
fi
exit 0
}
