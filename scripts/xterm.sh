#!/usr/bin/env bash
# Regenerates the web terminal's vendored front-end: xterm.js and its fit
# addon, as built by their authors and published on npm, pinned by
# internal/webtools/terminal/npm/package-lock.json. The output is committed,
# so `go build` never needs npm. Usage: scripts/xterm.sh (or make assets)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
pins=$root/internal/webtools/terminal/npm
out=$root/internal/webtools/terminal/assets/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp "$pins/package.json" "$pins/package-lock.json" "$tmp/"
(cd "$tmp" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error)
mods=$tmp/node_modules/@xterm

rm -rf "$out"
mkdir -p "$out"
# The ES module builds: smaller than the UMD ones and loaded with a plain
# import. Source maps are not shipped, so their reference goes too.
sed '/^\/\/# sourceMappingURL=/d' "$mods/xterm/lib/xterm.mjs" >"$out/xterm.mjs"
sed '/^\/\/# sourceMappingURL=/d' "$mods/addon-fit/lib/addon-fit.mjs" >"$out/addon-fit.mjs"
cp "$mods/xterm/css/xterm.css" "$out/xterm.css"
cp "$mods/xterm/LICENSE" "$out/LICENSE.xterm"
cp "$mods/addon-fit/LICENSE" "$out/LICENSE.addon-fit"
# Precompressed copies, served to browsers that accept gzip (all of them);
# -n keeps the output byte-identical across runs.
for f in xterm.mjs addon-fit.mjs xterm.css; do
	gzip -9 -n -c "$out/$f" >"$out/$f.gz"
done

{
	echo "# Vendored by scripts/xterm.sh from npm; do not edit."
	for p in xterm addon-fit; do
		(cd "$mods/$p" && node -p 'const p = require("./package.json"); `${p.name} ${p.version} ${p.license}`')
	done
} >"$out/VERSIONS"
echo "wrote $out:"
cat "$out/VERSIONS"
