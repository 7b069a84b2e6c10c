// The OpenAPI 3.1 document, generated from the route registry's zod schemas.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi'
import { SESSION_COOKIE } from '../shared/auth/sessions.js'

export function createRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry()
  registry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', description: 'An account API key' })
  registry.registerComponent('securitySchemes', 'basicAuth', {
    type: 'http',
    scheme: 'basic',
    description: 'An account API key as the password (any user name): the Prometheus and InfluxDB 1.x clients send it so',
  })
  registry.registerComponent('securitySchemes', 'sessionCookie', {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'Dashboard session. Writes (POST, PATCH, DELETE) must also send X-Service-CSRF with the csrf_token from sign-in.',
  })
  return registry
}

export function generateDocument(registry: OpenAPIRegistry, serverUrl: string) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Metrics ingest and query service',
      version: '1.0.0',
      description:
        'Record counters and gauges over HTTP, read them back, chart, export and alert on them. v1 routes use `Authorization: Bearer <API key>` or a dashboard session; errors are RFC 9457 problem details.',
    },
    servers: [{ url: serverUrl }],
  })
}
