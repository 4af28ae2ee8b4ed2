import neostandard from 'neostandard'

export default [
  ...neostandard({
    ts: true,
    ignores: ['dist/**', 'coverage/**', '.tap/**', 'src/generated/**', 'node_modules/**', 'data/**']
  }),
  {
    rules: {
      // A Fastify reply is thenable; `void reply.header(...)` marks a deliberate non-await.
      'no-void': ['error', { allowAsStatement: true }]
    }
  }
]
