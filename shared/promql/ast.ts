// PromQL's expression tree as the evaluator reads it (docs/decisions.md §25), built by parse.ts from the
// Prometheus project's own grammar. Only the supported set has node types; anything else is refused while
// parsing, naming the construct.

export type MatchOp = '=' | '!=' | '=~' | '!~'

export interface Matcher {
  name: string
  op: MatchOp
  value: string
}

export type ValueType = 'scalar' | 'vector' | 'matrix' | 'string'

export type Expr =
  | { type: 'number'; value: number }
  | { type: 'string'; value: string }
  | { type: 'selector'; matchers: Matcher[]; offset: number; text: string }
  | { type: 'matrix'; selector: Extract<Expr, { type: 'selector' }>; range: number }
  | { type: 'call'; fn: string; args: Expr[] }
  | { type: 'aggregate'; op: string; grouping: { without: boolean; labels: string[] } | null; param: Expr | null; expr: Expr }
  | {
      type: 'binary'
      op: BinaryOp
      lhs: Expr
      rhs: Expr
      bool: boolean
      matching: { on: boolean; labels: string[] } | null
    }
  | { type: 'unary'; op: '-' | '+'; expr: Expr }

export type SelectorExpr = Extract<Expr, { type: 'selector' }>
export type MatrixExpr = Extract<Expr, { type: 'matrix' }>

export type BinaryOp = '+' | '-' | '*' | '/' | '%' | '^' | '==' | '!=' | '>' | '<' | '>=' | '<='

export const COMPARISON = new Set<BinaryOp>(['==', '!=', '>', '<', '>=', '<='])

/** The value type an expression yields, as Prometheus' parser types it. */
export function typeOf(e: Expr): ValueType {
  switch (e.type) {
    case 'number':
      return 'scalar'
    case 'string':
      return 'string'
    case 'selector':
      return 'vector'
    case 'matrix':
      return 'matrix'
    case 'call':
      return e.fn === 'time' || e.fn === 'scalar' ? 'scalar' : 'vector'
    case 'aggregate':
      return 'vector'
    case 'binary':
      return typeOf(e.lhs) === 'scalar' && typeOf(e.rhs) === 'scalar' ? 'scalar' : 'vector'
    case 'unary':
      return typeOf(e.expr)
  }
}
