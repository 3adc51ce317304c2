#!/usr/bin/env bash
# `npm run check:pack` (CI runs it from .ci/run): the package installs like a real command. Packs the
# checkout, installs the tarball into a temporary global prefix offline from npm's cache (`npm ci` has
# just filled it; the network is not used), then runs the installed `arkivector`: --version, help,
# --help of each command, `devnet` until it listens, `serve` until /healthz and the console answer, and
# `serve` with the local embedder on a generated model folder until it has embedded text once; then installs
# the tarball again with onnxruntime-node's install step failing, and checks that `serve` says text needs the
# runtime and how to get it (cause no_runtime), while vector search works.
set -euo pipefail
cd "$(dirname "$0")/.."

# How long each started process may take to come up (seconds), and the poll step of that wait.
READY_TIMEOUT=120
tmp="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap 'cleanup; cleanup_tarball 2>/dev/null || true' EXIT

fail() {
  echo "check-pack: $*" >&2
  exit 1
}

# Waits (bounded) until FILE has a line matching PATTERN; prints that line.
wait_for_line() {
  local file="$1" pattern="$2" pid="$3" deadline=$((SECONDS + READY_TIMEOUT))
  while ((SECONDS < deadline)); do
    if grep -m1 -E "$pattern" "$file" 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || fail "process exited before printing /$pattern/: $(cat "$file")"
    sleep 0.2
  done
  fail "no /$pattern/ within ${READY_TIMEOUT}s: $(cat "$file")"
}

