#!/usr/bin/env bash
# deps.sh: make sure the Debian packages the build and the tests need are
# installed.  Quiet when they are; installs the missing ones when root,
# otherwise prints the command to run and exits 1.
set -euo pipefail

# libc6-dev is only a Recommends of gcc, and recommends are not installed;
# libxml2-utils: xmllint, which test_view runs on the SVG it writes;
# bsdutils: script(1), which tests/cli.sh uses to check --quiet on a tty
pkgs=(cmake gcc libc6-dev make pkg-config libcjson-dev libcmocka-dev python3
	libxml2-utils bsdutils)
missing=()
for p in "${pkgs[@]}"; do
	# "install ok installed" only; a removed package leaves another status
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	echo "deps.sh: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
	echo "deps.sh: missing packages; run:" >&2
	echo "sudo apt-get install ${missing[*]}"
	exit 1
fi
