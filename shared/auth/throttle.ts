// Throttling of sign-in and sign-up, shared by every API process through
// Redis: per e-mail address (guessing one account's password) and per client
// address (spraying many accounts, or creating them in bulk). A few attempts
// are free; after them each attempt must wait a delay that doubles from 1 s up
// to a minute, and a key is forgotten 15 minutes after its last attempt. So a
// guesser gets about one try a minute per address, while a real user who
// mistyped is never locked out for more than a minute (and a success clears
// the address's count).
//
// Password-reset mail to one address tightens further: its
// delay doubles up to a day and is remembered for a day, and at most
// RESET_MAILS_PER_DAY requests per address are accepted in any 24 hours, so an
// inbox gets a handful of reset mails a day, not 1,440. (Two-factor codes are
// bounded by a lock instead: see TOTP_MAX_FAILURES in two-factor.ts.)
//
// Why a script of our own rather than rate-limiter-flexible: that library counts points
// in fixed windows and blocks for a fixed blockDuration. What this file needs and it lacks: (1) a delay that
// doubles per attempt after the free ones, capped per counter (its only growing delay, ExpressBruteFlexible, is
// Express req/res middleware and grows as Fibonacci, not doubling; elsewhere one computes each block and calls
// block() oneself); (2) one attempt checked against two counters (address and client) and counted on both, or
// on neither when either refuses, in one atomic step (RateLimiterUnion consumes each limiter separately, so a
// refused attempt still counts on the others, in one round trip per limiter); (3) forgetting 15 minutes after the
// last attempt rather than at the end of a window from the first; (4) a caller's clock (`now`), with which a test
// crosses a day without waiting one. Built from its parts, the same behaviour would be more code of ours than the
// script below, not less.
import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Config } from '../config.js'
import { AppError, unavailable } from '../errors.js'
import { redisKey } from '../redis.js'

const BASE_DELAY_MS = 1_000
const MAX_DELAY_MS = 60_000
const FORGET_AFTER_MS = 15 * 60_000
const DAY_MS = 86_400_000
/** Password-reset requests accepted per address in any 24 hours (each mails at most one link). */
export const RESET_MAILS_PER_DAY = 5

/** One counter: its key, the attempts free of delay, the longest delay, how long it is remembered, and a cap per 24 h (0: none). */
interface Counter {
  key: string
  free: number
  maxDelayMs: number
  forgetMs: number
  perDay: number
}

// KEYS: the counters; ARGV: now (ms), base delay, then per key: free attempts, max delay, forget-after, cap per day.
// An attempt is refused (returns the ms to wait) when any counter is waiting or has used its day's cap; otherwise
// it is counted on every counter at once (so concurrent attempts cannot all slip through before one is recorded)
// and 0 returned. The day's cap counts from the first attempt of a window ('ws'), 'w' attempts so far.
const ATTEMPT = `
local now, base = tonumber(ARGV[1]), tonumber(ARGV[2])
local wait = 0
for i, key in ipairs(KEYS) do
  local h = redis.call('HMGET', key, 'next', 'w', 'ws')
  local nxt, w, ws = tonumber(h[1] or '0'), tonumber(h[2] or '0'), tonumber(h[3] or '0')
  if nxt - now > wait then wait = nxt - now end
  local perDay = tonumber(ARGV[2 + 4 * i])
  if perDay > 0 and w >= perDay and now - ws < ${DAY_MS} and ws + ${DAY_MS} - now > wait then wait = ws + ${DAY_MS} - now end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  local free, cap, forget, perDay = tonumber(ARGV[4 * i - 1]), tonumber(ARGV[4 * i]), tonumber(ARGV[4 * i + 1]), tonumber(ARGV[4 * i + 2])
  local n = redis.call('HINCRBY', key, 'n', 1)
  local nxt = 0
  if n > free then nxt = now + math.min(cap, base * 2 ^ (n - free - 1)) end
  redis.call('HSET', key, 'next', nxt)
  local keep = forget + math.max(0, nxt - now)
  if perDay > 0 then
    local ws = tonumber(redis.call('HGET', key, 'ws') or '0')
    if now - ws >= ${DAY_MS} then
      ws = now
      redis.call('HSET', key, 'ws', ws, 'w', 0)
    end
    redis.call('HINCRBY', key, 'w', 1)
    keep = math.max(keep, ws + ${DAY_MS} - now)
  end
  redis.call('PEXPIRE', key, keep)
end
return 0`

