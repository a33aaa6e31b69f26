#!/usr/bin/env bash
# data/ (data/README.md): every file in it is listed in the table of data/README.md's "Files"
# section with a source and a licence, and every listed file exists.
set -u
cd "$(dirname "$0")/.."
pass=0; fail=0
ok()  { echo "ok    $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); }
readme=data/README.md
if [ ! -f "$readme" ]; then bad "data/README.md exists"; echo "cli_data: $pass passed, 1 failed"; exit 1; fi
# rows of the "## Files" table after its header and separator: | file | what | used by | source | licence |
rows=$(awk '/^## Files/{f=1; next} /^## /{f=0} f && /^\|/' "$readme" | tail -n +3)
listed=()
problems=0
while IFS= read -r row; do
    [ -n "$row" ] || continue
    IFS='|' read -r _ file what used source licence _ <<<"$row"
    trim() { local s="$1"; s="${s#"${s%%[![:space:]]*}"}"; s="${s%"${s##*[![:space:]]}"}"; printf '%s' "$s"; }
    file=$(trim "$file"); file=${file//\`/}; source=$(trim "$source"); licence=$(trim "$licence")
    listed+=("$file")
    if [ ! -f "data/$file" ]; then echo "      listed but missing: data/$file"; problems=$((problems + 1)); fi
    if [ -z "$source" ] || [ -z "$licence" ]; then echo "      no source or licence: $file"; problems=$((problems + 1)); fi
done <<<"$rows"
[ $problems -eq 0 ] && ok "every listed file exists, with a source and a licence (${#listed[@]} listed)" \
                    || bad "listed files"
missing=0
while IFS= read -r f; do
    rel=${f#data/}
    [ "$rel" = README.md ] && continue
    found=0
    for l in "${listed[@]+"${listed[@]}"}"; do [ "$l" = "$rel" ] && found=1 && break; done
    if [ $found -eq 0 ]; then echo "      not listed in data/README.md: $f"; missing=$((missing + 1)); fi
done < <(find data -type f | sort)
[ $missing -eq 0 ] && ok "every file in data/ is listed" || bad "unlisted files in data/"
echo "cli_data: $pass passed, $fail failed"
[ $fail -eq 0 ]
