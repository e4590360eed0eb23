#!/usr/bin/env bash
# check_install.sh BUILD_DIR: install the build into a temporary prefix and
# use it as an outsider would: the header alone, pkg-config, the examples
# built against the installed library and run on a bundled graph, the man
# page.  Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(find "$prefix" -name dansched.pc -printf '%h\n' | head -n1)
export PKG_CONFIG_PATH=$libdir
export LD_LIBRARY_PATH=$(dirname "$libdir")

echo "check_install: the header compiles on its own"
echo '#include <dansched.h>' |
	cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only \
		$(pkg-config --cflags dansched) -x c -

echo "check_install: pkg-config $(pkg-config --modversion dansched)"
for ex in build_graph load_file; do
	cc -std=c11 -Wall -Wextra -Wpedantic -Werror examples/$ex.c \
		$(pkg-config --cflags --libs dansched) -o "$tmp/$ex"
done
"$tmp/build_graph"
"$tmp/load_file" data/FlashAttention_Case0.json

echo "check_install: the installed CLI"
"$prefix/bin/dansched" --version

man_page=$(find "$prefix" -name dansched.1)
if command -v man >/dev/null; then
	man -l "$man_page" 2>&1 >/dev/null | (! grep .) # no warnings
	man -l "$man_page" | grep -q "EXIT STATUS"
elif command -v groff >/dev/null; then
	echo "check_install: man is not installed; checked the page with groff"
	groff -man -Tutf8 -ww "$man_page" >/dev/null
else
	echo "check_install: SKIPPED the man page: neither man nor groff here"
fi
echo "check_install: ok"
