// Throttling of sign-in and sign-up, shared by every API process through
// Redis: per e-mail address (guessing one account's password) and per client
// address (spraying many accounts, or creating them in bulk). A few attempts
// are free; after them each attempt must wait a delay that doubles from 1 s up
// to a minute, and a key is forgotten 15 minutes after its last attempt. So a
// guesser gets about one try a minute per address, while a real user who
// mistyped is never locked out for more than a minute (and a success clears
// the address's count).
import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import { AppError, unavailable } from '../errors.js'
import { redisKey } from '../redis.js'

const BASE_DELAY_MS = 1_000
const MAX_DELAY_MS = 60_000
const FORGET_AFTER_MS = 15 * 60_000

// KEYS: the counters; ARGV: now (ms), base delay, max delay, forget-after, then each key's free attempts.
// An attempt is refused (returns the ms to wait) when any counter is waiting; otherwise it is counted on
// every counter at once (so concurrent attempts cannot all slip through before one is recorded) and 0 returned.
const ATTEMPT = `
local now, base, cap, forget = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local wait = 0
for i, key in ipairs(KEYS) do
  local nxt = tonumber(redis.call('HGET', key, 'next') or '0')
  if nxt - now > wait then wait = nxt - now end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local n = redis.call('HINCRBY', key, 'n', 1)
  local free = tonumber(ARGV[4 + i])
  local nxt = 0
  if n > free then nxt = now + math.min(cap, base * 2 ^ (n - free - 1)) end
  redis.call('HSET', key, 'next', nxt)
  redis.call('PEXPIRE', key, forget + math.max(0, nxt - now))
end
return 0`

export type ThrottleConfig = Pick<Config, 'redisPrefix' | 'authAttemptsPerAddress' | 'authAttemptsPerClient'>

// One attempt counts against several keys in one script; on a Redis Cluster a script's keys must share a hash
// slot, so every throttle key carries the `{throttle}` hash tag.
const throttleKey = (config: ThrottleConfig, ...parts: string[]) => redisKey(config, '{throttle}', ...parts)

const emailKey = (config: ThrottleConfig, email: string) =>
  // Hashed: e-mail addresses have no business in Redis key names.
  throttleKey(config, 'login-email', createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32))

async function attempt(redis: Redis, keys: Array<[string, number]>, what: string): Promise<void> {
  const wait = (await redis
    .eval(ATTEMPT, keys.length, ...keys.map(([k]) => k), Date.now(), BASE_DELAY_MS, MAX_DELAY_MS, FORGET_AFTER_MS, ...keys.map(([, free]) => free))
    .catch((err: Error) => { throw unavailable(`sign-in throttle unavailable: ${err.message}`) })) as number
  if (wait > 0) {
    const seconds = Math.ceil(wait / 1000)
    const err = new AppError('rate_limited', 'too_many_attempts', `too many ${what} attempts; retry in ${seconds} s`)
    err.retryAfter = seconds
    throw err
  }
}

/** Counts a sign-in attempt for the address and the client, or throws 429 with Retry-After. */
export async function throttleLogin(redis: Redis, config: ThrottleConfig, clientIp: string, email: string): Promise<void> {
  await attempt(redis, [[emailKey(config, email), config.authAttemptsPerAddress], [throttleKey(config, 'login-ip', clientIp), config.authAttemptsPerClient]], 'sign-in')
}

/** After a successful sign-in the address starts afresh (the client's count is kept: it may be spraying). */
export async function clearLoginThrottle(redis: Redis, config: ThrottleConfig, email: string): Promise<void> {
  await redis.del(emailKey(config, email)).catch(() => {})
}

/** Counts a sign-up attempt for the client, or throws 429 with Retry-After. */
export async function throttleSignup(redis: Redis, config: ThrottleConfig, clientIp: string): Promise<void> {
  await attempt(redis, [[throttleKey(config, 'signup-ip', clientIp), config.authAttemptsPerClient]], 'sign-up')
}

/**
 * Counts a password-reset request, throttled like sign-in (decisions.md 19): per address, so one inbox is not
 * flooded with reset mails, and per client. Separate counters from sign-in, so that resetting is not blocked by
 * the failed sign-ins that made someone reset.
 */
export async function throttlePasswordReset(redis: Redis, config: ThrottleConfig, clientIp: string, email: string): Promise<void> {
  const address = createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32)
  await attempt(redis, [[throttleKey(config, 'reset-email', address), config.authAttemptsPerAddress], [throttleKey(config, 'reset-ip', clientIp), config.authAttemptsPerClient]], 'password reset')
}
