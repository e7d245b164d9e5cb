/* global module */
/**
 * `npm run test:cluster`: three replicas of the built service behind nginx, with their own throwaway
 * PostgreSQL (and a streaming replica of it) and Redis. Kept out of `npm test` like the fault runs.
 */
module.exports = {
  rootDir: '../..',
  displayName: 'cluster',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/cluster/**/*.cluster-spec.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2023' }, module: { type: 'commonjs' } },
    ],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 300_000,
  verbose: true,
};
