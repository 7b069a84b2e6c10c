// Plain-language questions (docs/decisions.md §I-4.6, §I-4.6.1; §13).
import { answerQuestion } from '../../shared/query/engine.js'
import { QueryBody, QueryResponse } from '../../shared/query/schema.js'
import { accountOf } from '../context.js'
import type { Routes } from '../route.js'

export function queryRoutes(routes: Routes): void {
  routes.add(
    {
      method: 'post',
      path: '/api/v1/query',
      audit: false,
      role: 'viewer',
      tag: 'query',
      auth: ['bearer', 'session'],
      rateLimited: true,
      body: QueryBody,
      summary: 'Answer a plain-language question about your stats; every number in the answer is checked against `data`',
      responses: {
        200: {
          description: "The answer, the values it rests on, how the question was read and the verifier's result",
          schema: QueryResponse,
        },
      },
      errors: [403, 429],
    },
    async (ctx, { body }) => {
      const account = accountOf(ctx)
      // The account's zone, once set, is the one clock of every page; the browser's only stands in until then.
      const time_zone = account.timeZone ?? body.time_zone
      ctx.body = await ctx.deps.reads.run((sql) => answerQuestion({ ...ctx.deps, sql }, account.id, { ...body, time_zone }))
    },
  )
}