version="$(node -p "require('./package.json').version")"
tarball="arkivector-$version.tgz"
# The install lines exactly as the README's "Installing" section shows them (the console and the help show
# the same ones: src/packageInfo.ts INSTALL_COMMANDS, checked against the README by test/readme/install.test.ts).
mapfile -t install_lines < <(awk '/^### Installing/ {s=1} s && /^```sh$/ {b=1; next} b && /^```$/ {exit} b && /^npm / {sub(/ +#.*/, ""); print}' README.md)
((${#install_lines[@]} == 2)) || fail "expected two npm lines in the README's Installing block, found: ${install_lines[*]}"
[[ "${install_lines[0]}" == "npm pack" ]] || fail "the README's first install line is not npm pack: ${install_lines[0]}"
[[ "${install_lines[1]}" == "npm install -g ./$tarball" ]] || fail "the README installs ${install_lines[1]}, not ./$tarball"
rm -f "$tarball"
cleanup_tarball() { rm -f "$tarball"; }

echo "check-pack: ${install_lines[0]}"
bash -c "${install_lines[0]} --silent" >/dev/null
[[ -f "$tarball" ]] || fail "npm pack produced no $tarball"
contents="$(tar -tzf "$tarball")"
# rebuildWorker.js is started by path (new Worker), never imported: make sure the package has it.
# Every file of the console (the page, its browser modules, style and icon) is served from the package.
console_files=()
for file in src/console/public/*; do console_files+=("package/dist/$file"); done
for file in package/bin/arkivector.js package/dist/src/cli.js "${console_files[@]}" package/dist/src/engine/rebuildWorker.js \
  package/dist/src/embedder/local/embedWorker.js package/LICENSE \
  package/CHANGELOG.md package/README.md; do
  grep -qx "$file" <<<"$contents" || fail "$file is missing from the package"
done
if grep -qE '^package/(src|test)/|\.ts$' <<<"$contents"; then fail "TypeScript sources or tests are in the package"; fi

echo "check-pack: ${install_lines[1]} (offline, into a temporary prefix)"
# The README's line as written; npm reads the prefix and the cache mode from its environment.
# onnxruntime-node's install script would fetch a CUDA provider from outside the npm registry: skip it.
# Arguments: the prefix, onnxruntime-node's install flag, and the cache mode.
install() {
  env ONNXRUNTIME_NODE_INSTALL="$2" npm_config_prefix="$1" npm_config_audit=false npm_config_fund=false "$3"=true \
    bash -c "${install_lines[1]}" >"$tmp/install.log" 2>&1
}
# Installs into prefix $1 with onnxruntime-node's install flag $2, offline when npm's cache allows.
install_offline() {
  if ! install "$1" "$2" npm_config_offline; then
    # `npm ci` caches package tarballs but not the registry's metadata, which resolving the tarball's
    # dependency ranges needs: on a cache without it, read the metadata from the registry (once per machine).
    grep -q ENOTCACHED "$tmp/install.log" || fail "npm install -g failed: $(tail -n 30 "$tmp/install.log")"
    echo "check-pack: npm's cache lacks registry metadata; installing with --prefer-offline"
    install "$1" "$2" npm_config_prefer_offline || fail "npm install -g failed: $(tail -n 30 "$tmp/install.log")"
  fi
}
install_offline "$tmp/prefix" skip
bin="$tmp/prefix/bin/arkivector"
[[ -x "$bin" ]] || fail "no arkivector command in $tmp/prefix/bin"
[[ ! -e "$tmp/prefix/lib/node_modules/arkivector/node_modules/tsx" ]] || fail "tsx was installed at run time"

[[ "$("$bin" --version)" == "arkivector $version" ]] || fail "--version does not print arkivector $version"
help="$("$bin" help)"
for command in serve devnet collection put search entities forget ingest; do
  grep -q "^  $command " <<<"$help" || fail "help does not list $command"
  "$bin" "$command" --help | grep -q "^usage: arkivector $command" || fail "$command --help does not show its usage"
  [[ "$("$bin" "$command" --version)" == "arkivector $version" ]] || fail "$command --version"
done

echo "check-pack: arkivector devnet"
"$bin" devnet --port 0 >"$tmp/devnet.log" 2>&1 &
pids+=($!)
wait_for_line "$tmp/devnet.log" '^Listening: ' "${pids[-1]}" >/dev/null
kill "${pids[-1]}"

echo "check-pack: arkivector serve"
# The installed command keeps its chain in the per-user data directory, like npm start in .arkivector/.
XDG_DATA_HOME="$tmp/data" "$bin" serve --http 127.0.0.1:0 --devnet-port 0 --block-time 1 --log-level warn >"$tmp/serve.log" 2>&1 &
pids+=($!)
line="$(wait_for_line "$tmp/serve.log" '^REST: ' "${pids[-1]}")"
grep -qF "Memory:   kept in $tmp/data/arkivector/devnet-dbchain.json" "$tmp/serve.log" ||
  fail "the installed serve does not keep its chain in \$XDG_DATA_HOME/arkivector: $(grep '^Memory:' "$tmp/serve.log")"
base="$(sed -E 's#^REST: +(http://127\.0\.0\.1:[0-9]+)/.*#\1#' <<<"$line")"
node --input-type=module -e '
  const base = process.argv[1];
  const check = async (path, want) => {
    const response = await fetch(base + path);
    const body = await response.text();
    if (response.status !== 200 || !want.test(body)) throw new Error(`${path}: ${response.status} ${body.slice(0, 200)}`);
  };
  await check("/healthz", /"ok"/);
  await check("/", /arkivector console/);
  await check("/console/app.js", /sessionStorage/);
  await check("/console/search.js", /semantic/);
  // The Connect page shows the install lines this script just ran.
  const node = await (await fetch(base + "/console/node.json")).json();
  if (node.install.join("\n") !== process.argv[2]) throw new Error(`the console shows ${JSON.stringify(node.install)}`);
' "$base" "$(printf '%s\n' "${install_lines[@]}" | head -c -1)" || fail "the installed serve did not answer on $base"
kill "${pids[-1]}"

echo "check-pack: arkivector serve --embedder local:PATH (the generated test model)"
node --import tsx --input-type=module -e '
  const { writeTinyModel } = await import("./test/helpers/tinyModel.ts");
  await writeTinyModel(process.argv[1]);
' "$tmp/tiny-model"
XDG_CACHE_HOME="$tmp/cache" "$bin" serve --http 127.0.0.1:0 --block-time 1 --log-level warn --no-demo \
  --devnet-port 0 --embedder "local:$tmp/tiny-model" --model-hub off >"$tmp/serve-local.log" 2>&1 &
pids+=($!)
line="$(wait_for_line "$tmp/serve-local.log" '^REST: ' "${pids[-1]}")"
base="$(sed -E 's#^REST: +(http://127\.0\.0\.1:[0-9]+)/.*#\1#' <<<"$line")"
node --input-type=module -e '
  const base = process.argv[1];
  const post = async (path, body) => {
    const response = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const answer = await response.json();
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  const created = await post("/v1/collections", { name: "pack", metric: "cosine" });
  if (created.dim !== 8) throw new Error(`created with dim ${created.dim}, not the 8 of the test model`);
  const written = await post("/v1/collections/pack/entities", { entities: [{ id: "pet", document: "a cat called Miso" }] });
  const found = await post("/v1/collections/pack/search", { text: "my cat", k: 1, min_block: written.block_number });
  if (found.results[0]?.id !== "pet") throw new Error(`text search answered ${JSON.stringify(found)}`);
' "$base" || fail "the installed serve did not embed with the local model: $(cat "$tmp/serve-local.log")"
kill "${pids[-1]}"

echo "check-pack: ${install_lines[1]} where onnxruntime-node's install step fails (a second prefix)"
# A flag value onnxruntime-node's install script rejects makes its install step fail at once, offline,
# as a blocked CUDA download does on a machine that reaches only the npm registry (the issue's case):
# npm then drops the optional dependency and the install succeeds. --omit=optional would leave it out
# without running (or failing) any install step, which is not the case a user meets.
rm -rf "$tmp/prefix" "$tmp/data" "$tmp/cache"
install_offline "$tmp/prefix-no-runtime" arkivector-check-pack-fails-here
bin="$tmp/prefix-no-runtime/bin/arkivector"
[[ -x "$bin" ]] || fail "no arkivector command in $tmp/prefix-no-runtime/bin"
[[ ! -e "$tmp/prefix-no-runtime/lib/node_modules/arkivector/node_modules/onnxruntime-node" ]] ||
  fail "onnxruntime-node is installed although its install step failed"
# The default embedder (the local model), the hub left at its default: the node must not try to fetch.
XDG_DATA_HOME="$tmp/data" XDG_CACHE_HOME="$tmp/cache" "$bin" serve --http 127.0.0.1:0 --block-time 1 \
  --log-level warn --no-demo --devnet-port 0 >"$tmp/serve-no-runtime.log" 2>&1 &
pids+=($!)
line="$(wait_for_line "$tmp/serve-no-runtime.log" '^REST: ' "${pids[-1]}")"
base="$(sed -E 's#^REST: +(http://127\.0\.0\.1:[0-9]+)/.*#\1#' <<<"$line")"
embedder_line="$(grep '^Embedder: ' "$tmp/serve-no-runtime.log")" || fail "the banner has no Embedder line"
for want in 'unavailable' 'the packages that run a local model are not installed' 'onnxruntime-node' \
  "ONNXRUNTIME_NODE_INSTALL=skip ${install_lines[1]}" 'mode "keyword"'; do
  grep -qF "$want" <<<"$embedder_line" || fail "the banner's Embedder line does not say \"$want\": $embedder_line"
done
node --input-type=module -e '
  const [base, reinstall] = process.argv.slice(1);
  const call = async (path, body) => {
    const response = await fetch(base + path, body && { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const answer = await response.json();
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  const { embedder } = await call("/v1/status");
  if (embedder?.state !== "failed" || embedder.cause !== "no_runtime") throw new Error(`status embedder: ${JSON.stringify(embedder)}`);
  if (!embedder.ways_out?.includes(reinstall)) throw new Error(`the ways out do not name ${reinstall}: ${embedder.ways_out}`);
  if (!embedder.ways_out.includes("mode \"keyword\"")) throw new Error(`the ways out do not name mode keyword: ${embedder.ways_out}`);
  // Vectors need no runtime: a collection with its dim, an entity by vector, a vector search.
  await call("/v1/collections", { name: "plain", dim: 3, metric: "cosine" });
  const written = await call("/v1/collections/plain/entities", { entities: [{ id: "a", vector: [1, 0, 0] }, { id: "b", vector: [0, 1, 0] }] });
  const found = await call("/v1/collections/plain/search", { vector: [0.9, 0.1, 0], k: 1, min_block: written.block_number });
  if (found.results[0]?.id !== "a") throw new Error(`vector search answered ${JSON.stringify(found)}`);
' "$base" "ONNXRUNTIME_NODE_INSTALL=skip ${install_lines[1]}" ||
  fail "the installed serve without the runtime: $(cat "$tmp/serve-no-runtime.log")"
kill "${pids[-1]}"
echo "check-pack: ok ($tarball)"
