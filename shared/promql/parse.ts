// PromQL text to the evaluator's tree (ast.ts), through `@prometheus-io/lezer-promql`, the grammar Prometheus'
// own editor uses (docs/decisions.md §25). The grammar is lenient: it recovers from syntax errors with error
// nodes and does not type-check, so both are checked here, the way Prometheus' Go parser refuses them. A
// construct outside the supported set is refused by name.
import { parser } from '@prometheus-io/lezer-promql'
import { AppError } from '../errors.js'
import type { SyntaxNode } from '@lezer/common'
import { type BinaryOp, COMPARISON, type Expr, type Matcher, type MatchOp, type SelectorExpr, type ValueType, typeOf } from './ast.js'

/**
 * A query Prometheus would refuse: `bad_data` (400) for a syntax error, a type error or a construct not supported,
 * `execution` (422) for one that cannot be evaluated (many-to-many matching).
 */
export class PromQLError extends AppError {
  constructor(message: string, errorType: 'bad_data' | 'execution' = 'bad_data') {
    super('invalid', errorType === 'execution' ? 'promql_execution' : 'promql_bad_data', message)
  }
}

/** Each supported function's argument types (a trailing `?` marks an optional one) and result. */
const FUNCTIONS: Record<string, { args: Array<ValueType | `${ValueType}?`> }> = {
  rate: { args: ['matrix'] },
  irate: { args: ['matrix'] },
  increase: { args: ['matrix'] },
  delta: { args: ['matrix'] },
  sum_over_time: { args: ['matrix'] },
  avg_over_time: { args: ['matrix'] },
  min_over_time: { args: ['matrix'] },
  max_over_time: { args: ['matrix'] },
  count_over_time: { args: ['matrix'] },
  last_over_time: { args: ['matrix'] },
  quantile_over_time: { args: ['scalar', 'matrix'] },
  abs: { args: ['vector'] },
  ceil: { args: ['vector'] },
  floor: { args: ['vector'] },
  round: { args: ['vector', 'scalar?'] },
  clamp_min: { args: ['vector', 'scalar'] },
  clamp_max: { args: ['vector', 'scalar'] },
  time: { args: [] },
  vector: { args: ['scalar'] },
  scalar: { args: ['vector'] },
}

const AGGREGATES = new Set(['sum', 'avg', 'min', 'max', 'count', 'quantile', 'topk', 'bottomk'])

const BINARY: Record<string, BinaryOp> = {
  Add: '+',
  Sub: '-',
  Mul: '*',
  Div: '/',
  Mod: '%',
  Pow: '^',
  Eql: '==',
  Neq: '!=',
  Gtr: '>',
  Lss: '<',
  Gte: '>=',
  Lte: '<=',
}

const MATCH_OPS: Record<string, MatchOp> = { EqlSingle: '=', Neq: '!=', EqlRegex: '=~', NeqRegex: '!~' }

const UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 }

/** A Prometheus duration (`5m`, `1h30m`, `250ms`) in seconds; null when the text is not one. */
export function parseDuration(text: string): number | null {
  if (!/^(\d+(ms|[smhdwy]))+$/.test(text)) return null
  let seconds = 0
  for (const m of text.matchAll(/(\d+)(ms|[smhdwy])/g)) seconds += Number(m[1]) * UNITS[m[2]]
  return seconds
}

function children(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = []
  for (let c = node.firstChild; c; c = c.nextSibling) out.push(c)
  return out
}

/** A PromQL string literal's value: Go's escapes in "..." and '...', none in `...`. */
function unquote(text: string): string {
  if (text.startsWith('`')) return text.slice(1, -1)
  const body = text.slice(1, -1)
  return body.replace(/\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|x[0-9a-fA-F]{2}|[0-7]{3}|.)/g, (_, e: string) => {
    const simple: Record<string, string> = {
      a: '\x07',
      b: '\b',
      f: '\f',
      n: '\n',
      r: '\r',
      t: '\t',
      v: '\v',
      '\\': '\\',
      '"': '"',
      "'": "'",
    }
    if (e.length === 1) {
      if (e in simple) return simple[e]
      throw new PromQLError(`unknown escape sequence \\${e}`)
    }
    if (e[0] === 'u' || e[0] === 'U' || e[0] === 'x') return String.fromCodePoint(Number.parseInt(e.slice(1), 16))
    return String.fromCodePoint(Number.parseInt(e, 8))
  })
}

