// Line numbers for JSON values. JSON.parse gives none, so when a JSON import
// has bad points this scanner walks the (already valid) text once, following
// the path of every value, and notes the line on which each wanted path
// starts. It runs only when there are errors to place.

/** The line (1-based) of each wanted path, keyed by the path's segments joined with NUL. */
export function linesOfPaths(text: string, wanted: Array<Array<string | number>>): Map<string, number> {
  const keys = new Set(wanted.map((p) => p.join('\u0000')))
  const depths = new Set(wanted.map((p) => p.length))
  const out = new Map<string, number>()
  // One frame per open container: the key or index of the value being read in it.
  const path: Array<string | number> = []
  const isArray: boolean[] = []
  let expectKey = false
  let line = 1
  const note = () => {
    if (!depths.has(path.length)) return
    const key = path.join('\u0000')
    if (keys.has(key) && !out.has(key)) out.set(key, line)
  }
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 10) line++
    else if (c === 32 || c === 9 || c === 13 || c === 58)
      continue // space, tab, CR, ':'
    else if (c === 44) {
      // ','
      if (isArray[isArray.length - 1]) (path[path.length - 1] as number)++
      else expectKey = true
    } else if (c === 123 || c === 91) {
      // '{' '['
      note()
      isArray.push(c === 91)
      path.push(c === 91 ? 0 : '')
      expectKey = c === 123
    } else if (c === 125 || c === 93) {
      // '}' ']'
      isArray.pop()
      path.pop()
      expectKey = false
    } else if (c === 34) {
      // '"'
      let j = i + 1
      let escaped = false
      while (j < text.length && text.charCodeAt(j) !== 34) {
        if (text.charCodeAt(j) === 92) {
          escaped = true
          j++
        }
        j++
      }
      if (expectKey) {
        path[path.length - 1] = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j)
        expectKey = false
      } else note()
      i = j
    } else {
      // A number, true, false or null: its start is the value's position; skip to its end.
      note()
      while (i + 1 < text.length && !/[\s,\]}]/.test(text[i + 1])) i++
    }
  }
  return out
}