export type ThrottleConfig = Pick<Config, 'redisPrefix' | 'authAttemptsPerAddress' | 'authAttemptsPerClient'>

// One attempt counts against several keys in one script; on a Redis Cluster a script's keys must share a hash
// slot, so every throttle key carries the `{throttle}` hash tag.
const throttleKey = (config: ThrottleConfig, ...parts: string[]) => redisKey(config, '{throttle}', ...parts)

const emailKey = (config: ThrottleConfig, email: string) =>
  // Hashed: e-mail addresses have no business in Redis key names.
  throttleKey(config, 'login-email', createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32))

/** A counter of the sign-in kind: a few free attempts, then a delay doubling to a minute, forgotten after 15 idle minutes. */
const short = (key: string, free: number): Counter => ({ key, free, maxDelayMs: MAX_DELAY_MS, forgetMs: FORGET_AFTER_MS, perDay: 0 })

async function attempt(redis: Redis, counters: Counter[], what: string, now = Date.now()): Promise<void> {
  const wait = (await redis
    .eval(
      ATTEMPT,
      counters.length,
      ...counters.map((c) => c.key),
      now,
      BASE_DELAY_MS,
      ...counters.flatMap((c) => [c.free, c.maxDelayMs, c.forgetMs, c.perDay]),
    )
    .catch((err: Error) => {
      throw unavailable(`sign-in throttle unavailable: ${err.message}`)
    })) as number
  if (wait > 0) {
    const seconds = Math.ceil(wait / 1000)
    const err = new AppError(
      'rate_limited',
      'too_many_attempts',
      `too many ${what} attempts; retry in ${seconds > 5400 ? `${Math.round(seconds / 3600)} h (${seconds} s)` : `${seconds} s`}`,
    )
    err.retryAfter = seconds
    throw err
  }
}

/** Counts a sign-in attempt for the address and the client, or throws 429 with Retry-After. */
export async function throttleLogin(redis: Redis, config: ThrottleConfig, clientIp: string, email: string): Promise<void> {
  await attempt(
    redis,
    [
      short(emailKey(config, email), config.authAttemptsPerAddress),
      short(throttleKey(config, 'login-ip', clientIp), config.authAttemptsPerClient),
    ],
    'sign-in',
  )
}

/** After a successful sign-in the address starts afresh (the client's count is kept: it may be spraying). */
export async function clearLoginThrottle(redis: Redis, config: ThrottleConfig, email: string): Promise<void> {
  await redis.del(emailKey(config, email)).catch(() => {})
}

/** Counts a sign-up attempt for the client, or throws 429 with Retry-After. */
export async function throttleSignup(redis: Redis, config: ThrottleConfig, clientIp: string): Promise<void> {
  await attempt(redis, [short(throttleKey(config, 'signup-ip', clientIp), config.authAttemptsPerClient)], 'sign-up')
}

/**
 * Counts a password-reset request (docs/decisions.md §19): per address, so one inbox is not flooded with reset mails
 * (a delay doubling up to a day, remembered a day, and RESET_MAILS_PER_DAY in any 24 hours), and per client as
 * sign-in is. Separate counters from sign-in, so that resetting is not blocked by the failed sign-ins that made
 * someone reset. `now` is the clock (a test moves it forward instead of waiting hours).
 */
export async function throttlePasswordReset(
  redis: Redis,
  config: ThrottleConfig,
  clientIp: string,
  email: string,
  now = Date.now(),
): Promise<void> {
  const address = createHash('sha256').update(email.trim().toLowerCase()).digest('hex').slice(0, 32)
  await attempt(
    redis,
    [
      {
        key: throttleKey(config, 'reset-email', address),
        free: config.authAttemptsPerAddress,
        maxDelayMs: DAY_MS,
        forgetMs: DAY_MS,
        perDay: RESET_MAILS_PER_DAY,
      },
      short(throttleKey(config, 'reset-ip', clientIp), config.authAttemptsPerClient),
    ],
    'password reset',
    now,
  )
}
