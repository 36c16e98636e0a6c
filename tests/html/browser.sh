#!/bin/sh
# The html reports in a headless browser: each page loads with no console message (errors,
# uncaught exceptions) and its screenshot is not blank (several times the bytes of a blank
# page's screenshot taken the same way).  Installs Debian's chromium when it is missing.
#   KPROF=build/kprof XMLCHECK=build/tests/xmlcheck tests/html/browser.sh [SHOTDIR]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	echo "kprof: installing Debian package chromium for the browser test"
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq && $sudo apt-get install -y -qq chromium >/dev/null || exit 4
	browser=$(command -v chromium) || exit 4
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shots=${1:-$tmp/shots}
mkdir -p "$shots"
tests/html/check.sh "$tmp/pages" >/dev/null || { echo "FAIL: tests/html/check.sh"; exit 1; }
shot() { # page png log [dark]
	timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars ${4:+--force-dark-mode} \
		--window-size=1100,1600 --enable-logging=stderr --v=0 --screenshot="$2" "file://$1" >"$3" 2>&1
}
printf '<html xmlns="http://www.w3.org/1999/xhtml"><body></body></html>\n' >"$tmp/blank.html"
shot "$tmp/blank.html" "$tmp/blank.png" "$tmp/blank.log"
blank=$(wc -c <"$tmp/blank.png" 2>/dev/null || echo 0)
[ "$blank" -gt 0 ] || { echo "FAIL: the browser took no screenshot of a blank page"; exit 4; }
fail=0
n=0
for p in "$tmp"/pages/*.html; do
	b=$(basename "$p" .html)
	shot "$p" "$shots/$b.png" "$tmp/$b.log"
	if grep -E 'CONSOLE|Uncaught' "$tmp/$b.log"; then
		echo "FAIL $b: console messages"
		fail=1
	fi
	size=$(wc -c <"$shots/$b.png" 2>/dev/null || echo 0)
	if [ "$size" -le $((blank * 4)) ]; then
		echo "FAIL $b: screenshot of $size bytes looks blank (blank page: $blank)"
		fail=1
	fi
	n=$((n + 1))
done
[ $fail = 0 ] && echo "  check-html: $n pages load without console messages, screenshots not blank"
exit $fail
