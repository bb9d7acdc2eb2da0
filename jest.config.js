/**
 * Projects:
 * - `unit`: pure logic beside the code (`*.spec.ts`).
 * - `e2e`: the whole app over HTTP on embedded SQLite, in-process state (no Redis).
 * - `e2e-postgres`: the same suite on PostgreSQL with Redis, when DATABASE_URL and REDIS_URL are
 *   given; each test file makes its own database and key prefix, and skips with a message otherwise.
 */
const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.json');

// Captured before any setup file rewrites DATABASE_URL for its dialect.
process.env.SWITCHBOARD_TEST_POSTGRES_URL ??= /^postgres/.test(process.env.DATABASE_URL ?? '') ? process.env.DATABASE_URL : '';
process.env.SWITCHBOARD_TEST_REDIS_URL ??= process.env.REDIS_URL ?? '';

const moduleNameMapper = pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' });
const transform = { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', diagnostics: false }] };
const base = { rootDir: __dirname, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'], transform, moduleNameMapper };
const e2e = { ...base, testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] };

module.exports = {
  // Global, not per project: Jest 29 ignores testTimeout inside a project. Unit tests are fast anyway.
  testTimeout: 60000,
  projects: [
    {
      ...base,
      displayName: 'unit',
      setupFiles: ['<rootDir>/test/setup/unit.ts'],
      testMatch: ['<rootDir>/libs/**/*.spec.ts', '<rootDir>/apps/**/*.spec.ts', '<rootDir>/bench/**/*.spec.ts', '<rootDir>/scripts/**/*.spec.ts'],
    },
    { ...e2e, displayName: 'e2e', setupFiles: ['<rootDir>/test/setup/sqlite.ts'] },
    { ...e2e, displayName: 'e2e-postgres', setupFiles: ['<rootDir>/test/setup/postgres.ts'] },
  ],
};
