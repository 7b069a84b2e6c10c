// Links in alert mails and Slack messages open the stat's page in the app (docs/decisions.md
// §18), on PUBLIC_URL, or without one on the address `npm run dev` prints (the session cookie's host).
import test from 'ava'
import { statLink } from '../../shared/alerts/deliver.js'

test('the stat link is PUBLIC_URL + /stats/<name>, the name encoded, never a JSON route', (t) => {
  t.is(statLink({ publicUrl: 'https://metrics.example.com/', port: 3000 }, 'latency_ms'), 'https://metrics.example.com/stats/latency_ms')
  t.is(statLink({ publicUrl: 'https://metrics.example.com', port: 3000 }, 'a b/c?d'), 'https://metrics.example.com/stats/a%20b%2Fc%3Fd')
  t.is(statLink({ publicUrl: undefined, port: 3000 }, 'signups'), 'http://127.0.0.1:3000/stats/signups')
})
