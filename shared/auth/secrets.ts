// Random tokens, hashing and constant-time comparison for every credential
// the service issues (API keys, session cookies, CSRF and share tokens).
import { createHash, randomBytes, randomInt, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import { PASSWORD_HASH_COST, PASSWORD_HASH_COST_MAX } from '../config.js'

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** A random string over letters and digits only: safe in URLs and in unencoded form bodies. */
export function randomBase62(length: number): string {
  let out = ''
  for (let i = 0; i < length; i++) out += BASE62[randomInt(62)]
  return out
}

/** A random URL-safe token of `bytes` bytes of entropy. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}

/** Compares two secrets (or their hashes) without leaking where they differ. */
export function constantTimeEqual(a: Buffer | string, b: Buffer | string): boolean {
  // Hash both sides first so that unequal lengths do not short-circuit.
  const ha = sha256(Buffer.isBuffer(a) ? a.toString('hex') : a)
  const hb = sha256(Buffer.isBuffer(b) ? b.toString('hex') : b)
  return timingSafeEqual(ha, hb)
}

// scrypt, memory-hard: N=2^15, r=8 uses 32 MiB per hash (128 * r * N bytes). The cost of new hashes
// comes from PASSWORD_HASH_COST; a stored hash carries its own N, so changing the cost keeps old ones valid.
const SCRYPT = { r: 8, p: 1 }
const KEY_LEN = 32

// Node refuses above 32 MiB by default, which N=2^15 needs exactly: allow the highest cost the settings accept,
// with room, and no more (a stored hash claiming a huge N is refused rather than allocated).
const MAXMEM = 2 * 128 * SCRYPT.r * 2 ** PASSWORD_HASH_COST_MAX

function scrypt(password: string, salt: Buffer, N: number, r = SCRYPT.r, p = SCRYPT.p): Promise<Buffer> {
  const opts: ScryptOptions = { N, r, p, maxmem: MAXMEM }
  return new Promise((resolve, reject) => scryptCb(password, salt, KEY_LEN, opts, (err, key) => (err ? reject(err) : resolve(key))))
}

/** Hashes a password as `scrypt$N$r$p$salt$hash` (base64url parts), with N = 2^cost. */
export async function hashPassword(password: string, cost = PASSWORD_HASH_COST): Promise<string> {
  const salt = randomBytes(16)
  const N = 2 ** cost
  const key = await scrypt(password, salt, N)
  return ['scrypt', N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/**
 * Checks a password against a stored hash; a missing hash still costs one scrypt (at the cost new hashes
 * get) so timing does not reveal unknown accounts.
 */
export async function verifyPassword(password: string, stored: string | null | undefined, cost = PASSWORD_HASH_COST): Promise<boolean> {
  const parts = (stored ?? '').split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    await scrypt(password, randomBytes(16), 2 ** cost)
    return false
  }
  const [, n, r, p, salt, hash] = parts
  const expected = Buffer.from(hash, 'base64url')
  const actual = await scrypt(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p))
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}
