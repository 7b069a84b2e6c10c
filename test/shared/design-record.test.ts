// The design record is the repository's own: every comment that cites docs/decisions.md names a section
// the document has, and no comment cites the documents it replaced (DESIGN.md, the interface's numbers, an
// issue), which a reader of the repository alone could not open.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import test from 'ava'

const ROOTS = ['api', 'shared', 'workers', 'test', 'sql', 'dev', 'bench', 'docs']
const SOURCE = /\.(ts|sql|md)$/

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return name === 'screenshots' || name === 'fixtures' ? [] : files(path)
    return SOURCE.test(name) ? [path] : []
  })
}

const decisions = readFileSync('docs/decisions.md', 'utf8')
// A section is a heading (### 8., ### D-3., ### I-2.2) or a numbered item inside one (- **I-4.1.4**, 3. **I-5.3**).
const sections = new Set(
  [...decisions.matchAll(/^(?:### |(?:-|\d+\.) \*\*)([A-Z]-)?(\d+[a-z]?(?:\.\d+)*|[A-Z])\b/gm)].map((m) => `${m[1] ?? ''}${m[2]}`),
)
const sources = ROOTS.flatMap(files).filter((f) => f !== 'docs/decisions.md' && f !== 'test/shared/design-record.test.ts')

test('every cited section of docs/decisions.md exists', (t) => {
  t.true(sections.has('8') && sections.has('D-3') && sections.has('I-2.2'), `sections read: ${[...sections].slice(0, 12).join(', ')}`)
  const missing: string[] = []
  for (const file of sources) {
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(/decisions\.md((?:,? §[\w.-]+| and §[\w.-]+|; §[\w.-]+)+)/g)) {
      for (const [, id] of m[1].matchAll(/§([\w-]+(?:\.\d+)*)/g)) if (!sections.has(id)) missing.push(`${file}: §${id}`)
    }
  }
  t.deepEqual(missing, [])
})

test('no comment cites a document outside the repository', (t) => {
  const outside = /DESIGN\.md|\binterface \d|\b[Ii]ssue \d+ item|\.\.\/shared\/(spec|research|bench)/
  const found = sources.flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .flatMap((line, i) => (outside.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
  )
  t.deepEqual(found, [])
})
