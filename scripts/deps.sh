#!/bin/sh
# deps.sh — installs the Debian packages arenac needs to build and test.
# As root it runs apt-get; otherwise it prints the exact line and fails.
set -eu
PKGS="protobuf-c-compiler libprotobuf-c-dev libonnx-dev libgraphviz-dev graphviz libcmocka-dev python3-onnx python3-numpy clang libclang-rt-dev pkg-config libonnx-testdata"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "arenac: missing packages:$missing" >&2
	echo "run: sudo apt-get install -y$missing" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || apt-get update
apt-get install -y -qq --no-install-recommends $missing >/dev/null
