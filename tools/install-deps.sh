#!/usr/bin/env bash
# Installs the Debian 12 packages epochrt builds with, when they are missing.
# Idempotent; needs root (or sudo) only when something must be installed.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  clang
  libcaf-dev
  capnproto libcapnp-dev
  libleveldb-dev libsnappy-dev
  libboost-test-dev
  libspdlog-dev libfmt-dev
  libcli11-dev nlohmann-json3-dev libxxhash-dev libssl-dev
  python3-matplotlib
  pybind11-dev python3-dev python3-numpy python3-pytest
  python3-venv python3-pip python3-setuptools python3-wheel
  python3-torch python3-sklearn
  libgloo-dev libopenmpi-dev openmpi-bin
  iproute2
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "installing: ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
