#!/usr/bin/env bash
# check_install.sh BUILD_DIR: install the build into a temporary prefix and
# use it as an outsider would: the header alone, pkg-config, the examples
# built against the installed library and run on a bundled graph, the
# Python package and examples/notebook.py from the prefix, the man page.
# Exits non-zero on the first failure.
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

# the Python package from the prefix alone: no DANSCHED_LIB, no
# LD_LIBRARY_PATH, not the source tree: it must find the installed library
echo "check_install: the Python package"
init=$(find "$prefix" -path '*/dansched/__init__.py' | head -n1)
[ -n "$init" ] || { echo "check_install: dansched/__init__.py not installed" >&2; exit 1; }
pydir=$(dirname "$(dirname "$init")")
py() { (cd "$tmp" && env -u DANSCHED_LIB -u LD_LIBRARY_PATH PYTHONPATH="$pydir" \
	PYTHONDONTWRITEBYTECODE=1 python3 "$@"); }
lib=$(py -c 'import dansched; print(dansched.LIBRARY)')
case $lib in
"$prefix"/*) echo "check_install: dansched loads $lib" ;;
*) echo "check_install: the package loaded $lib, not the installed library" >&2; exit 1 ;;
esac
py -c 'import dansched, pydoc; assert "Quick start" in pydoc.render_doc(dansched)'
# one example: its table row is the installed CLI's, seconds aside
graph=$PWD/data/FlashAttention_Case0.json
py "$PWD/examples/notebook.py" "$graph" >"$tmp/py.txt"
"$prefix/bin/dansched" schedule "$graph" -o "$tmp/out" --quiet >"$tmp/cli.txt"
cat "$tmp/py.txt"
no_seconds() { awk '{ $NF = ""; print }' "$1"; }
diff <(no_seconds "$tmp/cli.txt") <(no_seconds "$tmp/py.txt")

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
