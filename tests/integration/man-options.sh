#!/bin/bash
# man-options.sh help|man FILE : the options a `--help` text or a man page documents, one a line,
# sorted. Help: the option lines of its "Options:" or "Global options:" section. Man page: the tags
# of its OPTIONS or GLOBAL OPTIONS section, as man renders them. A line's leading words are taken
# while they are options (-x, --name) or their arguments (UPPER, a|b, [=X]); -h/--help is left out
# (every command has it).
set -euo pipefail

option_words() { # the options among each line's leading words
  awk '{
    for (i = 1; i <= NF; i++) {
      w = $i; sub(/,$/, "", w)
      if (w ~ /^--?[a-zA-Z0-9]/) { sub(/[=[].*/, "", w); if (w != "-h" && w != "--help") print w; continue }
      if (w ~ /^[A-Z][A-Z0-9_|.-]*$/ || w ~ /\|/ || w ~ /^\[/) continue
      break
    }
  }' | sort -u
}

case $1 in
  help)
    awk '/^(Global )?[Oo]ptions:$/ { on = 1; next } /^[^ ]/ { on = 0 } on && /^  -/' "$2" | option_words
    ;;
  man)
    MANWIDTH=200 man -l -E ascii -P cat "$2" 2>/dev/null | col -b |
      awk '/^[A-Z]/ { on = ($0 == "OPTIONS" || $0 == "GLOBAL OPTIONS"); next } on && /^       -/' |
      option_words
    ;;
  *) echo "usage: man-options.sh help|man FILE" >&2; exit 2 ;;
esac
