/* global module, require */
/**
 * `npm run test:cluster`: three replicas of the built service behind nginx, with their own throwaway
 * PostgreSQL (and a streaming replica of it) and Redis. Kept out of `npm test` like the fault runs.
 * The test also drives the service's own ReadReplicas class against the real standby, so it takes the
 * main config's transforms (the Nest packages are ESM-only).
 */
const [unit] = require('../../jest.config.js').projects;

module.exports = {
  rootDir: '../..',
  displayName: 'cluster',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/cluster/**/*.cluster-spec.ts'],
  transform: unit.transform,
  transformIgnorePatterns: unit.transformIgnorePatterns,
  moduleNameMapper: unit.moduleNameMapper,
  moduleFileExtensions: unit.moduleFileExtensions,
  testTimeout: 300_000,
  verbose: true,
};
