#!/usr/bin/env bash
# Installs and starts what svc needs on a Debian machine, skipping what is
# already there. Usage: scripts/setup.sh [run|images|test|bench]
set -euo pipefail

want=${1:-run}
log() { printf '\033[2m[setup]\033[0m %s\n' "$*"; }

need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "setup: run as root (or install the packages listed above by hand)" >&2
		exit 1
	fi
}

apt_updated=
pkg() { # pkg PACKAGE [COMMAND-OR-PATH]: install PACKAGE unless present
	local p=$1 probe=${2:-}
	if [ -n "$probe" ]; then
		if command -v "$probe" >/dev/null 2>&1 || [ -e "$probe" ]; then return 0; fi
	elif dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		return 0
	fi
	need_root
	if [ -z "$apt_updated" ]; then
		log "apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		apt_updated=1
	fi
	log "installing $p"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null
}

docker_up() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

start_docker() {
	docker_up && return 0
	# dockerd comes from Debian's docker.io; the docker CLI may be a newer one.
	pkg docker.io dockerd
	need_root
	if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
		log "starting docker with systemctl"
		systemctl start docker || true
	fi
	if ! docker_up; then
		log "starting dockerd (log: /var/log/svc-dockerd.log)"
		nohup dockerd >/var/log/svc-dockerd.log 2>&1 &
	fi
	for _ in $(seq 1 60); do docker_up && return 0; sleep 0.5; done
	echo "setup: dockerd did not come up; see /var/log/svc-dockerd.log" >&2
	exit 1
}

# Everything svcd needs at run time: Docker, mkfs.ext4 and losetup for the
# instance disks; debootstrap makes the system images' Debian root where no
# registry can be pulled from (docs/images.md).
pkg e2fsprogs mkfs.ext4
pkg mount losetup
pkg debootstrap /usr/sbin/debootstrap
start_docker

case "$want" in
run | images) ;;
test | bench)
	# Test images are a static busybox plus test programs.
	pkg busybox-static /bin/busybox
	# The web tools' pages are tested in a real browser (chromedp).
	pkg chromium /usr/bin/chromium
	;;
*)
	echo "setup: unknown target $want" >&2
	exit 2
	;;
esac