function numberOf(text: string): number {
  const t = text.toLowerCase()
  if (t === 'inf' || t === '+inf') return Number.POSITIVE_INFINITY
  if (t === '-inf') return Number.NEGATIVE_INFINITY
  if (t === 'nan') return Number.NaN
  if (/^0x[0-9a-f]+$/.test(t)) return Number.parseInt(t, 16)
  const d = parseDuration(text)
  if (d !== null && !/^\d+$/.test(text)) return d
  const n = Number(text)
  if (Number.isNaN(n)) throw new PromQLError(`bad number or duration syntax: ${JSON.stringify(text)}`)
  return n
}

function duration(node: SyntaxNode, q: string): number {
  const text = q.slice(node.from, node.to)
  const d = parseDuration(text)
  if (d === null) throw new PromQLError(`bad duration syntax: ${JSON.stringify(text)}`)
  return d
}

/** Trees of the queries parsed last, by their text: a dashboard asks the same few queries at every refresh. */
const parsed = new Map<string, Expr>()
const PARSED_KEPT = 1_000

/**
 * The tree of a PromQL expression; a PromQLError when it is not valid or not supported. The tree of a query parsed
 * before is the same object: the evaluator only reads trees (parsing cost a third of a millisecond a query, as
 * much as evaluating a week's summed rate at an hour's step).
 */
export function parsePromQL(q: string): Expr {
  const known = parsed.get(q)
  if (known) return known
  const expr = parseTree(q)
  if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!)
  parsed.set(q, expr)
  return expr
}

function parseTree(q: string): Expr {
  if (!q.trim()) throw new PromQLError('empty query')
  const tree = parser.parse(q)
  let bad: { from: number } | null = null
  tree.iterate({
    enter(n) {
      if (bad) return false
      if (n.type.isError) bad = { from: n.from }
    },
  })
  if (bad) {
    const at = (bad as { from: number }).from
    throw new PromQLError(`1:${at + 1}: parse error: unexpected ${at >= q.length ? 'end of input' : JSON.stringify(q.slice(at, at + 10))}`)
  }
  const top = tree.topNode.firstChild
  if (!top) throw new PromQLError('empty query')
  return build(top, q)
}

function build(node: SyntaxNode, q: string): Expr {
  const text = () => q.slice(node.from, node.to)
  const kids = children(node)
  switch (node.name) {
    case 'ParenExpr':
      return build(kids[0], q)
    case 'NumberDurationLiteral':
      return { type: 'number', value: numberOf(text()) }
    case 'StringLiteral':
      return { type: 'string', value: unquote(text()) }
    case 'VectorSelector':
      return selector(node, q)
    case 'MatrixSelector': {
      const inner = build(kids[0], q)
      if (inner.type !== 'selector') throw new PromQLError(`ranges only allowed for vector selectors`)
      return { type: 'matrix', selector: inner, range: duration(kids[1], q) }
    }
    case 'OffsetExpr': {
      const inner = build(kids[0], q)
      const sign = kids.some((k) => k.name === 'Sub') ? -1 : 1
      const offset = sign * duration(kids[kids.length - 1], q)
      if (inner.type === 'selector') return { ...inner, offset: inner.offset + offset }
      if (inner.type === 'matrix') return { ...inner, selector: { ...inner.selector, offset: inner.selector.offset + offset } }
      throw new PromQLError('offset modifier must be preceded by an instant vector selector or range vector selector')
    }
    case 'UnaryExpr': {
      const expr = build(kids[1], q)
      const op = q.slice(kids[0].from, kids[0].to) as '-' | '+'
      const t = typeOf(expr)
      if (t !== 'scalar' && t !== 'vector')
        throw new PromQLError(`unary expression only allowed on expressions of type scalar or instant vector, got "${t}"`)
      return { type: 'unary', op, expr }
    }
    case 'FunctionCall':
      return call(node, q)
    case 'AggregateExpr':
      return aggregate(node, q)
    case 'BinaryExpr':
      return binary(node, q)
    case 'SubqueryExpr':
      throw new PromQLError('subqueries ([range:step]) are not supported')
    case 'StepInvariantExpr':
      throw new PromQLError('the @ modifier is not supported')
    default:
      throw new PromQLError(`${node.name} is not supported`)
  }
}

