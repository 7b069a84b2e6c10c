// Builds accounts, sessions and keys through the public API, as a user would.
import { randomBytes } from 'node:crypto'
import { cookieFrom, request } from './http.js'

export interface User {
  email: string
  password: string
  accountId: string
  session: { cookie: string; csrf: string }
}

let counter = 0

export async function signUp(url: string, overrides: { email?: string; password?: string } = {}): Promise<User> {
  const email = overrides.email ?? `user${++counter}.${randomBytes(3).toString('hex')}@example.com`
  const password = overrides.password ?? 'correct horse battery'
  const res = await request(url, '/api/v1/auth/signup', { json: { email, password } })
  if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${res.text}`)
  return {
    email,
    password,
    accountId: res.body.account.id,
    session: { cookie: cookieFrom(res, 'service_session')!, csrf: res.body.csrf_token },
  }
}

export async function createKey(url: string, user: User, label = 'test key'): Promise<{ id: string; key: string }> {
  const res = await request(url, '/api/v1/auth/api-keys', { json: { label }, session: user.session })
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${res.text}`)
  return { id: res.body.api_key.id, key: res.body.key }
}
