#!/bin/sh
# deps.sh — installs the Debian packages arenac needs to build and test.
# As root it runs apt-get; otherwise it prints the exact line and fails.
# OPTIONAL packages are test time only (PyTorch for
# tests/e2e_torch_oracle.py, the Arm toolchain and QEMU for
# tests/e2e_firmware.sh): tried, never required; their tests skip.
set -eu
PKGS="protobuf-c-compiler libprotobuf-c-dev libonnx-dev libgraphviz-dev graphviz libcmocka-dev python3-onnx python3-numpy clang libclang-rt-dev pkg-config libonnx-testdata"
OPTIONAL="python3-torch python3-torchvision gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm"
missing_of() {
	out=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || out="$out $p"
	done
	echo "$out"
}
missing=$(missing_of $PKGS)
optional=$(missing_of $OPTIONAL)
[ -z "$missing" ] && [ -z "$optional" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	[ -z "$optional" ] ||
		echo "arenac: optional test oracles missing:$optional (their tests skip)" >&2
	[ -z "$missing" ] && exit 0
	echo "arenac: missing packages:$missing" >&2
	echo "run: sudo apt-get install -y$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
if [ -n "$missing" ]; then
	echo "deps: installing$missing"
	apt-get update -qq >/dev/null || apt-get update
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
# No apt-get update for the optional ones alone: where they cannot be
# installed, every make check would pay for it again.
if [ -n "$optional" ]; then
	apt-get install -y -qq --no-install-recommends $optional >/dev/null ||
		echo "deps: optional$optional not installed: their tests skip" >&2
fi
