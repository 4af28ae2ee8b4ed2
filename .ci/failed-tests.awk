# Each failed test or assertion of a tap log: its name, where it is (file:line) and, for an
# assertion, the first lines of its diff or its found and wanted values.
function flush() {
  if (name == "") return
  print name (where == "" ? "" : "  (" where ")")
  for (i = 1; i <= n; i++) print "      " detail[i]
  name = ""; where = ""; n = 0; block = ""
}
/^ *not ok [0-9]+ - / { flush(); name = $0; sub(/^ +/, "", name); keys = match($0, /[^ ]/) + 2; next }
name != "" {
  depth = match($0, /[^ ]/); line = substr($0, depth)
  if (depth == 0 || depth < keys) { flush(); next }
  if (line == "...") { flush(); next }
  if (depth == keys) {
    block = ""
    if (line ~ /^(found|wanted|message|error|expired): /) { if (n < 12) detail[++n] = line }
    else if (line ~ /^signal: / && line != "signal: null") { if (n < 12) detail[++n] = line }
    else if (line ~ /^diff: /) block = "diff"
  } else if (line ~ /^fileName: / && where == "") where = substr(line, 11)
  else if (line ~ /^lineNumber: / && where !~ /:[0-9]+$/) where = where ":" substr(line, 13)
  else if (block == "diff" && line !~ /^(--- expected|\+\+\+ actual|@@ )/ && n < 12) detail[++n] = substr($0, keys + 2)
}
END { flush() }
