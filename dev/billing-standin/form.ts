// The provider's request encoding: application/x-www-form-urlencoded with
// bracketed keys (`line_items[0][price]=p&metadata[account_id]=a`), read back
// into nested objects; objects whose keys are all indexes become arrays.
type Tree = { [k: string]: Tree | string }

function arrays(node: Tree | string): unknown {
  if (typeof node === 'string') return node
  const keys = Object.keys(node)
  const values = Object.fromEntries(keys.map((k) => [k, arrays(node[k])]))
  return keys.length && keys.every((k) => /^\d+$/.test(k)) ? keys.sort((a, b) => Number(a) - Number(b)).map((k) => values[k]) : values
}

export function parseProviderForm(text: string): Record<string, unknown> {
  const root: Tree = {}
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.replace(/\]/g, '').split('[')
    let node = root
    path.forEach((seg, i) => {
      if (i === path.length - 1) node[seg] = value
      else node = (typeof node[seg] === 'object' ? node[seg] : (node[seg] = {})) as Tree
    })
  }
  return arrays(root) as Record<string, unknown>
}
