/**
 * One jest run for unit and e2e tests. e2e tests share one database prepared by global-setup:
 * TEST_DATABASE_URL when set, the embedded PGlite+PostGIS otherwise.
 * The Nest packages are ESM-only; swc turns them (and a few of their dependencies) into CommonJS.
 */
// On a Node.js older than package.json's engines: one line and exit 1 (scripts/lib/supported-node.cjs).
require('./scripts/lib/supported-node.cjs').exitOnUnsupportedNode();

const esmPackages = [
  '@nestjs',
  'file-type',
  'load-esm',
  'strtok3',
  'token-types',
  '@tokenizer',
  'uint8array-extras',
  '@borewit',
  'content-disposition',
  'cookie',
  '@electric-sql',
  '@mapbox',
  'pbf',
  'flatbush',
  'flatqueue',
];

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2023',
    },
    module: { type: 'commonjs' },
  },
];

const base = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j|mj)s$': swc },
  transformIgnorePatterns: [`node_modules/(?!(${esmPackages.join('|')})/)`],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'json'],
};

const unit = { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.spec.ts', '<rootDir>/src/**/*.spec.ts'] };
const e2e = {
  ...base,
  displayName: 'e2e',
  testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

// testTimeout is read from the root (a project-level value is ignored): e2e tests start apps and send megabytes.
module.exports = { projects: [unit, e2e], testTimeout: 60_000 };
