// Settings in one file: .env.example lists every setting the service reads, and .env is read by every command.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import test from 'ava'
import { loadConfig, readEnvFile, SETTINGS } from '../../shared/config.js'

const example = readFileSync('.env.example', 'utf8')
const listed = new Map(
  [...example.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=(.*)$/gm)].map((m) => [m[1], { value: m[2], commented: m[0].startsWith('#') }]),
)

test('.env.example lists every setting, and nothing the service does not read', (t) => {
  t.deepEqual(
    SETTINGS.filter((s) => !listed.has(s)),
    [],
    'settings missing from .env.example',
  )
  t.deepEqual(
    [...listed.keys()].filter((s) => !SETTINGS.includes(s)),
    [],
    'lines naming no setting',
  )
})

test('the values .env.example shows are the defaults', (t) => {
  const active = Object.fromEntries([...listed].filter(([, v]) => !v.commented).map(([k, v]) => [k, v.value]))
  t.deepEqual(loadConfig(active), loadConfig({}))
})

test('readEnvFile fills unset variables from the file and leaves set ones alone', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'envfile-'))
  const file = join(dir, '.env')
  writeFileSync(file, 'SETTINGS_TEST_A=from-file\nSETTINGS_TEST_B=from-file\n')
  process.env.SETTINGS_TEST_B = 'from-env'
  t.true(readEnvFile(file))
  t.is(process.env.SETTINGS_TEST_A, 'from-file')
  t.is(process.env.SETTINGS_TEST_B, 'from-env')
  t.false(readEnvFile(join(dir, 'missing.env')))
})
