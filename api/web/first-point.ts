// The example write the app shows: on the signed-out landing page (with a placeholder key) and, with the
// new key in it, on the API keys page. One command, so that README, landing page and keys page tell one
// story (a `signups` counter). Plain TypeScript: the server renders it and the keys page bundles it.
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

export function firstPointCurl(base: string, key: string): string {
  return `curl -X POST ${shellQuote(`${base}/api/v1/stats/signups/count`)} \\\n  -H ${shellQuote(`Authorization: Bearer ${key}`)} \\\n  -H 'Content-Type: application/json' \\\n  -d '{"count": 1}'`
}