function selector(node: SyntaxNode, q: string): SelectorExpr {
  const matchers: Matcher[] = []
  let name: string | null = null
  for (const k of children(node)) {
    if (k.name === 'Identifier') name = q.slice(k.from, k.to)
    else if (k.name === 'LabelMatchers') {
      for (const m of children(k)) {
        if (m.name === 'QuotedLabelName') {
          // Prometheus 3's {"my.metric"}: a quoted metric name alone.
          if (name !== null) throw new PromQLError('metric name must not be set twice')
          name = unquote(q.slice(m.from, m.to))
          continue
        }
        const parts = children(m)
        const labelNode = parts.find((p) => p.name === 'LabelName' || p.name === 'QuotedLabelName')!
        const label =
          labelNode.name === 'QuotedLabelName' ? unquote(q.slice(labelNode.from, labelNode.to)) : q.slice(labelNode.from, labelNode.to)
        const opNode = parts.find((p) => p.name === 'MatchOp')!
        const op = MATCH_OPS[opNode.firstChild!.name]
        const value = unquote(q.slice(parts[parts.length - 1].from, parts[parts.length - 1].to))
        if (op === '=~' || op === '!~') regexOf(value)
        matchers.push({ name: label, op, value })
      }
    }
  }
  if (name !== null) {
    if (matchers.some((m) => m.name === '__name__')) throw new PromQLError(`metric name must not be set twice: ${JSON.stringify(name)}`)
    matchers.unshift({ name: '__name__', op: '=', value: name })
  }
  // Prometheus refuses a selector that every series would match ({} or only empty-matching matchers).
  if (
    !matchers.some(
      (m) => !regexOf(m.op === '=' || m.op === '!=' ? escapeRegex(m.value) : m.value).test('') !== (m.op === '!=' || m.op === '!~'),
    )
  )
    throw new PromQLError('vector selector must contain at least one non-empty matcher')
  return { type: 'selector', matchers, offset: 0, text: q.slice(node.from, node.to) }
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const regexCache = new Map<string, RegExp>()

/** A label matcher's regular expression, anchored at both ends as Prometheus anchors it. */
export function regexOf(source: string): RegExp {
  let re = regexCache.get(source)
  if (!re) {
    try {
      re = new RegExp(`^(?:${source})$`, 's')
    } catch (e) {
      throw new PromQLError(`invalid regular expression ${JSON.stringify(source)}: ${(e as Error).message}`)
    }
    if (regexCache.size > 1000) regexCache.clear()
    regexCache.set(source, re)
  }
  return re
}

function call(node: SyntaxNode, q: string): Expr {
  const [ident, body] = children(node)
  const fn = q.slice(ident.from, ident.to)
  const spec = FUNCTIONS[fn]
  if (!spec) throw new PromQLError(`function ${JSON.stringify(fn)} is not supported`)
  const args = body ? children(body).map((c) => build(c, q)) : []
  const required = spec.args.filter((a) => !a.endsWith('?')).length
  if (args.length < required || args.length > spec.args.length)
    throw new PromQLError(
      `expected ${required === spec.args.length ? required : `${required} to ${spec.args.length}`} argument(s) in call to "${fn}", got ${args.length}`,
    )
  args.forEach((a, i) => {
    const want = spec.args[i].replace('?', '')
    const got = typeOf(a)
    if (got !== want) throw new PromQLError(`expected type ${TYPE_NAME[want]} in call to function "${fn}", got ${TYPE_NAME[got]}`)
  })
  return { type: 'call', fn, args }
}

/** The names of by(), without(), on() and ignoring(): plain, or quoted as Prometheus 3 allows (`by ("host.name")`). */
function groupingLabels(node: SyntaxNode, q: string): string[] {
  return children(node).map((l) => (l.name === 'QuotedLabelName' ? unquote(q.slice(l.from, l.to)) : q.slice(l.from, l.to)))
}

const TYPE_NAME: Record<string, string> = { scalar: 'scalar', vector: 'instant vector', matrix: 'range vector', string: 'string' }

function aggregate(node: SyntaxNode, q: string): Expr {
  const kids = children(node)
  const op = q.slice(kids[0].from, kids[0].to).toLowerCase()
  if (!AGGREGATES.has(op)) throw new PromQLError(`aggregation ${JSON.stringify(op)} is not supported`)
  let grouping: { without: boolean; labels: string[] } | null = null
  const mod = kids.find((k) => k.name === 'AggregateModifier')
  if (mod) {
    const mk = children(mod)
    const labelsNode = mk.find((k) => k.name === 'GroupingLabels')
    grouping = {
      without: mk[0].name === 'Without',
      labels: labelsNode ? groupingLabels(labelsNode, q) : [],
    }
  }
  const body = kids.find((k) => k.name === 'FunctionCallBody')!
  const args = children(body).map((c) => build(c, q))
  const wantsParam = op === 'quantile' || op === 'topk' || op === 'bottomk'
  if (args.length !== (wantsParam ? 2 : 1))
    throw new PromQLError(`wrong number of arguments for aggregate expression provided, expected ${wantsParam ? 2 : 1}, got ${args.length}`)
  const expr = args[args.length - 1]
  if (typeOf(expr) !== 'vector')
    throw new PromQLError(`expected type instant vector in aggregation expression, got ${TYPE_NAME[typeOf(expr)]}`)
  const param = wantsParam ? args[0] : null
  if (param && typeOf(param) !== 'scalar')
    throw new PromQLError(`expected type scalar in aggregation parameter, got ${TYPE_NAME[typeOf(param)]}`)
  return { type: 'aggregate', op, grouping, param, expr }
}

function binary(node: SyntaxNode, q: string): Expr {
  const kids = children(node)
  const opNode = kids[1]
  const op = BINARY[opNode.name]
  if (!op) throw new PromQLError(`the ${JSON.stringify(q.slice(opNode.from, opNode.to))} operator is not supported`)
  let bool = false
  let matching: { on: boolean; labels: string[] } | null = null
  for (const k of kids.slice(2, -1)) {
    if (k.name === 'BoolModifier') bool = true
    else if (k.name === 'MatchingModifierClause') {
      const mk = children(k)
      if (mk.some((x) => x.name === 'GroupLeft' || x.name === 'GroupRight'))
        throw new PromQLError('group_left and group_right are not supported')
      const labelsNode = mk.find((x) => x.name === 'GroupingLabels')
      matching = { on: mk[0].name === 'On', labels: labelsNode ? groupingLabels(labelsNode, q) : [] }
    }
  }
  const lhs = build(kids[0], q)
  const rhs = build(kids[kids.length - 1], q)
  for (const side of [lhs, rhs]) {
    const t = typeOf(side)
    if (t !== 'scalar' && t !== 'vector') throw new PromQLError(`binary expression must contain only scalar and instant vector types`)
  }
  const scalars = typeOf(lhs) === 'scalar' && typeOf(rhs) === 'scalar'
  if (COMPARISON.has(op) && scalars && !bool) throw new PromQLError('comparisons between scalars must use BOOL modifier')
  if (bool && !COMPARISON.has(op)) throw new PromQLError('bool modifier can only be used on comparison operators')
  if (matching && (typeOf(lhs) !== 'vector' || typeOf(rhs) !== 'vector'))
    throw new PromQLError('vector matching only allowed between instant vectors')
  return { type: 'binary', op, lhs, rhs, bool, matching }
}
