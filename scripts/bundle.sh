#!/usr/bin/env bash
# Writes one offline archive (xz, at most 40 MB) that runs `tune --target cuda` on a machine with
# no network and no Deno: the Deno binary, the npm packages the tune command loads (node_modules
# and the DENO_DIR npm cache that `--cached-only` reads) and the project's tracked files, less the
# data sets and figures (data/, docs/figures/: replay caches and images tune does not read).
#
#   bash scripts/bundle.sh [OUT]        # default dist/tunebook-bundle.tar.xz
#
# BUNDLE_XZ_LEVEL (default 9) and BUNDLE_MAX_BYTES (default 40 MiB) exist for the test, which
# trades size for time. The bundle's deno.json keeps only the npm imports tune loads, so that
# `--cached-only` asks for no other package.
#
# On the target: tar -xJf tunebook-bundle.tar.xz && tunebook/tune --target cuda ...
# (nvcc and gcc come from the target machine; tunebook/deno-run runs any other entry point).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/dist/tunebook-bundle.tar.xz}
max_bytes=${BUNDLE_MAX_BYTES:-$((40 * 1024 * 1024))}
level=${BUNDLE_XZ_LEVEL:-9}
deno=$(readlink -f "${DENO:-$root/.tools/deno/node_modules/.bin/deno}")
[ -x "$deno" ] || { echo "bundle: no deno at $deno (run scripts/setup.sh)" >&2; exit 2; }
deno_dir=${DENO_DIR:-$HOME/.cache/deno}
stage=$(mktemp -d "${TMPDIR:-/tmp}/tb-bundle-XXXXXX")
trap 'rm -rf "$stage"' EXIT
dst=$stage/tunebook
mkdir -p "$dst/bin" "$dst/.deno_dir/npm"
echo "bundle: project files" >&2
(cd "$root" && git ls-files -z | grep -zv -e '^data/' -e '^docs/figures/' |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf -) | tar -C "$dst" -xf -
cp "$deno" "$dst/bin/deno"

# The npm packages of tune's module graph and everything they depend on.
echo "bundle: npm packages of cli/tune.ts" >&2
packages=$(cd "$root" && "$deno" info --json cli/tune.ts | "$deno" eval --quiet --no-config '
  const info = JSON.parse(await new Response(Deno.stdin.readable).text());
  const all = info.npmPackages ?? {};
  const todo = info.modules.filter((m) => m.kind === "npm").map((m) => m.npmPackage);
  const seen = new Set();
  while (todo.length) {
    const id = todo.pop();
    if (!id || seen.has(id) || !all[id]) continue;
    seen.add(id);
    todo.push(...(all[id].dependencies ?? []));
  }
  for (const id of seen) console.log(`${all[id].name}@${all[id].version}`);
')
[ -n "$packages" ] || { echo "bundle: found no npm packages (deno info failed?)" >&2; exit 1; }
mkdir -p "$dst/node_modules/.deno"
for p in $packages; do
  dir=${p//\//+}
  name=${p%@*}
  version=${p##*@}
  if [ ! -d "$root/node_modules/.deno/$dir" ]; then
    echo "bundle: $p is not installed in node_modules (run scripts/setup.sh)" >&2
    exit 1
  fi
  cp -a "$root/node_modules/.deno/$dir" "$dst/node_modules/.deno/"
  # Registry metadata and the package as DENO_DIR keeps them.
  reg="$deno_dir/npm/registry.npmjs.org/$name"
  if [ -d "$reg" ]; then
    mkdir -p "$dst/.deno_dir/npm/registry.npmjs.org/$name"
    [ -f "$reg/registry.json" ] && cp "$reg/registry.json" "$dst/.deno_dir/npm/registry.npmjs.org/$name/"
    [ -d "$reg/$version" ] && ln -s "../../../../node_modules/.deno/$dir/node_modules/$name" \
      "$dst/.deno_dir/npm/registry.npmjs.org/$name/$version"
  fi
  # The top-level link of a direct dependency.
  if [ -L "$root/node_modules/$name" ]; then
    mkdir -p "$(dirname "$dst/node_modules/$name")"
    cp -a "$root/node_modules/$name" "$dst/node_modules/$name"
  fi
done
cp -a "$root/node_modules/.deno/.setup-cache.bin" "$dst/node_modules/.deno/" 2>/dev/null || true
# Hoisted links (a package requiring a dependency of its dependency finds it here).
cp -a "$root/node_modules/.deno/node_modules" "$dst/node_modules/.deno/"
# deno.json with only the npm imports of those packages: --cached-only then asks for no other.
(cd "$dst" && printf '%s\n' $packages | "$deno" eval --quiet --no-config '
  const names = new Set((await new Response(Deno.stdin.readable).text()).split("\n")
    .filter(Boolean).map((p) => p.slice(0, p.lastIndexOf("@"))));
  const config = JSON.parse(Deno.readTextFileSync("deno.json"));
  config.imports = Object.fromEntries(Object.entries(config.imports ?? {}).filter(([, v]) =>
    !String(v).startsWith("npm:") || names.has(String(v).slice(4, String(v).lastIndexOf("@")))
  ));
  Deno.writeTextFileSync("deno.json", JSON.stringify(config, null, 2) + "\n");
')
# What Deno never loads from these packages: source maps, minified and alternative bundles,
# type declarations, mini-program builds.
find "$dst/node_modules/.deno" -type f \( -name '*.map' -o -name '*.min.js' -o -name '*.html' \
  -o -name '*.es2017.js' -o -name '*.fesm.js' -o -name '*.d.ts' -o -name '*.tsbuildinfo' \
  -o -name '*.md' \) -delete
find "$dst/node_modules/.deno" -type d -name miniprogram -prune -exec rm -rf {} +

cat > "$dst/deno-run" <<'SH'
#!/bin/sh
# Runs a tunebook entry point with the bundled Deno, offline: deno-run cli/tune.ts --help
here=$(cd "$(dirname "$0")" && pwd)
export DENO_DIR="$here/.deno_dir" DENO_NO_UPDATE_CHECK=1
cd "$here" || exit 1
exec "$here/bin/deno" run --cached-only --allow-read --allow-write --allow-run --allow-ffi \
  --allow-env --allow-sys "$@"
SH
cat > "$dst/tune" <<'SH'
#!/bin/sh
# tunebook's tune command with the bundled Deno, offline (see README "CUDA without a GPU").
here=$(cd "$(dirname "$0")" && pwd)
export DENO_DIR="$here/.deno_dir" DENO_NO_UPDATE_CHECK=1
exec "$here/bin/deno" run --cached-only --config "$here/deno.json" --allow-read --allow-write \
  --allow-run --allow-ffi --allow-env --allow-sys "$here/cli/tune.ts" "$@"
SH
chmod +x "$dst/deno-run" "$dst/tune"

mkdir -p "$(dirname "$out")"
echo "bundle: compressing (xz)" >&2
tar -C "$stage" -cf - tunebook | xz -T0 "-$level" >"$out.tmp"
mv "$out.tmp" "$out"
size=$(stat -c %s "$out")
echo "bundle: $out $((size / 1024 / 1024)) MiB ($size bytes), $(echo "$packages" | wc -l) npm packages"
if [ "$size" -gt "$max_bytes" ]; then
  echo "bundle: $out is larger than $max_bytes bytes (BUNDLE_MAX_BYTES)" >&2
  exit 1
fi
