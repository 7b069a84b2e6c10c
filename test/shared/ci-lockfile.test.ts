// CI fails when the install changed package-lock.json, saying what to do; an unchanged
// lockfile passes. Runs .ci/lockfile-unchanged against a throwaway git repository.
import test from 'ava'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const SCRIPT = resolve('.ci/lockfile-unchanged')

function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lockfile-'))
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' })
  git('init', '-q')
  writeFileSync(join(dir, 'package-lock.json'), '{"lockfileVersion": 3, "packages": {}}\n')
  git('add', 'package-lock.json')
  git('-c', 'user.name=ci', '-c', 'user.email=ci@example.com', 'commit', '-qm', 'lock')
  return dir
}

test('an unchanged lockfile passes', (t) => {
  const dir = repo()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const run = spawnSync('bash', [SCRIPT, dir], { encoding: 'utf8' })
  t.is(run.status, 0, run.stderr)
})

test('a lockfile the install rewrote fails the run, with what to do', (t) => {
  const dir = repo()
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(
    join(dir, 'package-lock.json'),
    '{"lockfileVersion": 3, "packages": {"node_modules/@esbuild/darwin-arm64": {"optional": true}}}\n',
  )
  const run = spawnSync('bash', [SCRIPT, dir], { encoding: 'utf8' })
  t.is(run.status, 1)
  t.regex(run.stderr, /package-lock\.json changed during install/)
  t.regex(run.stderr, /commit the package-lock\.json it writes/)
})

test('.ci/run calls the check right after the install', (t) => {
  const run = execFileSync('cat', ['.ci/run'], { encoding: 'utf8' })
  t.regex(run, /npm ci [^\n]*\n\.ci\/lockfile-unchanged\n/)
})
